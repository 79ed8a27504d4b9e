/**
 * Server: the root of the tree. Holds the globals (values and the inversify container),
 * the local factories every root context instantiates, and the plugins.
 */
import type { Container } from 'inversify';
import { ParamError, ServerBuildError, ServerError } from './errors.js';
import { assertMayBeGlobal, assertMayBeLocal } from './markers.js';
import { orderPlugins, readPlugin, type Plugin, type PluginRecord } from './plugin.js';
import { providerOf } from './provider-hints.js';
import { ResourceEntry } from './resource-entry.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './server-options.js';
import { SystemContext } from './system-context.js';
import { assertToken, describeValue, errorText, nameOf, tokenOfValue, type Token } from './token.js';
import { collect, settle } from '../lifetime/settle.js';
import { disposeValue, probeDisposable } from '../disposal/disposable.js';
import { throwCollected } from '../lifetime/errors.js';
import { ServerContainer } from '../container/server-container.js';
import { resolveLogger, type Logger } from '../observability/logger.js';

type Phase = 'open' | 'finishing' | 'ready' | 'sealed' | 'failed' | 'disposed';

/**
 * Which contexts get their own instance of a registered local:
 * - `'root'` (default): every root context made by `server.createContext()`;
 * - `'agent'`: every root context and every agent context (made by `agents.create` or
 *   by the durable sessions), made before `setup` runs and disposed with the agent;
 * - `'session'`: every session context (made by `openSession` or by the durable
 *   sessions); roots and agents get none.
 */
export type LocalLifetime = 'root' | 'agent' | 'session';

/** Options of `server.registerLocal(token, factory?, options)`. */
export interface RegisterLocalOptions {
  /** Which contexts get their own instance; default `'root'`. */
  readonly per?: LocalLifetime;
}

/** Makes the value of a registered local for the new context it is given. */
export type LocalFactory<T> = (ctx: SystemContext) => T;

/** @internal A registered local. */
export interface LocalRegistration {
  readonly factory: LocalFactory<unknown>;
  readonly per: LocalLifetime;
}

const LIFETIMES: readonly LocalLifetime[] = ['root', 'agent', 'session'];

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
   *
   * After `finish()` it is read-only: `get`, `getAsync`, `getAll`, `getAllAsync`,
   * `isBound` and `isCurrentBound` work (`autobind: true` is refused); every other
   * method throws a `ServerError` (the async ones reject with it) saying the server is
   * sealed. `server.dispose()` still unbinds it. Every object it makes is its own: a
   * context never disposes one, however it was reached.
   */
  readonly container: Container;
  /**
   * The options this server was made with, defaults filled in, frozen:
   * `disposeTimeoutMs` (10,000), `borrows` (`'fail'`), `borrowTimeoutMs` (30,000).
   */
  readonly options: ResolvedServerOptions;
  /** @internal `new Server({ logger })`, validated (the console by default): where everything contained is reported. */
  readonly _logger: Logger;
  /** @internal Inserted globals, oldest first. */
  readonly _globals = new Map<Token, ResourceEntry>();
  /** @internal Registered locals (factory and lifetime), in registration order. */
  readonly _localFactories = new Map<Token, LocalRegistration>();
  /** @internal Live root contexts, oldest first. */
  readonly _roots = new Set<SystemContext>();
  /** @internal Live scope keys: from `createScope` until the scope's disposal starts. */
  readonly _scopes = new Map<object, SystemContext>();
  /**
   * @internal How many live local entries hold each disposable object (counted when it
   * was stored): the last holder's context disposes it.
   */
  readonly _holders = new WeakMap<object, number>();
  /** @internal Objects polestar already disposed (each object is disposed at most once). */
  readonly _disposedValues = new WeakSet<object>();
  /**
   * @internal Leak probes: each registry adds one that lists its live scoped
   * registrations (used by `assertNoLeaks`).
   */
  readonly _leakProbes = new Set<() => string[]>();
  readonly #container: ServerContainer;
  #plugins: PluginRecord[] = [];
  #built: PluginRecord[] = [];
  #phase: Phase = 'open';
  #finishing: Promise<void> | undefined;
  #disposal: Promise<void> | undefined;
  #bound = new Set<Token>();
  #sealed = false;

  /**
   * Makes a server with an empty inversify container.
   *
   * @param options - `disposeTimeoutMs` (how long a disposal waits for the in-flight
   *   work it aborted, default 10,000 ms), `borrows` (`'fail'`, the default, or `'wait'`:
   *   see {@link ServerOptions.borrows}) and `borrowTimeoutMs` (how long a waiting
   *   borrow waits, default 30,000 ms) and `logger` (`{ warn, error }`, default the
   *   console: where listener failures and other contained errors are reported).
   *   Validated: an unknown option, a wrong type, an out-of-range number or a logger
   *   without `warn` or `error` throws.
   */
  constructor(options?: ServerOptions) {
    this.options = resolveServerOptions(options);
    this._logger = resolveLogger(options);
    this.#container = new ServerContainer((v) => {
      if (v !== null && (typeof v === 'object' || typeof v === 'function')) this._containerValues.add(v);
    });
    this.container = this.#container;
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
    try {
      probeDisposable(value);
    } catch (err) {
      throw new TypeError(
        `insertGlobal(${nameOf(t)}): looking up Symbol.asyncDispose / Symbol.dispose on ${describeValue(value)} threw (${errorText(err)}), ` +
          `so the server could not dispose it safely; nothing was stored. Insert an object you control that wraps it.`,
        { cause: err },
      );
    }
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
      this.#container._bindGlobal(t).toDynamicValue(() => {
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

  /** @internal Resolves `t` in the globals' container (which records what it made). */
  _containerGet(t: Token): unknown {
    return this.container.get(t as never);
  }

  /**
   * @internal Every object `container` made (resolved directly, injected as a
   * dependency, or handed out through a context): owned by the container and its
   * inversify deactivation, so neither a context nor the server's global disposal ever
   * disposes one.
   */
  readonly _containerValues = new WeakSet<object>();

  /** @internal Counts one more live local entry holding the disposable `v`. */
  _hold(v: object): void {
    this._holders.set(v, (this._holders.get(v) ?? 0) + 1);
  }

  /** @internal Counts one holder less; returns how many remain. */
  _unhold(v: unknown): number {
    const o = v as object;
    const n = (this._holders.get(o) ?? 1) - 1;
    if (n <= 0) {
      this._holders.delete(o);
      return 0;
    }
    this._holders.set(o, n);
    return n;
  }

  /** @internal Whether `v` belongs to the server: an inserted global, or made by `container`. */
  _isServerValue(v: unknown): boolean {
    if (this._containerValues.has(v as object)) return true;
    for (const e of this._globals.values()) if (e.value === v) return true;
    return false;
  }

  /** @internal Records that `v` is being disposed; `false` when polestar already disposed it. */
  _claimDisposal(v: object): boolean {
    if (this._disposedValues.has(v)) return false;
    this._disposedValues.add(v);
    return true;
  }

  // ---------------------------------------------------------------- scope keys

  /** @internal The live scope context of `key`; `undefined` once its disposal started (or never made). */
  _scopeCtx(key: object): SystemContext | undefined {
    return this._scopes.get(key);
  }

  /** @internal Registers `ctx` as the live scope of `key` (the caller checked it is not live). */
  _scopeBegan(key: object, ctx: SystemContext): void {
    this._scopes.set(key, ctx);
  }

  /** @internal The disposal of the scope context of `key` started. */
  _scopeEnded(key: object, ctx: SystemContext): void {
    if (this._scopes.get(key) === ctx) this._scopes.delete(key);
  }

  // ---------------------------------------------------------------- locals

  /**
   * Registers a local that each context of a lifetime gets its own fresh instance of:
   * `per: 'root'` (default) every root context made by `createContext()`; `'agent'`
   * every root context and every agent context; `'session'` every session context.
   * Other contexts get none (they read the nearest one through `Res`). The factory
   * receives the new context and defaults to `() => new token()`. The options may also
   * be passed in place of the factory: `registerLocal(Memory, { per: 'agent' })`.
   */
  registerLocal<T>(token: Token<T>, factory?: LocalFactory<NoInfer<T>>, options?: RegisterLocalOptions): void;
  /** Registers a local made with `new token()` for each context of the lifetime `options.per`. */
  registerLocal<T>(token: Token<T>, options: RegisterLocalOptions): void;
  registerLocal(token: unknown, a?: unknown, b?: unknown): void {
    this.#assertOpen('registerLocal()');
    assertToken(token, 'registerLocal(token, factory?, options?)');
    assertMayBeLocal(token, `registerLocal(${nameOf(token)})`);
    let factory = a;
    let options = b;
    if (a !== undefined && a !== null && typeof a === 'object' && b === undefined) {
      factory = undefined;
      options = a;
    }
    const per = readLifetime(options, nameOf(token));
    let f: LocalFactory<unknown>;
    if (factory === undefined) {
      if (typeof token !== 'function') {
        throw new TypeError(
          `registerLocal(${nameOf(token)}): a token() symbol has no constructor; pass a factory: server.registerLocal(${nameOf(token)}, () => value).`,
        );
      }
      const cls = token as unknown as new () => unknown;
      f = () => new cls();
    } else if (typeof factory !== 'function') {
      throw new TypeError(`registerLocal(${nameOf(token)}, factory): factory must be a function, got ${describeValue(factory)}.`);
    } else {
      f = factory as LocalFactory<unknown>;
    }
    if (this._localFactories.has(token)) {
      throw new ServerError(`registerLocal(${nameOf(token)}): a local factory for ${nameOf(token)} is already registered.`);
    }
    this._localFactories.set(token, Object.freeze({ factory: f, per }));
  }

  /**
   * @internal Instantiates the registered locals of lifetime `per` into `ctx`:
   * `'root'` makes the `'root'` and `'agent'` ones (a root is an agent's root too),
   * `'agent'` the `'agent'` ones, `'session'` the `'session'` ones, in registration
   * order. A factory that throws, returns `undefined`, returns a value that can not be
   * stored, or disposes `ctx`, fails with a `ServerError` naming the token; the locals
   * this call already made are removed from `ctx` and disposed (nothing is left behind).
   */
  _makeLocals(ctx: SystemContext, per: LocalLifetime): void {
    let made: Token[] | undefined;
    for (const [t, reg] of this._localFactories) {
      if (reg.per !== per && !(per === 'root' && reg.per === 'agent')) continue;
      const fail = (why: string, cause?: unknown): ServerError => {
        if (made !== undefined) void ctx._dropLocals(made).catch(() => undefined);
        const where = per === 'root' ? 'createContext()' : `making the per-${per} locals of the ${ctx.describe()}`;
        return new ServerError(`${where}: the registerLocal factory of ${nameOf(t)} ${why}`, cause === undefined ? undefined : { cause });
      };
      let value: unknown;
      try {
        value = reg.factory(ctx);
      } catch (err) {
        throw fail(`threw: ${errorText(err)}`, err);
      }
      if (value === undefined) throw fail(`returned undefined; return the local's value.`);
      if (ctx.isDisposed) throw fail('disposed the context it was making a local for.');
      try {
        ctx._setLocal(t, value, 'registerLocal');
      } catch (err) {
        throw fail(`returned a value that can not be stored: ${errorText(err)}`, err);
      }
      (made ??= []).push(t);
    }
  }

  // ---------------------------------------------------------------- plugins

  /**
   * Adds plugins; throws `Plugin '<id>' was already added.` on a duplicate id. Each
   * plugin's fields (`id`, `dependencies`, `build`, `ready`, `cleanup`) are read once,
   * here, and validated (a TypeError names the plugin and the field); nothing is added
   * when one of them is refused.
   */
  addPlugins(...plugins: Plugin[]): this {
    this.#assertOpen('addPlugins()');
    if (this.#phase !== 'open') {
      throw new ServerError(
        'addPlugins() was called while finish() is running: the plugin list is fixed when finish() starts, so this plugin ' +
          'would never be built. Add every plugin before awaiting finish().',
      );
    }
    const seen = new Set(this.#plugins.map((p) => p.id));
    const records: PluginRecord[] = [];
    for (const p of plugins) {
      const r = readPlugin(p);
      if (seen.has(r.id)) throw new ServerError(`Plugin '${r.id}' was already added.`);
      seen.add(r.id);
      records.push(r);
    }
    this.#plugins.push(...records);
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
        await p.build.call(p.plugin, this);
      } catch (err) {
        throw new ServerBuildError(`Plugin '${p.id}' failed to build: ${errorText(err)}`, { cause: err });
      }
      this.#built.push(p);
    }
    this.#assertNotDisposedWhileFinishing('the ready() calls');
    this.#phase = 'ready';
    for (const p of ordered) {
      const ready = p.ready;
      if (ready === undefined) continue;
      this.#assertNotDisposedWhileFinishing(`ready() of plugin '${p.id}'`);
      try {
        await ready.call(p.plugin, this);
      } catch (err) {
        throw new ServerBuildError(`Plugin '${p.id}' failed in ready(): ${errorText(err)}`, { cause: err });
      }
    }
    this.#assertNotDisposedWhileFinishing('sealing the server');
    this.#phase = 'sealed';
    this.#sealed = true;
    this.#container._seal();
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
    try {
      this._makeLocals(ctx, 'root');
    } catch (err) {
      void ctx.dispose().catch(() => undefined);
      throw err;
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
    if (this.#disposal === undefined) {
      // Memoized before anything runs: a re-entrant call (from an abort listener, a
      // cleanup, a plugin's cleanup) gets this same promise.
      let settleWith!: (p: Promise<void>) => void;
      this.#disposal = new Promise<void>((resolve) => (settleWith = resolve as (p: Promise<void>) => void));
      settleWith(this.#dispose());
    }
    return this.#disposal;
  }

  /** Same as {@link Server.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  async #dispose(): Promise<void> {
    this.#phase = 'disposed';
    const errors: unknown[] = [];
    if (this.#finishing !== undefined) await this.#finishing.catch(() => undefined);
    // One root after another, newest first: an older root (and its signal) stays live
    // while a newer one is disposed.
    const roots = [...this._roots];
    for (let i = roots.length - 1; i >= 0; i--) await settle(() => roots[i].dispose(), errors);
    for (let i = this.#built.length - 1; i >= 0; i--) {
      const p = this.#built[i];
      const cleanup = p.cleanup;
      if (cleanup !== undefined) await settle(() => cleanup.call(p.plugin, this), errors);
    }
    // Newest first, each object once (the same object may be a global under several
    // tokens); never an object the container made (its deactivation owns it), never one
    // polestar already disposed. A value whose dispose lookup throws is reported, and
    // the others are still disposed.
    const globals = [...this._globals.values()];
    for (let i = globals.length - 1; i >= 0; i--) {
      const e = globals[i];
      if (e.view !== undefined) continue;
      const v = e.value;
      let disposable: boolean;
      try {
        disposable = probeDisposable(v);
      } catch (err) {
        collect(err, errors);
        continue;
      }
      if (!disposable || this._containerValues.has(v as object) || !this._claimDisposal(v as object)) continue;
      await settle(() => disposeValue(v), errors);
    }
    await settle(() => this.#container._unbindAllOnDispose(), errors);
    throwCollected(errors, 'the server');
  }
}

function readLifetime(options: unknown, name: string): LocalLifetime {
  if (options === undefined) return 'root';
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`registerLocal(${name}, factory, options): options must be an object such as { per: 'agent' }, got ${describeValue(options)}.`);
  }
  let per: unknown;
  try {
    per = (options as RegisterLocalOptions).per;
  } catch (err) {
    throw new TypeError(`registerLocal(${name}, factory, options): reading options.per threw (${errorText(err)}).`, { cause: err });
  }
  if (per === undefined) return 'root';
  if (LIFETIMES.includes(per as LocalLifetime)) return per as LocalLifetime;
  throw new TypeError(`registerLocal(${name}, factory, { per }): per must be 'root', 'agent' or 'session', got ${describeValue(per)}.`);
}
