/**
 * SystemContext: one node of the context tree (server → agent → session → turn).
 *
 * A context is deliberately small: a parent pointer, its own local store, outputs, an
 * inherited scope tag, and, only when something needs them, a parent filter and an
 * inversify container. It is a {@link Lifetime} (it embeds one): its children, cleanups,
 * signal, in-flight work and its one memoized disposal are the lifetime's, with no second
 * object per context. Lookups never touch inversify unless the token is only known to it.
 */
import { ParamError } from './errors.js';
import { readChildOptions, readCleanupOptions, type ChildOptions } from './context-options.js';
import { closeContextRest, deleteLocal, dropLocals } from './local-disposal.js';
import { disposeLookupError, missingError, mutMissError, readConflict, safeName, writeConflict } from './lookup-errors.js';
import { anyGlobalMarked, assertMayBeLocal, roleOf } from './markers.js';
import { Outputs } from './outputs.js';
import type { ParentFilter } from './parent-filter.js';
import { ResourceEntry } from './resource-entry.js';
import { assertToken, describeValue, isToken, nameOf, tokenOfValue, type Token } from './token.js';
import { probeDisposable } from '../disposal/disposable.js';
import type { Cleanup, CleanupOptions } from '../lifetime/finalizers.js';
import { embedLifetime, type Lifetime } from '../lifetime/lifetime.js';
import { describeScope } from '../util/scope-label.js';
import type { Server } from './server.js';
import type { AnySystem, SystemFn } from '../system/system.js';
import type { Step } from '../execution/steps.js';
import type { ExecutionResult } from '../execution/execution-result.js';
import { runOn } from '../system/run.js';
import { withBorrow, type BorrowWaitOptions } from '../system/with-borrow.js';
import type { Res } from '../system/params.js';
import { executeOn } from '../execution/execute.js';
import { resolveIn, resolveInAsync } from '../container/resolve.js';
import type { Container } from 'inversify';
import type { ownClass } from '../system/own-class.js';

export { readChildOptions, type ChildOptions } from './context-options.js';

const LIVE = 0;

/** The lifetime members every context has (its `signal`, `describe()`, …). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type -- the lifetime's methods are installed by embedLifetime
export interface SystemContext extends Lifetime {}

/**
 * One context of the tree. Made by `server.createContext()` (a root) or `ctx.child()`.
 *
 * - `get` (the `Res` rule): own locals, then each ancestor's locals nearest first, then
 *   the globals (values inserted with `insertGlobal`, then classes bound in
 *   `server.container`). A {@link ParentFilter} on a context gates the walk from it to
 *   its parent.
 * - `getMut` (the `ResMut` rule): own locals only, never walking up.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see above
export class SystemContext implements AsyncDisposable {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** The server this context belongs to. */
  readonly server: Server;
  /** The parent context; `undefined` for a root context. */
  readonly parent: SystemContext | undefined;
  /** @internal The newest live child; `_prev` / `_next`: the older / newer live sibling (see `Lifetime`). */
  _last: SystemContext | undefined;
  /** @internal */ _prev: SystemContext | undefined;
  /** @internal */ _next: SystemContext | undefined;
  // The lifetime's own fields (see `Lifetime`), embedded, not inherited: a derived
  // class's construction costs about twice a plain one's on V8.
  /** @internal */ _state: number;
  /** @internal */ _extra: Lifetime['_extra'];
  /** @internal */ _fin: Lifetime['_fin'];
  /** @internal */ _closeMemo: Lifetime['_closeMemo'];
  /** @internal */ _keepLinked: boolean;
  /** @internal */ _settleClose: Lifetime['_settleClose'];
  /** 0 for a root context, parent's depth + 1 otherwise. */
  readonly depth: number;
  /** @internal The nearest scope tag (see `createScope`), inherited at creation. */
  readonly _scopeKey: object | undefined;
  /** @internal The parent filter gating `Res` walks from this context to its parent. */
  readonly _filter: ParentFilter | undefined;
  /**
   * @internal The token of the oldest own local, in a field (most contexts hold one or none),
   * so they need no `Map`; `undefined` when empty. Read locals with {@link SystemContext._local}.
   */
  _t1: Token | undefined = undefined;
  /** @internal The entry of {@link SystemContext._t1}. */
  _e1: ResourceEntry | undefined = undefined;
  /** @internal The other own locals, each newer than the slot's, in insertion order. */
  _locals: Map<Token, ResourceEntry> | undefined = undefined;
  /** @internal Cached per-context views of contextual globals. */
  _views: Map<Token, unknown> | undefined = undefined;
  /** @internal The token of the first view made for this context (see `_valueOf`). */
  _viewToken: Token | undefined = undefined;
  /** @internal The first view made for this context, for `_viewToken`. */
  _view: unknown = undefined;
  /** @internal The lazily made inversify container of this context. */
  _container: Container | undefined = undefined;
  /** @internal Set once a disposable value was stored as a local (sticky; lets dispose skip a scan). */
  _mayOwn = false;
  #outputs: Outputs | undefined = undefined;
  /**
   * @internal Sees every `insert` on this context before the value is stored (it may
   * throw to refuse it, or change the value in place). Durable sessions set it while a
   * resumed agent's `setup` runs, to guard the locals restored before it.
   */
  _onInsert: ((t: Token, value: unknown) => void) | undefined = undefined;

  /** @internal Use `server.createContext()` or `ctx.child()`. */
  constructor(server: Server, parent: SystemContext | undefined, scopeKey: object | undefined, filter?: ParentFilter) {
    this.parent = parent;
    this._state = 0;
    this._last = undefined;
    this._prev = undefined;
    this._next = undefined;
    this._extra = undefined;
    this._fin = undefined;
    this._closeMemo = undefined;
    this._keepLinked = false;
    this._settleClose = undefined;
    this.server = server;
    this.depth = parent === undefined ? 0 : parent.depth + 1;
    this._scopeKey = scopeKey;
    this._filter = filter;
  }

  /** True once disposal has started. */
  get isDisposed(): boolean {
    return this._state !== LIVE;
  }

  /** @internal A short description for messages, e.g. `context at depth 2 (scope researcher)`. */
  describe(): string {
    return `context at depth ${this.depth}${this._scopeKey ? ` (${describeScope(this._scopeKey)})` : ''}`;
  }

  /**
   * A new child context: no locals, no outputs, the same globals, owned by this one.
   * `options.parentFilter` gates the new context's `Res` walks into this one and above.
   */
  child(options?: ChildOptions): SystemContext {
    if (this._state !== LIVE) this._live('child()');
    const filter = options === undefined ? undefined : readChildOptions(options, 'child(options)');
    return this._adopt(new SystemContext(this.server, this, this._scopeKey, filter));
  }

  // ---------------------------------------------------------------- the lifetime's hooks

  /** @internal `server.options.disposeTimeoutMs`. */
  _closeTimeoutMs(): number {
    return this.server.options.disposeTimeoutMs;
  }

  /** @internal A container to unbind, or a disposable local this context may own. */
  _hasOwnWork(): boolean {
    return this._container !== undefined || (this._mayOwn && (this._t1 !== undefined || (this._locals !== undefined && this._locals.size > 0)));
  }

  /** @internal The locals, then the container. */
  _closeRest(errors: unknown[]): Promise<void> | undefined {
    return closeContextRest(this, errors);
  }

  /** @internal Drops the locals, views and outputs. */
  _released(): void {
    this._t1 = this._e1 = undefined;
    this._locals = this._views = undefined;
    this._viewToken = this._view = undefined;
    this.#outputs = undefined;
  }

  /** @internal A root leaves its server's roots. */
  _detach(): void {
    this.server._forget(this);
  }

  /** @internal `fork()` of a context is a child context. */
  _forkOne(): SystemContext {
    return new SystemContext(this.server, this, this._scopeKey);
  }

  // ---------------------------------------------------------------- locals

  /**
   * Sets a local of this context (token = `value.constructor`), returning the previous
   * local of that token. A local shadows the same token in every ancestor and in the
   * globals, for this context and its descendants.
   */
  insert<T extends object>(value: T): T | undefined;
  /** Sets a local of this context under an explicit token, returning the previous one. */
  insert<T>(token: Token<T>, value: NoInfer<T>): T | undefined;
  insert(a: unknown, b?: unknown): unknown {
    if (this._state !== LIVE) this._live('insert()');
    let t: Token;
    let value: unknown;
    if (arguments.length < 2) {
      t = tokenOfValue(a, () => `insert(value) on a ${this.describe()}`, 'ctx.insert(MY_TOKEN, value)');
      value = a;
    } else {
      if (!isToken(a)) assertToken(a, 'insert(token, value)');
      t = a;
      value = b;
    }
    if (anyGlobalMarked && roleOf(t) === 'global') assertMayBeLocal(t, `insert(${nameOf(t)})`);
    if (value === undefined) {
      throw new TypeError(`insert(${nameOf(t)}, undefined): a local can not be undefined; use ctx.remove(${nameOf(t)}) to drop one.`);
    }
    this._onInsert?.(t, value);
    return this._setLocal(t, value);
  }

  /**
   * @internal Sets a local without token validation. Refuses, before storing anything, a
   * value whose `Symbol.asyncDispose` / `Symbol.dispose` lookup throws, and a value
   * replacing one a running system borrows.
   */
  _setLocal(t: Token, value: unknown, call = 'insert'): unknown {
    let owned = false;
    if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
      try {
        // A context held as a local is never owned: its parent (or the server) disposes
        // it, and disposing an ancestor (or itself) from its own disposal would wait for itself.
        owned = probeDisposable(value) && !(value instanceof SystemContext);
      } catch (err) {
        throw disposeLookupError(call, t, this, value, err);
      }
    }
    const prev = this._local(t);
    if (prev !== undefined) {
      if (prev.reads > 0 || prev.writing) {
        throw new ParamError('BorrowConflict', t, `${call}() on a ${this.describe()} while a running system borrows the current value`);
      }
      if (prev.counted) {
        prev.counted = false;
        this.server._unhold(prev.value);
      }
    }
    const e = new ResourceEntry(value, this);
    if (owned) {
      e.counted = true;
      this.server._hold(value as object);
      this._mayOwn = true;
    }
    // Insertion order is the slot, then the map; a replaced local becomes the newest.
    const locals = this._locals;
    const mapEmpty = locals === undefined || locals.size === 0;
    if (prev !== undefined && this._t1 !== t) {
      // in the map: the newest already when it is the map's only entry (replaced in place:
      // deleting it would shrink the map, setting it again grow it)
      if ((locals as Map<Token, ResourceEntry>).size > 1) (locals as Map<Token, ResourceEntry>).delete(t);
      (locals as Map<Token, ResourceEntry>).set(t, e);
    } else if (prev !== undefined && !mapEmpty) {
      // in the slot, with newer ones in the map: it moves to the map's end
      this._t1 = this._e1 = undefined;
      (locals as Map<Token, ResourceEntry>).set(t, e);
    } else if (this._t1 === t || (this._t1 === undefined && mapEmpty)) {
      // the slot: replaced there, or taken while it would be the oldest
      this._t1 = t;
      this._e1 = e;
    } else (this._locals ??= new Map()).set(t, e);
    return prev?.value;
  }

  /** @internal This context's own local entry of `t` (ancestors are not consulted). */
  _local(t: Token): ResourceEntry | undefined {
    return this._t1 === t ? this._e1 : this._locals?.get(t);
  }

  /** @internal The own locals as `[token, value]`, oldest first (for tests). */
  _localValues(): [Token, unknown][] {
    const out: [Token, unknown][] = this._t1 === undefined ? [] : [[this._t1, (this._e1 as ResourceEntry).value]];
    if (this._locals !== undefined) for (const [t, e] of this._locals) out.push([t, e.value]);
    return out;
  }

  /** Removes and returns an own local of this context; `undefined` when it has none. The caller owns it now. */
  remove<T>(token: Token<T>): T | undefined {
    this._live('remove()');
    const e = this._local(token);
    if (e === undefined) {
      assertToken(token, 'remove(token)');
      return undefined;
    }
    if (e.reads > 0 || e.writing) {
      throw new ParamError('BorrowConflict', token, `remove() on a ${this.describe()} while a running system borrows it`);
    }
    deleteLocal(this, token);
    if (e.counted) {
      e.counted = false;
      this.server._unhold(e.value);
    }
    return e.value as T;
  }

  /** @internal Removes the locals of `tokens` and disposes what this context last held (see `dropLocals`). */
  _dropLocals(tokens: readonly Token[]): Promise<void> {
    return dropLocals(this, tokens);
  }

  /** Whether this context has its own local of `token` (ancestors are not consulted). */
  hasLocal(token: Token): boolean {
    this._live('hasLocal()');
    if (this._local(token) !== undefined) return true;
    assertToken(token, 'hasLocal(token)');
    return false;
  }

  /** Whether `get(token)` would find something (locals up the tree as parent filters allow, then globals). */
  has(token: Token): boolean {
    this._live('has()');
    if (this._findEntry(token) !== undefined) return true;
    assertToken(token, 'has(token)');
    return this.server._containerHas(token);
  }

  // ---------------------------------------------------------------- lookups

  /**
   * @internal The entry `Res` resolves to among locals and inserted globals: own locals,
   * then each ancestor's nearest first while no parent filter blocks the token, then
   * the inserted globals.
   */
  _findEntry(t: Token): ResourceEntry | undefined {
    if (this._t1 === t) return this._e1;
    const own = this._locals?.get(t);
    if (own !== undefined) return own;
    let f = this._filter;
    let p = this.parent;
    while (p !== undefined && (f === undefined || f.allows(t))) {
      if (p._t1 === t) return p._e1;
      const e = p._locals?.get(t);
      if (e !== undefined) return e;
      f = p._filter;
      p = p.parent;
    }
    return this.server._globals.get(t);
  }

  /** @internal The value of an entry as seen from this context. */
  _valueOf(e: ResourceEntry, t: Token): unknown {
    if (e.view === undefined) return e.value;
    // The first view made here sits in a field (most contexts ask for one or two: Tools,
    // Events); more go to a map.
    if (this._viewToken === t) return this._view;
    const known = this._views?.get(t);
    if (known !== undefined) return known;
    const v = e.view(this);
    // The factory may have asked for views itself (this one too): the first made stays.
    if (this._viewToken === t) return this._view;
    const made = this._views?.get(t);
    if (made !== undefined) return made;
    if (this._viewToken === undefined) {
      this._viewToken = t;
      this._view = v;
    } else (this._views ??= new Map()).set(t, v);
    return v;
  }

  /**
   * The `Res` rule: the first match in own locals, then each ancestor's locals nearest
   * first (as parent filters allow), then the globals. Throws `ParamError`
   * (`ResourceNotFound`; `ResourceOutOfScope` when only a parent filter hid an
   * ancestor's local; `BorrowConflict` while a running system holds `ResMut` on the entry).
   */
  get<T>(token: Token<T>): T {
    if (this._state !== LIVE) this._live(`get(${safeName(token)})`);
    const e = this._findEntry(token);
    if (e !== undefined) {
      if (e.writing) throw readConflict(token, this);
      return (e.view === undefined ? e.value : this._valueOf(e, token)) as T;
    }
    assertToken(token, 'get(token)');
    if (this.server._containerHas(token)) return this.server._containerGet(token) as T;
    throw missingError(this, token);
  }

  /** Like {@link SystemContext.get} but `undefined` when the token is not found (or a parent filter hides it). */
  tryGet<T>(token: Token<T>): T | undefined {
    if (this._state !== LIVE) this._live(`tryGet(${safeName(token)})`);
    const e = this._findEntry(token);
    if (e !== undefined) {
      if (e.writing) throw readConflict(token, this);
      return (e.view === undefined ? e.value : this._valueOf(e, token)) as T;
    }
    assertToken(token, 'tryGet(token)');
    if (this.server._containerHas(token)) return this.server._containerGet(token) as T;
    return undefined;
  }

  /**
   * The `ResMut` rule: this context's own locals only. A token held only by an ancestor
   * or as a global is still `ResourceNotFound`, with a hint saying where it was found.
   */
  getMut<T>(token: Token<T>): T {
    if (this._state !== LIVE) this._live(`getMut(${safeName(token)})`);
    const e = this._local(token);
    if (e !== undefined) {
      if (e.writing || e.reads > 0) throw writeConflict(token, this, e);
      return e.value as T;
    }
    throw mutMissError(token, this, 'getMut');
  }

  // ---------------------------------------------------------------- outputs, running

  /** This context's outputs; never inherited. */
  get outputs(): Outputs {
    this._live('outputs');
    return (this.#outputs ??= new Outputs((what) => this._live(what)));
  }

  /** @internal {@link SystemContext.outputs} without the liveness check (the caller made it). */
  _outputs(): Outputs {
    return (this.#outputs ??= new Outputs((what) => this._live(what)));
  }

  /** Fetches the system's parameters from this context, runs it, stores and returns its output. Never throws: rejects. */
  run<R>(system: SystemFn<R> | AnySystem<R>): Promise<Awaited<R>> {
    return runOn(this, system) as Promise<Awaited<R>>; // checks liveness and never throws: rejects
  }

  /** Runs steps (systems, `parallel`, `loop`) in order; resolves to an `ExecutionResult`. Never throws: rejects. */
  execute(steps: readonly Step[]): Promise<ExecutionResult> {
    try {
      this._live('execute()');
      return executeOn(this, steps);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Waits for a write borrow of this context's own local `token` (the `ResMut` rule),
   * calls `fn` with it and holds the borrow until `fn` (and the promise it returns)
   * settles; resolves to `fn`'s result. Always waits, FIFO, up to
   * `options.timeoutMs` (default: the server's `borrowTimeoutMs`), then rejects with
   * `BorrowConflict` naming the holder(s). Every failure rejects.
   */
  withMut<T, R>(token: Token<T>, fn: (value: T) => R, options?: BorrowWaitOptions): Promise<Awaited<R>> {
    return withBorrow(this, token, fn, options, true) as Promise<Awaited<R>>;
  }

  /**
   * Waits for a read borrow of `token` (the `Res` rule), calls `fn` with it and holds the
   * borrow until `fn` (and the promise it returns) settles; resolves to `fn`'s result.
   * Same waiting rules as {@link SystemContext.withMut}.
   */
  withRes<T, R>(token: Token<T>, fn: (value: Res<T>) => R, options?: BorrowWaitOptions): Promise<Awaited<R>> {
    return withBorrow(this, token, fn, options, false) as Promise<Awaited<R>>;
  }

  /** Constructs an `@injectable()` class through this context's inversify scope. */
  resolve<T>(cls: new (...args: any[]) => T): T {
    this._live('resolve()');
    return resolveIn(this, cls);
  }

  /** Like {@link SystemContext.resolve}, for classes with async activation. Never throws: rejects. */
  resolveAsync<T>(cls: new (...args: any[]) => T): Promise<T> {
    try {
      this._live('resolveAsync()');
      return resolveInAsync(this, cls);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  // ---------------------------------------------------------------- disposal

  /**
   * Registers cleanup run when this context is disposed (last registered runs first).
   * With `{ concurrent: true }`, each maximal run of adjacent concurrent cleanups is
   * started together and settles before the next cleanup starts. Returns a function
   * that unregisters it.
   */
  onDispose(fn: Cleanup, options?: CleanupOptions): () => void {
    this._live('onDispose()');
    if (typeof fn !== 'function') throw new TypeError(`onDispose(fn) needs a function, got ${describeValue(fn)}.`);
    const concurrent = options === undefined ? false : readCleanupOptions(options);
    return this._finalizers().add(fn, concurrent);
  }

  /**
   * Disposes this context. The moment it starts, the whole subtree is marked disposed,
   * every `signal` in it is aborted and every in-flight work tracked in it is aborted.
   * Then descendants are disposed first (newest first); each context awaits its in-flight
   * work (bounded by `server.options.disposeTimeoutMs`, measured from the start of this
   * disposal), then runs its cleanups (last registered first), then disposes its locals
   * that implement `Symbol.asyncDispose` / `Symbol.dispose` (newest first; a value another
   * live context or the server holds is left to them). Memoized before anything runs:
   * repeated, concurrent and re-entrant calls share one promise. Errors are collected
   * into one `AggregateError` after all ran.
   */
  dispose(): Promise<void> {
    return this.close();
  }

  /** Same as {@link SystemContext.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

embedLifetime(SystemContext);
