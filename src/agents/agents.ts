/**
 * `Agents`: the agent registry's token and the view `ctx.get(Agents)` returns, bound to
 * the context it was resolved from (the owner of the agents it creates). `create` is one
 * owned transaction: reserve the id, mint the scope, await setup unpublished, publish,
 * announce — and roll everything back on any failure.
 */
import type { Agent, AgentHandle } from './agent.js';
import { createAgent } from './create-agent.js';
import type { CreateAgentOptions } from './create-agent-options.js';
import type { AgentKind, DefineAgentKindOptions } from './kind.js';
import { defineKind } from './kinds.js';
import type { AgentRegistry } from './registry.js';
import { runTask, type RunTaskOptions, type StructuredRunTaskOptions, type StructuredTaskResult } from './run-task.js';
import { ContextView } from '../scope/context-view.js';

export type { AgentSetup, CreateAgentOptions } from './create-agent-options.js';
export type { DefineAgentKindOptions } from './kind.js';
export type { RunTaskOptions, StructuredRunTaskOptions, StructuredTaskFn, StructuredTaskResult, TaskFn } from './run-task.js';

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

  /**
   * Defines an agent kind on this view's server: a name for a `setup` (and an optional
   * `parentFilter`) that `create`, `runTask` and durable sessions take as `kind` instead of
   * a `setup`. Every `Agents` view of the server sees it. Synchronous: returns the frozen
   * {@link AgentKind}.
   *
   * @param kind - the kind's name: a non-empty string of at most 1024 characters without
   *   NUL characters, not yet defined on this server.
   * @param options - `setup` (required) composes each agent of the kind; `parentFilter`
   *   applies to each of them unless the call making the agent gives its own.
   * @throws TypeError naming the option for a bad name, a `setup` that is not a function or a
   *   `parentFilter` not made by `ParentFilter`, and naming the kind when it is already defined.
   *
   * @example
   * ```ts
   * import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin } from 'polestar-di';
   *
   * const server = new Server().addPlugins(new ToolsPlugin(), new AgentsPlugin());
   * await server.finish();
   * const agents = server.createContext().get(Agents);
   *
   * const researcher = agents.define('researcher', {
   *   setup: (agentCtx) => void agentCtx.get(Tools).register({
   *     name: 'search', description: 'Searches the web', parameters: { type: 'object' }, execute: () => 'results',
   *   }),
   * });
   * const { agent } = await agents.create({ id: 'r-1', kind: 'researcher' }); // or kind: researcher
   * expect(agent.kind).toBe(researcher.name);
   * expect(String(agent)).toBe('agent "r-1" (kind "researcher")');
   * expect(() => agents.define('researcher', { setup: () => undefined })).toThrow(/already defined/);
   * await server.dispose();
   * ```
   */
  define(kind: string, options: DefineAgentKindOptions): AgentKind {
    return defineKind(this.registry, kind, options);
  }

  /**
   * Runs one task on a subagent of its own: makes the subagent (of `parent`, else owned by
   * this view's context, as {@link Agents.create} makes it, from `kind` or `setup`), calls
   * `fn(agent)`, disposes the subagent when `fn` settles, and resolves with what `fn`
   * returned. The subagent's id is `id`, by default `<kind>-<random UUID>` (for a task made
   * from a kind) or `task-<random UUID>`.
   *
   * - `fn` throws or rejects: the promise rejects with that error, after the subagent was
   *   disposed (a disposal failure is then dropped);
   * - `fn` succeeds but disposing the subagent fails: the promise rejects with the disposal's
   *   error;
   * - the owner (the `parent` agent, or this view's context) is disposed before `fn`
   *   settles: the subagent is disposed with it and the promise rejects with the owner's
   *   `ContextDisposedError` at once, whether `fn` is still running or settles later (its
   *   outcome is then ignored). An owner already disposed at the call rejects the same way.
   *
   * Every failure is a rejection: a missing or non-function `fn` is a `TypeError`, and the
   * other options are checked (and rejected) as `create` checks them.
   *
   * With `output` (a tool-parameter schema, or `{ schema, toolName?, instruction? }`), the
   * subagent gets a capture tool and its protected instruction through its own scope, `fn`
   * gets `(agent, task)`, and the promise resolves to `{ value, result }`: the value the
   * capture committed and what `fn` returned; it rejects with `AgentError` code
   * `NO_STRUCTURED_RESULT` when `fn` settles without a committed capture (see the guide's
   * "Structured results").
   *
   * @example
   * ```ts
   * import { Agents, AgentsPlugin, Server, openSession } from 'polestar-di';
   *
   * const server = new Server().addPlugins(new AgentsPlugin());
   * await server.finish();
   * const agents = server.createContext().get(Agents);
   * const { agent: lead } = await agents.create({ id: 'lead' });
   * agents.define('summarizer', { setup: () => undefined });
   *
   * let taskId = '';
   * const summary = await agents.runTask({ parent: lead, kind: 'summarizer', fn: async (agent) => {
   *   taskId = agent.id; // summarizer-<random UUID>
   *   const session = openSession(agent);
   *   return session.turn(() => 'a short summary'); // a model loop, in a real task
   * } });
   * expect(summary).toBe('a short summary');
   * expect(agents.get(taskId)).toBeUndefined(); // the subagent is already disposed
   * await server.dispose();
   * ```
   */
  runTask<V, R>(options: StructuredRunTaskOptions<V, R>): Promise<StructuredTaskResult<V, Awaited<R>>>;
  /** Runs a one-task subagent without `output`: resolves to what `fn` returned (see the overload above). */
  runTask<R>(options: RunTaskOptions<R>): Promise<Awaited<R>>;
  runTask(options: RunTaskOptions<unknown> | StructuredRunTaskOptions<unknown, unknown>): Promise<unknown> {
    return runTask(this, options as RunTaskOptions<unknown>);
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

