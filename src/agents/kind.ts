/**
 * `AgentKind`: a named agent definition (a setup and an optional parent filter), and
 * `AgentSetup`, the function that composes an agent.
 */
import type { ParentFilter } from '../context/parent-filter.js';
import type { SystemContext } from '../context/system-context.js';

/** Composes an agent's world through its scoped context; awaited before publication. */
export type AgentSetup = (agentCtx: SystemContext) => void | Promise<void>;

/** What {@link Agents.define} takes besides the kind's name. */
export interface DefineAgentKindOptions {
  /**
   * Composes every agent of the kind through its scoped context, as `setup` does in
   * `agents.create`. Required.
   */
  readonly setup: AgentSetup;
  /**
   * The filter on what agents of the kind read from their owner (see
   * `CreateAgentOptions.parentFilter`). A `parentFilter` given where an agent is made
   * replaces it. Default: no filter.
   */
  readonly parentFilter?: ParentFilter;
}

/**
 * A named agent definition: its `setup` and optional `parentFilter`, made by
 * {@link Agents.define}. Pass it (or its name) as `kind` to `agents.create`,
 * `agents.runTask` or `sessions.open` instead of a `setup`; the agents made from it have
 * `agent.kind === kind.name`, and the name shows in traces, `inspect` and the messages that
 * name the agent.
 *
 * Kinds belong to a server: every `Agents` view of the server sees the same kinds, and a
 * name is defined once. The object is frozen.
 *
 * @example
 * ```ts
 * import { Agents, AgentsPlugin, Prompts, PromptsPlugin, Server } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new PromptsPlugin(), new AgentsPlugin());
 * await server.finish();
 * const agents = server.createContext().get(Agents);
 *
 * const researcher = agents.define('researcher', {
 *   setup: (agentCtx) => void agentCtx.get(Prompts).section({ name: 'persona', order: 0, text: 'You research.' }),
 * });
 * const { agent } = await agents.create({ id: 'r-1', kind: researcher }); // or kind: 'researcher'
 * expect(agent.kind).toBe('researcher');
 * await server.dispose();
 * ```
 */
export class AgentKind {
  /** The kind's name, unique on its server. */
  readonly name: string;
  /** Composes each agent of the kind (awaited before the agent is published). */
  readonly setup: AgentSetup;
  /** The filter on what agents of the kind read from their owner, unless the call making the agent gives one. */
  readonly parentFilter: ParentFilter | undefined;
  /** The brand: only kinds made by this class have it. */
  readonly #kind = true;

  /** @internal Use {@link Agents.define}. */
  constructor(name: string, setup: AgentSetup, parentFilter: ParentFilter | undefined) {
    this.name = name;
    this.setup = setup;
    this.parentFilter = parentFilter;
    Object.freeze(this);
  }

  /** How the kind reads in messages: `kind "<name>"`. */
  toString(): string {
    return `kind ${JSON.stringify(this.name)}`;
  }

  /** @internal True only for a genuine `AgentKind` (a private-field brand check; a proxy is not one). */
  static _is(value: unknown): value is AgentKind {
    return typeof value === 'object' && value !== null && #kind in value;
  }
}

