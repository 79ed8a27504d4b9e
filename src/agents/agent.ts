/**
 * `Agent`: a live agent, its own registration scope key, and the one memoized teardown
 * every disposal path converges on. `AgentHandle`: what `agents.create()` resolves to.
 */
import type { SystemContext } from '../context/system-context.js';
import { throwCollected } from '../lifetime/errors.js';
import type { ParentFilter } from '../context/parent-filter.js';
import { scopeContext } from '../scope/scope.js';
import type { Composition } from './composition.js';
import type { EventBus } from '../events/bus.js';
import type { ownClass } from '../system/own-class.js';
import { agentChannel, trace, type AgentTraceContext, type Mutable } from '../observability/channels.js';

/**
 * Where an agent is in its lifecycle:
 * - `composing`: `setup` is running, or (for an agent created during another agent's
 *   setup) it finished and waits to be published with that agent; the agent is not
 *   published (`agents.get(id)` is `undefined`) but its id is reserved.
 * - `published`: in the registry; `agent/created` was (or is being) emitted.
 * - `disposed`: its teardown started (from its handle, its context, its owner or its
 *   parent agent). It is no longer in the registry.
 */
export type AgentState = 'composing' | 'published' | 'disposed';

/**
 * @internal What an agent uses of the registry holding its id (the server's
 * `AgentRegistry`): leaving it when its teardown starts, and the server's event bus.
 */
export interface AgentIdHolder {
  leave(agent: Agent): void;
  readonly bus: EventBus;
}

/**
 * A live agent. The agent object is its own scope key: `scopeOf(agent.ctx) === agent`,
 * so every tool, prompt section, restriction, guard or listener registered through
 * `agent.ctx` (or a context below it) belongs to this agent's layer and is undone when
 * the agent is disposed.
 *
 * `agent.ctx` is a child of its owner (the context the `Agents` view was resolved from,
 * or the parent agent's context for a subagent), so `Res` reaches the owner's resources.
 * It also holds the agent itself as a local under the `Agent` token, so a system running
 * in any session or turn below it can ask for `Res(Agent)`.
 *
 * Agents are made by {@link Agents.create}; the constructor is internal.
 */
export class Agent {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** The id, unique among the live agents of a server. */
  readonly id: string;
  /** The parent agent of a subagent; `undefined` for a top-level agent. */
  readonly parent: Agent | undefined;
  /** The agent's scope context: `scopeOf(agent.ctx) === agent`. */
  readonly ctx: SystemContext;
  readonly #kind: string | undefined;
  #state: AgentState = 'composing';
  /** The registry holding the id; `undefined` for a detached agent (`fakeAgent`). */
  readonly #registry: AgentIdHolder | undefined;
  #onAbort: (() => void) | undefined;
  /**
   * @internal The composition group this agent is published with while it is composing
   * (its own, when it is the group's root); cleared once the group is published.
   */
  _composition: Composition<Agent> | undefined;

  /**
   * @internal True only for a genuine `Agent` made by this module: a brand check on a
   * private field, which never runs a proxy trap (a proxy of an agent is not an agent).
   */
  static _is(value: unknown): value is Agent {
    return typeof value === 'object' && value !== null && #state in value;
  }

  /**
   * @internal The agent whose context is `ctx` or the nearest ancestor of it (the nearest
   * `Agent` local), if any: the agent work done through `ctx` is for.
   */
  static _nearest(ctx: SystemContext): Agent | undefined {
    for (let c: SystemContext | undefined = ctx; c !== undefined; c = c.parent) {
      const e = c._local(Agent);
      if (e !== undefined) return e.value as Agent;
    }
    return undefined;
  }

  /**
   * @internal Use `ctx.get(Agents).create(...)` (or `fakeAgent` from the testing kit, which
   * passes no registry: a detached agent, published from the start, in no registry).
   */
  constructor(registry: AgentIdHolder | undefined, id: string, parent: Agent | undefined, owner: SystemContext, parentFilter?: ParentFilter, kind?: string) {
    this.#registry = registry;
    this.id = id;
    this.#kind = kind;
    this.parent = parent;
    const ctx = scopeContext(owner, this, parentFilter === undefined ? undefined : { parentFilter });
    this.ctx = ctx;
    // Every path that disposes the agent's context (the handle, `scope.dispose()`, the
    // owner's or the parent's disposal, `await using`) is the context's one memoized
    // disposal, whose first step leaves the registry and announces `agent/disposed`
    // before the scope (and every scoped registration) is unwound.
    ctx._prelude = () => this.#announceEnd();
    ctx._setLocal(Agent, this);
    if (registry === undefined) this.#state = 'published';
  }

  /**
   * The name of the kind the agent was made from (`agents.create({ kind })`,
   * `agents.runTask({ kind })`, a durable session opened with a kind); `undefined` for an
   * agent made with its own `setup` (or none).
   */
  get kind(): string | undefined {
    return this.#kind;
  }

  /** How the agent reads in messages: `agent "<id>"`, or `agent "<id>" (kind "<kind>")` for an agent made from a kind. */
  toString(): string {
    return this.#kind === undefined ? `agent "${this.id}"` : `agent "${this.id}" (kind ${JSON.stringify(this.#kind)})`;
  }

  /** Where the agent is in its lifecycle (`disposed` as soon as its context's disposal started). */
  get state(): AgentState {
    return this.#state !== 'disposed' && this.ctx.isDisposed ? 'disposed' : this.#state;
  }

  /** True once the agent's teardown (or its context's disposal) started. */
  get isDisposed(): boolean {
    return this.state === 'disposed';
  }

  /** @internal Marks the agent published (the registry calls it). */
  _markPublished(): void {
    if (this.#state === 'composing') this.#state = 'published';
  }

  /** @internal Called once when a teardown starts before publication. */
  _onAbort(fn: () => void): void {
    this.#onAbort = fn;
  }

  /**
   * @internal The one memoized teardown: disposing `agent.ctx`. Its first step (the
   * context's prelude) leaves the registry (or releases the reserved id) and announces
   * `agent/disposed` when the agent was published; then the scope is disposed. Errors
   * (from `agent/disposed` listeners and from the scope's cleanups) are collected into
   * one AggregateError after everything ran.
   */
  _dispose(): Promise<void> {
    return this.ctx.dispose();
  }

  /**
   * Publishes this teardown as one `polestar:agent` `dispose` trace: from now (its first
   * step) until the agent's context is disposed. Asking the context for its disposal here
   * joins the one running (it is memoized before this step runs).
   */
  #traceDispose(): void {
    const context: Mutable<AgentTraceContext> = { op: 'dispose', agentId: this.id };
    if (this.#kind !== undefined) context.kind = this.#kind;
    trace(agentChannel, context, this.ctx.server, () => this.ctx.dispose()).catch(noop);
  }

  /** Synchronous (no promise) when no `agent/disposed` listener hears it. */
  #announceEnd(): Promise<void> | undefined {
    if (agentChannel.hasSubscribers) this.#traceDispose();
    const was = this.#state;
    this.#state = 'disposed';
    const registry = this.#registry;
    registry?.leave(this);
    const abort = this.#onAbort;
    this.#onAbort = undefined;
    abort?.();
    if (was !== 'published' || registry === undefined || !registry.bus.hasListeners('agent/disposed', this)) return undefined;
    return registry.bus.emit(this, 'agent/disposed', [this]).then((errors) => throwCollected(errors, this.toString()));
  }
}

/** Does nothing (a traced disposal's rejection is the disposal's own, reported where it is awaited). */
function noop(): void {}

/**
 * What `agents.create()` resolves to: the published agent and its disposer.
 *
 * `dispose()` is memoized (repeated and racing calls share one promise, and so do the
 * owner's and the parent's disposal): it removes the agent from the registry, emits
 * `agent/disposed`, then disposes the agent's scope, which disposes its sessions, turns
 * and subagents and undoes every scoped registration.
 */
export class AgentHandle implements AsyncDisposable {
  /** The agent. */
  readonly agent: Agent;

  /** @internal Made by `agents.create()`. */
  constructor(agent: Agent) {
    this.agent = agent;
  }

  /** Disposes the agent (memoized; see {@link AgentHandle}). */
  dispose(): Promise<void> {
    return this.agent._dispose();
  }

  /** Same as {@link AgentHandle.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
