/**
 * `Agents`: the agent registry's token and the view `ctx.get(Agents)` returns, bound to
 * the context it was resolved from (the owner of the agents it creates). `create` is one
 * owned transaction: reserve the id, mint the scope, await setup unpublished, publish,
 * announce — and roll everything back on any failure.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { Agent, AgentHandle } from './agent.js';
import { AgentError } from './errors.js';
import type { AgentRegistry } from './registry.js';
import { ContextView } from '../scope/context-view.js';

/** Composes an agent's world through its scoped context; awaited before publication. */
export type AgentSetup = (agentCtx: SystemContext) => void | Promise<void>;

/** What {@link Agents.create} takes. */
export interface CreateAgentOptions {
  /** The agent's id: a non-empty string, unique among the live agents of the server. */
  readonly id: string;
  /**
   * Registers the agent's tools, prompt sections, restrictions, guards and listeners
   * through `agentCtx` (whose scope is the agent). Awaited while the agent is
   * unpublished; if it throws, everything it registered is undone. Optional: an agent
   * without setup sees the global layer only.
   */
  readonly setup?: AgentSetup;
  /**
   * Makes a subagent: owned by `parent` (disposed with it, its context is a child of
   * `parent.ctx`) but with a flat view: global plus its own layer, nothing from the
   * parent's layer.
   */
  readonly parent?: Agent;
}

/**
 * The agents registry and the token it is installed under (by {@link AgentsPlugin}).
 * `ctx.get(Agents)` returns a view bound to `ctx`: agents it creates are owned by `ctx`
 * (disposing `ctx` disposes them). Ids are unique per server: `get(id)` and `list()`
 * read the one registry of the server from any view.
 *
 * @example
 * ```ts
 * const agents = appCtx.get(Agents);
 * const handle = await agents.create({ id: 'researcher', setup: async (agentCtx) => {
 *   agentCtx.get(Tools).register(searchTool);
 *   agentCtx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research.' });
 * }});
 * agents.get('researcher') === handle.agent; // true
 * await handle.dispose();
 * ```
 */
export class Agents extends ContextView<AgentRegistry> {
  /**
   * Creates an agent as one owned transaction:
   *
   * 1. validates `options` (each field read once) and reserves the id before any await
   *    (a concurrent create of the same id rejects with `already registered`);
   * 2. makes the agent and its scope context `agent.ctx` under the owner (this view's
   *    context, or `parent.ctx` for a subagent);
   * 3. awaits `setup(agent.ctx)` while the agent is unpublished (`get(id)` is `undefined`);
   * 4. publishes it in the registry, then emits `agent/created` (heard by unscoped, global
   *    and the agent's own listeners) with the agent as argument.
   *
   * If setup throws, the owner (or parent) is disposed meanwhile, or an `agent/created`
   * listener throws, the agent is disposed (every registration undone; a published agent
   * also announces `agent/disposed`), the id is free again, and the promise rejects with
   * an {@link AgentError} naming the agent, whose `cause` is the original error.
   *
   * @throws TypeError (as a rejection) for malformed options.
   */
  async create(options: CreateAgentOptions): Promise<AgentHandle> {
    // ---- snapshot and validate, synchronously
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`Agents.create(options): options must be an object { id, setup?, parent? }, got ${describeValue(options)}.`);
    }
    const id: unknown = options.id;
    const setup: unknown = options.setup;
    const parent: unknown = options.parent;
    if (typeof id !== 'string' || id.length === 0) {
      throw new TypeError(`Agents.create({ id }): id must be a non-empty string, got ${describeValue(id)}.`);
    }
    if (setup !== undefined && typeof setup !== 'function') {
      throw new TypeError(
        `Agents.create({ id: "${id}", setup }): setup must be a function (agentCtx) => void | Promise<void>, got ${describeValue(setup)}.`,
      );
    }
    if (parent !== undefined) {
      if (!(parent instanceof Agent)) {
        throw new TypeError(
          `Agents.create({ id: "${id}", parent }): parent must be an Agent (handle.agent or agents.get(id)), got ${describeValue(parent)}.`,
        );
      }
      if (parent.ctx.server !== this.context.server) {
        throw new AgentError(id, `Agents.create({ id: "${id}", parent }): parent agent "${parent.id}" belongs to another server.`);
      }
      if (parent.isDisposed) {
        throw new AgentError(id, `Agents.create({ id: "${id}", parent }): parent agent "${parent.id}" is disposed; a subagent needs a live parent.`);
      }
    }
    this.context._live(`Agents.create({ id: "${id}" })`);
    const registry = this.registry;
    const holder = registry.holder(id);
    if (holder !== undefined && !holder.isDisposed) {
      const where = holder.state === 'composing' ? 'an agent with that id is still running its setup' : 'a live agent has that id';
      throw new AgentError(id, `agent "${id}" is already registered (${where}); dispose it first or choose another id.`);
    }

    // ---- reserve, mint the scope, install the teardown (no await so far)
    const owner = parent === undefined ? this.context : parent.ctx;
    const agent = new Agent(registry, id, parent, owner);
    registry.reserve(agent);
    let abort!: () => void;
    const aborted = new Promise<'aborted'>((resolve) => {
      abort = () => resolve('aborted');
    });
    agent._onAbort(abort);

    // ---- setup, unpublished
    let setupRun: Promise<'done'>;
    try {
      setupRun = Promise.resolve((setup as AgentSetup | undefined)?.(agent.ctx)).then(() => 'done' as const);
    } catch (err) {
      setupRun = Promise.reject(err);
    }
    setupRun.catch(() => undefined);
    let outcome: 'done' | 'aborted';
    try {
      outcome = await Promise.race([setupRun, aborted]);
    } catch (err) {
      throw await rollback(
        agent,
        new AgentError(id, `agent "${id}": setup failed: ${message(err)}; everything it registered was undone and the id is free again.`, {
          cause: err,
        }),
      );
    }
    if (outcome === 'aborted' || agent.isDisposed) {
      throw await rollback(
        agent,
        new AgentError(id, `agent "${id}" was disposed while its setup was running (${ownerWord(parent)}, or the agent's context, was disposed); nothing was published.`),
      );
    }

    // ---- publish, then announce
    registry.publish(agent);
    const errors = await registry.bus.emit(agent, 'agent/created', [agent]);
    if (errors.length > 0) {
      const cause = errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} agent/created listeners failed`);
      throw await rollback(
        agent,
        new AgentError(id, `agent "${id}": an agent/created listener failed: ${message(cause)}; the agent was disposed again.`, { cause }),
      );
    }
    if (agent.isDisposed) {
      throw await rollback(agent, new AgentError(id, `agent "${id}" was disposed while agent/created was being emitted (${ownerWord(parent)}, or the agent's context, was disposed).`));
    }
    return new AgentHandle(agent);
  }

  /** The published, live agent with this id, or `undefined` (also while its setup runs). */
  get(id: string): Agent | undefined {
    return this.registry.get(id);
  }

  /** Whether a published, live agent has this id. */
  has(id: string): boolean {
    return this.registry.get(id) !== undefined;
  }

  /** Every published, live agent of the server, oldest first. */
  list(): Agent[] {
    return this.registry.list();
  }
}

/** Disposes the half-made agent and returns the error to reject with. */
async function rollback(agent: Agent, failure: AgentError): Promise<AgentError> {
  try {
    await agent._dispose();
    return failure;
  } catch (rollbackError) {
    return new AgentError(failure.agentId, `${failure.message} Rolling back also failed: ${message(rollbackError)}`, {
      cause: failure.cause,
      rollbackError,
    });
  }
}

function ownerWord(parent: Agent | undefined): string {
  return parent === undefined ? 'its owner context' : `its parent agent "${parent.id}"`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
