/**
 * `Events`: the scoped event registry. One shared bus per server; `ctx.get(Events)`
 * returns a view bound to `ctx`, whose registrations belong to `scopeOf(ctx)` and are
 * owned by `ctx`.
 */
import { SystemContext } from '../context/system-context.js';
import type { Server } from '../context/server.js';
import { setProvider } from '../context/provider-hints.js';
import { describeValue } from '../util/describe-value.js';
import { errorText } from '../util/error-text.js';
import { EventBus, type Listener, type ListenerRecord } from './bus.js';
import type { EventArgs, EventListener, EventMap, FreeName, WaterfallArgs, WaterfallValue } from './event-map.js';
import { BUILTIN_EVENTS, reservedNameError } from './reserved.js';
import { ownedBy } from '../disposal/owned.js';
import { log } from '../observability/logger.js';
import { ContextView } from '../scope/context-view.js';

/** Options of {@link Events.on}. */
export interface ListenOptions {
  /** Put the listener before every listener registered so far (Node's `prependListener`). */
  readonly prepend?: boolean;
  /** A scoped listener normally hears only its own scope; `global: true` hears every scope. */
  readonly global?: boolean;
}

const buses = new WeakMap<Server, EventBus>();

/**
 * The events registry and the token it is installed under. `ctx.get(Events)` returns a
 * view bound to `ctx`:
 *
 * - `on(name, listener, { prepend?, global? })` registers a listener for the layer of
 *   `scopeOf(ctx)`, owned by `ctx` (removed when `ctx` is disposed, or by the returned
 *   disposer).
 * - `emit(scope, name, ...args)` notifies the unscoped listeners, `scope`'s listeners
 *   and every `{ global: true }` listener, in order (prepended first).
 * - `waterfall(scope, name, seed, ...args)` threads a value through the same listeners.
 *
 * `ToolsPlugin`, `PromptsPlugin` and `AgentsPlugin` install it (once, however many of
 * them are added).
 *
 * The three are typed by name through {@link EventMap} (the built-in events and the ones
 * an application adds by declaration merging); other names take `unknown` arguments.
 * Names under the reserved prefixes (`tools/`, `tool/`, `prompt/`, `prompts/`, `agent/`,
 * `agents/`, `session/`, `sessions/`, ignoring case, `.` and `:` read as `/`) must be a
 * built-in spelled exactly: any other is refused with a `TypeError` suggesting the closest
 * built-in (`unknown event "tool/pre-execute"; did you mean "tools/pre-execute"?`). The
 * event catalog (docs/events.md) says when each built-in fires.
 *
 * @example
 * ```ts
 * const events = agentCtx.get(Events);
 * const off = events.on('agent/created', (agent) => console.log('created', agent.id));
 * await appCtx.get(Events).emit(agent, 'agent/created', agent);
 * off();
 * ```
 */
export class Events extends ContextView<EventBus> {
  /**
   * Registers `listener` for event `name`. The registration belongs to this view's
   * scope and is owned by its context. Returns an idempotent disposer. The listener is
   * typed by `name`'s {@link EventMap} entry.
   *
   * @throws TypeError for a bad name (an unknown name under a reserved prefix included,
   *   with the closest built-in suggested), listener or options; ContextDisposedError when
   *   the view's context is disposed.
   */
  on<K extends string>(name: K, listener: EventListener<K>, options?: ListenOptions): () => void {
    assertName(name, 'Events.on(name, listener)');
    const reserved = reservedNameError(name, `Events.on("${name}")`);
    if (reserved !== undefined) throw reserved;
    if (typeof listener !== 'function') {
      throw new TypeError(`Events.on("${name}", listener): listener must be a function, got ${describeValue(listener)}.`);
    }
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw new TypeError(`Events.on("${name}", listener, options): options must be an object, got ${describeValue(options)}.`);
    }
    const prepend = options?.prepend === true;
    const global = options?.global === true;
    const ctx = this.context;
    if (ctx.isDisposed) ctx._live(`Events.on("${name}")`);
    const rec: ListenerRecord = { name, fn: listener as Listener, scope: ctx._scopeKey, global, ctx, removed: false };
    return ownedBy(ctx, this.registry.add(rec, prepend));
  }

  /**
   * Notifies the listeners of `name` that hear `scope` (unscoped listeners, `scope`'s own
   * listeners and `{ global: true }` listeners), in order, prepended first.
   *
   * Each listener is called with `args`; when it returns a promise, that promise is
   * awaited before the next listener is called (listeners that return nothing run
   * synchronously, one after another, inside the `emit` call). A listener that throws or
   * rejects does not stop the others: after every listener ran, the returned promise
   * rejects with that error (or with an `AggregateError` of all of them when several
   * failed). With no failure it resolves to `undefined`. An unknown name under a reserved
   * prefix rejects with a `TypeError` (nothing is called). `args` are typed by `name`'s
   * {@link EventMap} entry.
   *
   * @param scope - the scope the event is about (an agent, a scope key), or `undefined`
   *   for an unscoped event (heard by unscoped and global listeners only).
   */
  async emit<K extends string>(scope: object | undefined, name: K, ...args: EventArgs<K>): Promise<void> {
    this.context._live('Events.emit()');
    assertScope(scope, 'Events.emit(scope, name)');
    assertName(name, 'Events.emit(scope, name)');
    this.#assertKnown(name, 'Events.emit');
    const errors = await this.registry.emit(scope, name, args);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      throw new AggregateError(errors, `${errors.length} listeners of "${name}" failed: ${errors.map(errorText).join('; ')}`);
    }
  }

  /**
   * Threads `seed` through the listeners of `name` that hear `scope`, in order
   * (prepended first): each is called as `(value, ...args)` and the value it returns, or
   * resolves to, is passed to the next. Resolves to the last value (`seed` when no
   * listener hears it). A throwing or rejecting listener stops the chain and rejects; an
   * unknown name under a reserved prefix rejects with a `TypeError`. For a name in
   * {@link EventMap}, `seed` and `args` are typed by its listener's parameters.
   */
  waterfall<K extends keyof EventMap & string>(scope: object | undefined, name: K, seed: WaterfallValue<K>, ...args: WaterfallArgs<K>): Promise<WaterfallValue<K>>;
  /** A waterfall of an event that is not in {@link EventMap}: any seed, `unknown` arguments. */
  waterfall<T, K extends string = string>(scope: object | undefined, name: K & FreeName<K>, seed: T, ...args: unknown[]): Promise<T>;
  async waterfall(scope: object | undefined, name: string, seed: unknown, ...args: unknown[]): Promise<unknown> {
    this.context._live('Events.waterfall()');
    assertScope(scope, 'Events.waterfall(scope, name, seed)');
    assertName(name, 'Events.waterfall(scope, name, seed)');
    this.#assertKnown(name, 'Events.waterfall');
    return this.registry.waterfall(scope, name, seed, args);
  }

  /**
   * Refuses a name under a reserved prefix that is not a built-in event. Off the dispatch
   * hot path: a built-in name costs one `Set` lookup, and a name that has listeners was
   * already checked by `on` (one `Map` lookup); only other names are parsed.
   */
  #assertKnown(name: string, where: string): void {
    if (BUILTIN_EVENTS.has(name) || this.registry.hasListenersOf(name)) return;
    const reserved = reservedNameError(name, `${where}(scope, "${name}")`);
    if (reserved !== undefined) throw reserved;
  }

  /** Number of listeners of `name` that hear an event about `scope`. */
  listenerCount(name: string, scope?: object): number {
    this.context._live('Events.listenerCount()');
    return this.registry.count(name, scope);
  }
}

/**
 * @internal Installs the server's one shared `Events` (idempotent) and returns its bus.
 * `ToolsPlugin`, `PromptsPlugin` and `AgentsPlugin` call it from `build()`.
 */
export function installEvents(server: Server): EventBus {
  let bus = buses.get(server);
  if (bus !== undefined && server.hasGlobal(Events)) return bus;
  if (server.hasGlobal(Events)) {
    throw new TypeError('installEvents(): a global of token Events was inserted by hand; let the plugins install it.');
  }
  bus ??= new EventBus();
  const b = bus;
  b.report = (error, where) => log(server._logger, 'warn', `[polestar] ${where}`, error);
  server.insertGlobalView(Events, (ctx) => new Events(b, ctx));
  buses.set(server, b);
  server._leakProbes.add(() => b.liveScoped());
  return b;
}

/** @internal The bus of `server`, `undefined` when `Events` was not installed. */
export function eventBusOf(server: Server): EventBus | undefined {
  return buses.get(server);
}

function assertName(name: unknown, where: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`${where}: the event name must be a non-empty string, got ${describeValue(name)}.`);
  }
}

function assertScope(scope: unknown, where: string): void {
  if (scope !== undefined && (scope === null || (typeof scope !== 'object' && typeof scope !== 'function'))) {
    throw new TypeError(`${where}: scope must be a scope key (a non-null object or function) or undefined, got ${describeValue(scope)}.`);
  }
  if (scope instanceof SystemContext) {
    throw new TypeError(`${where}: scope is a context; pass its scope key instead: scopeOf(ctx).`);
  }
}

setProvider(Events, 'it is installed by ToolsPlugin, PromptsPlugin or AgentsPlugin (any one of them): call server.addPlugins(...) with one before server.finish()');
