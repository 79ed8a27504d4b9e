/**
 * `Agents`: the agent registry's token and the view `ctx.get(Agents)` returns, bound to
 * the context it was resolved from (the owner of the agents it creates). `create` is one
 * owned transaction: reserve the id, mint the scope, await setup unpublished, publish,
 * announce — and roll everything back on any failure.
 */
import type { Agent, AgentHandle } from './agent.js';
import { createAgent } from './create-agent.js';
import type { CreateAgentOptions } from './create-agent-options.js';
import type { AgentRegistry } from './registry.js';
import { ContextView } from '../scope/context-view.js';

export type { AgentSetup, CreateAgentOptions } from './create-agent-options.js';

/**
 * The agents registry and the token it is installed under (by {@link AgentsPlugin}).
 * `ctx.get(Agents)` returns a view bound to `ctx`: agents it creates are owned by `ctx`
 * (disposing `ctx` disposes them). Ids are unique per server: `get(id)` and `list()`
 * read the one registry of the server from any view.
 *
 * @example
 * ```ts
 * import { Agents, AgentsPlugin, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
 * await server.finish();
 * const appCtx = server.createContext();
 *
 * const agents = appCtx.get(Agents);
 * const handle = await agents.create({ id: 'researcher', setup: async (agentCtx) => {
 *   agentCtx.get(Tools).register({
 *     name: 'search',
 *     description: 'Searches the web',
 *     parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
 *     execute: (args: { q: string }) => `results for ${args.q}`,
 *   });
 *   agentCtx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research.' });
 * }});
 * expect(agents.get('researcher')).toBe(handle.agent);
 * await handle.dispose();
 * expect(agents.get('researcher')).toBeUndefined();
 * await server.dispose();
 * ```
 */
export class Agents extends ContextView<AgentRegistry> {
  /**
   * Creates an agent as one owned transaction:
   *
   * 1. reads each field of `options` once, validates it, and reserves the id before any
   *    await (a concurrent create of the same id rejects with `already registered`);
   * 2. makes the agent and its scope context `agent.ctx` under the owner (this view's
   *    context, or `parent.ctx` for a subagent), gated by `parentFilter` when given, and
   *    makes the agent's own instance of every `per: 'agent'` local in it (a factory that
   *    fails rejects the create with an {@link AgentError} naming the token);
   * 3. awaits `setup(agent.ctx)` while the agent is unpublished (`get(id)` is `undefined`);
   * 4. publishes it in the registry, then emits `agent/created` (heard by unscoped, global
   *    and the agent's own listeners) with the agent as argument.
   *
   * Composition: an agent created while another agent is still composing (a subagent
   * created in its parent's `setup`, or any agent created through a view of a composing
   * agent's context) is composed with it: its own `create` resolves once its `setup`
   * finished, with `agent.state === 'composing'` and `get(id) === undefined`; after the
   * composing agent is published, each agent composed with it is published in creation
   * order (registry, then `agent/created`), all before the composing agent's `create`
   * resolves. A failure of the composing agent (its setup, or an `agent/created` listener
   * for it or for any agent composed with it) rolls the whole group back.
   *
   * If setup throws, the owner (or parent) is disposed meanwhile, or an `agent/created`
   * listener throws, the agent is disposed (every registration undone; a published agent
   * also announces `agent/disposed`), the id is free again, and the promise rejects with
   * an {@link AgentError} naming the agent, whose `cause` is the original error.
   *
   * Every failure is a rejection, never a synchronous throw: malformed options (also
   * hostile ones: a throwing getter, a revoked proxy, a proxy posing as an `Agent`) reject
   * with a `TypeError` naming the field and leave nothing behind; a disposed view rejects
   * with `ContextDisposedError`.
   */
  create(options: CreateAgentOptions): Promise<AgentHandle> {
    return createAgent(this, options);
  }

  /** @internal The registry shared by every view of the server (for the create transaction). */
  get _registry(): AgentRegistry {
    return this.registry;
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

