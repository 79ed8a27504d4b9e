/**
 * Server: the root of the tree. Holds the globals (values and the inversify container),
 * the local factories every root context instantiates, and the plugins.
 */
import { Container } from 'inversify';
import { ParamError, ServerBuildError, ServerError } from './errors.js';
import { assertMayBeGlobal, assertMayBeLocal } from './markers.js';
import { orderPlugins, type Plugin } from './plugin.js';
import { providerOf } from './provider-hints.js';
import { ResourceEntry } from './resource-entry.js';
import { SystemContext } from './system-context.js';
import { assertToken, describeValue, nameOf, tokenOfValue, type Token } from './token.js';
import { disposeValue, isDisposable, settle, throwCollected } from '../disposal/ownership.js';

type Phase = 'open' | 'finishing' | 'ready' | 'sealed' | 'failed' | 'disposed';

/**
 * The server: globals shared by every context, local factories run once per root
 * context, plugins, and the inversify `container` of the globals.
 *
 * Lifecycle: configure (insertGlobal, registerLocal, addPlugins) → `await finish()` →
 * `createContext()` as often as needed → `await dispose()`.
 */
export class Server implements AsyncDisposable {
  /**
   * The inversify container of the globals. A class bound here is a global that
   * `ctx.get()` / `Res` resolve, with inversify's scopes and activation hooks intact.
   * Values inserted with `insertGlobal` are bound here too (as dynamic values), so
   * classes bound here can `@inject` them.
   */
  readonly container: Container;
  /** @internal Inserted globals, oldest first. */
  readonly _globals = new Map<Token, ResourceEntry>();
  /** @internal Factories of the locals every root context gets. */
  readonly _localFactories = new Map<Token, () => unknown>();
  /** @internal Live root contexts, oldest first. */
  readonly _roots = new Set<SystemContext>();
  /**
   * @internal Leak probes: each registry adds one that lists its live scoped
   * registrations (used by `assertNoLeaks`).
   */
  readonly _leakProbes = new Set<() => string[]>();
  #plugins: Plugin[] = [];
  #built: Plugin[] = [];
  #phase: Phase = 'open';
  #finishing: Promise<void> | undefined;
  #disposal: Promise<void> | undefined;
  #bound = new Set<Token>();
  #sealed = false;

  /** Makes a server with an empty inversify container. */
  constructor() {
    this.container = new Container();
  }

  /** True after `finish()` completed (and still true once the server is disposed). */
  get isFinished(): boolean {
    return this.#sealed;
  }

  /** True once `dispose()` was called. */
  get isDisposed(): boolean {
    return this.#phase === 'disposed';
  }

  #assertOpen(call: string): void {
    if (this.#phase === 'disposed') {
      throw new ServerError(
        `${call} was called on a disposed server${this.#sealed ? ' (it was finished, then disposed)' : ''}; create a new Server.`,
      );
    }
    if (this.#phase === 'failed') {
      throw new ServerError(
        `${call} was called on a server whose finish() failed; it can not be finished again. Fix the failure and configure a new Server.`,
      );
    }
    if (this.#phase === 'sealed') {
      throw new ServerError(
        `${call} was called after finish(): the server is finished and its globals, locals and plugins are sealed. ` +
          `Configure the server before awaiting finish(), or keep per-context state in ctx.insert(...).`,
      );
    }
  }

  // ---------------------------------------------------------------- globals

  /** Inserts a global whose token is `value.constructor`; returns the previous global. */
  insertGlobal<T extends object>(value: T): T | undefined;
  /** Inserts a global under an explicit token; returns the previous global. */
  insertGlobal<T>(token: Token<T>, value: NoInfer<T>): T | undefined;
  insertGlobal(a: unknown, b?: unknown): unknown {
    this.#assertOpen('insertGlobal()');
    let t: Token;
    let value: unknown;
    if (arguments.length < 2) {
      t = tokenOfValue(a, 'insertGlobal(value)', 'server.insertGlobal(MY_TOKEN, value)');
      value = a;
    } else {
      assertToken(a, 'insertGlobal(token, value)');
      t = a;
      value = b;
    }
    assertMayBeGlobal(t, `insertGlobal(${nameOf(t)})`);
    if (value === undefined) throw new TypeError(`insertGlobal(${nameOf(t)}, undefined): a global can not be undefined.`);
    return this.#setGlobal(t, new ResourceEntry(value, undefined));
  }

  /**
   * Inserts a contextual global: `ctx.get(token)` returns `view(ctx)`, made once per
   * context that asks and bound to it. This is how registries such as `Tools` hand out
   * views that know the context they were resolved from. Returns `true` when it was
   * installed, `false` when a global of that token already existed (nothing changes).
   */
  insertGlobalView<T>(token: Token<T>, view: (ctx: SystemContext) => NoInfer<T>): boolean {
    this.#assertOpen('insertGlobalView()');
    assertToken(token, 'insertGlobalView(token, view)');
    assertMayBeGlobal(token, `insertGlobalView(${nameOf(token)})`);
    if (typeof view !== 'function') throw new TypeError(`insertGlobalView(${nameOf(token)}, view): view must be a function.`);
    if (this._globals.has(token)) return false;
    this.#setGlobal(token, new ResourceEntry(undefined, undefined, view));
    return true;
  }

  #setGlobal(t: Token, entry: ResourceEntry): unknown {
    const prev = this._globals.get(t);
    this._globals.delete(t);
    this._globals.set(t, entry);
    if (entry.view === undefined && !this.#bound.has(t) && !this.container.isBound(t)) {
      this.#bound.add(t);
      this.container.bind(t).toDynamicValue(() => {
        const e = this._globals.get(t);
        if (e === undefined) throw new ParamError('ResourceNotFound', t, 'the global was removed');
        return e.view === undefined ? e.value : undefined;
      });
    }
    return prev?.view === undefined ? prev?.value : undefined;
  }

  /** The global of `token` (inserted, or bound in `container`); throws `ParamError` when missing. */
  getGlobal<T>(token: Token<T>): T {
    const e = this._globals.get(token);
    if (e !== undefined && e.view === undefined) return e.value as T;
    assertToken(token, 'getGlobal(token)');
    if (e === undefined && this._containerHas(token)) return this._containerGet(token) as T;
    throw new ParamError(
      'ResourceNotFound',
      token,
      e ? 'it is a contextual global: resolve it from a context with ctx.get(...)' : `no global of that token; ${providerOf(token) ?? 'insert it with server.insertGlobal(...)'}`,
    );
  }

  /** Whether a global of `token` exists (inserted, or bound in `container`). */
  hasGlobal(token: Token): boolean {
    if (this._globals.has(token)) return true;
    assertToken(token, 'hasGlobal(token)');
    return this._containerHas(token);
  }

  /** @internal Whether `container` can resolve `t` (only consulted when no entry exists). */
  _containerHas(t: Token): boolean {
    return !this.#bound.has(t) && this.container.isBound(t);
  }

  /** @internal Resolves `t` in the globals' container. */
  _containerGet(t: Token): unknown {
    const v: unknown = this.container.get(t as never);
    if (v !== null && typeof v === 'object') this._containerValues.add(v);
    return v;
  }

  /**
   * @internal Objects handed out by `container` through contexts: owned by the server
   * (and its inversify deactivation), so a context holding one as a local never disposes it.
   */
  readonly _containerValues = new WeakSet<object>();

  // ---------------------------------------------------------------- locals

  /**
   * Registers a local every root context (made by `createContext()`) gets its own fresh
   * instance of. The factory runs once per root context; children get none (they read
   * the root's through `Res`). The factory defaults to `() => new token()`.
   */
  registerLocal<T>(token: Token<T>, factory?: () => NoInfer<T>): void {
    this.#assertOpen('registerLocal()');
    assertToken(token, 'registerLocal(token, factory?)');
    assertMayBeLocal(token, `registerLocal(${nameOf(token)})`);
    let f: () => unknown;
    if (factory === undefined) {
      if (typeof token !== 'function') {
        throw new TypeError(
          `registerLocal(${nameOf(token)}): a token() symbol has no constructor; pass a factory: server.registerLocal(${nameOf(token)}, () => value).`,
        );
      }
      const cls = token as unknown as new () => T;
      f = () => new cls();
    } else if (typeof factory !== 'function') {
      throw new TypeError(`registerLocal(${nameOf(token)}, factory): factory must be a function, got ${describeValue(factory)}.`);
    } else {
      f = factory;
    }
    if (this._localFactories.has(token)) {
      throw new ServerError(`registerLocal(${nameOf(token)}): a local factory for ${nameOf(token)} is already registered.`);
    }
    this._localFactories.set(token, f);
  }

  // ---------------------------------------------------------------- plugins

  /** Adds plugins; throws `Plugin '<id>' was already added.` on a duplicate id. */
  addPlugins(...plugins: Plugin[]): this {
    this.#assertOpen('addPlugins()');
    if (this.#phase !== 'open') {
      throw new ServerError(
        'addPlugins() was called while finish() is running: the plugin list is fixed when finish() starts, so this plugin ' +
          'would never be built. Add every plugin before awaiting finish().',
      );
    }
    const seen = new Set(this.#plugins.map((p) => p.id));
    for (const p of plugins) {
      if (p === null || typeof p !== 'object' || typeof p.id !== 'string' || typeof p.build !== 'function') {
        throw new TypeError(`addPlugins(): ${describeValue(p)} is not a plugin ({ id: string, build(server) }).`);
      }
      if (seen.has(p.id)) throw new ServerError(`Plugin '${p.id}' was already added.`);
      seen.add(p.id);
    }
    this.#plugins.push(...plugins);
    return this;
  }

  /** Whether a plugin with this id was added. */
  hasPlugin(id: string): boolean {
    return this.#plugins.some((p) => p.id === id);
  }

  /**
   * Builds the plugins in dependency order, awaits every `ready` in the same order one
   * after another, then seals the server. Rejects with `ServerBuildError` for a missing
   * dependency or a cycle; a second call rejects (`already called`).
   */
  finish(): Promise<void> {
    if (this.#finishing !== undefined || this.#phase === 'disposed') {
      return Promise.reject(new ServerError('finish() was already called on this server; it can only be called once.'));
    }
    this.#phase = 'finishing';
    this.#finishing = this.#finish().catch((err: unknown) => {
      // A failed build or ready() leaves plugins half made: no context may be created.
      if (this.#phase !== 'disposed') this.#phase = 'failed';
      throw err;
    });
    return this.#finishing;
  }

  /** Stops `finish()` when `dispose()` was called while it awaited a plugin. */
  #assertNotDisposedWhileFinishing(next: string): void {
    if (this.#phase === 'disposed') {
      throw new ServerError(`finish() was stopped before ${next}: dispose() was called on the server while finish() was running.`);
    }
  }

  async #finish(): Promise<void> {
    const ordered = orderPlugins(this.#plugins);
    for (const p of ordered) {
      this.#assertNotDisposedWhileFinishing(`building plugin '${p.id}'`);
      try {
        await p.build(this);
      } catch (err) {
        throw new ServerBuildError(`Plugin '${p.id}' failed to build: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      this.#built.push(p);
    }
    this.#assertNotDisposedWhileFinishing('the ready() calls');
    this.#phase = 'ready';
    for (const p of ordered) {
      if (typeof p.ready !== 'function') continue;
      this.#assertNotDisposedWhileFinishing(`ready() of plugin '${p.id}'`);
      try {
        await p.ready(this);
      } catch (err) {
        throw new ServerBuildError(`Plugin '${p.id}' failed in ready(): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    }
    this.#assertNotDisposedWhileFinishing('sealing the server');
    this.#phase = 'sealed';
    this.#sealed = true;
  }

  // ---------------------------------------------------------------- contexts

  /**
   * A new root context with its own fresh instance of every registered local. Throws
   * `ServerError` before `finish()` (plugins may call it from `ready`).
   */
  createContext(): SystemContext {
    if (this.#phase === 'disposed') throw new ServerError('createContext() was called on a disposed server; a disposed server can not be reused: create a new Server (and finish() it).');
    if (this.#phase === 'failed') {
      throw new ServerError('createContext() was called on a server whose finish() failed: its plugins are not all built and ready. Fix the failure and finish a new Server.');
    }
    if (this.#phase === 'open' || this.#phase === 'finishing') {
      throw new ServerError('createContext() was called before finish(): await server.finish() first, then create contexts.');
    }
    const ctx = new SystemContext(this, undefined, undefined);
    for (const [t, f] of this._localFactories) {
      let value: unknown;
      try {
        value = f();
      } catch (err) {
        void ctx.dispose().catch(() => undefined);
        throw new ServerError(`createContext(): the registerLocal factory of ${nameOf(t)} threw: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (value === undefined) {
        void ctx.dispose().catch(() => undefined);
        throw new ServerError(`createContext(): the registerLocal factory of ${nameOf(t)} returned undefined; return the local's value.`);
      }
      ctx._setLocal(t, value);
    }
    this._roots.add(ctx);
    return ctx;
  }

  /** @internal Called by a root context when its disposal finished. */
  _forget(ctx: SystemContext): void {
    this._roots.delete(ctx);
  }

  /** Number of live root contexts. */
  get liveContexts(): number {
    return this._roots.size;
  }

  // ---------------------------------------------------------------- disposal

  /**
   * Disposes every live context (newest first), runs plugin `cleanup` in reverse build
   * order, disposes globals implementing `Symbol.asyncDispose` / `Symbol.dispose`
   * (newest first), then unbinds `container` (running its deactivation handlers once).
   * Idempotent; errors reject together as one `AggregateError`.
   */
  dispose(): Promise<void> {
    return (this.#disposal ??= this.#dispose());
  }

  /** Same as {@link Server.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  async #dispose(): Promise<void> {
    this.#phase = 'disposed';
    const errors: unknown[] = [];
    if (this.#finishing !== undefined) await this.#finishing.catch(() => undefined);
    const roots = [...this._roots];
    for (let i = roots.length - 1; i >= 0; i--) await settle(() => roots[i].dispose(), errors);
    for (let i = this.#built.length - 1; i >= 0; i--) {
      const p = this.#built[i];
      const cleanup = p.cleanup;
      if (typeof cleanup === 'function') await settle(() => cleanup.call(p, this), errors);
    }
    // Newest first, each object once (the same object may be a global under several tokens).
    const globals = [...this._globals.values()];
    const done = new Set<unknown>();
    for (let i = globals.length - 1; i >= 0; i--) {
      const v = globals[i].value;
      if (globals[i].view !== undefined || !isDisposable(v) || done.has(v)) continue;
      done.add(v);
      await settle(() => disposeValue(v), errors);
    }
    await settle(() => this.container.unbindAllAsync(), errors);
    throwCollected(errors, 'the server');
  }
}
