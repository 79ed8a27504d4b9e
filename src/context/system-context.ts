/**
 * SystemContext: one node of the context tree (server → agent → session → turn).
 *
 * A context is deliberately small: a parent pointer, its own local store, outputs, an
 * ownership stack, an inherited scope tag, links to its newest child and its siblings
 * (an intrusive list: adding and removing a child is a few pointer writes), and, only
 * when something needs them, a parent filter, an inversify container and an `Extra`
 * (signal, in-flight work, prelude). Lookups never touch inversify unless the token is
 * only known to inversify.
 */
import { ContextDisposedError, DisposeTimeoutError, ParamError } from './errors.js';
import type { InFlight } from './in-flight.js';
import { anyGlobalMarked, assertMayBeLocal, assertMayBeMutated, roleOf } from './markers.js';
import { Outputs } from './outputs.js';
import { ParentFilter } from './parent-filter.js';
import { providerOf } from './provider-hints.js';
import { ResourceEntry } from './resource-entry.js';
import { assertToken, describeValue, errorText, isToken, nameOf, tokenOfValue, type Token } from './token.js';
import {
  collect, collected, disposeValue, Ownership, probeDisposable, settle, settlePending, start, thenRun, throwCollected, type Cleanup, type CleanupOptions, type Slot,
} from '../disposal/ownership.js';
import type { Server } from './server.js';
import type { AnySystem, SystemFn } from '../system/system.js';
import type { Step } from '../execution/steps.js';
import type { ExecutionResult } from '../execution/execution-result.js';
import { runOn } from '../system/run.js';
import type { HoldGroup } from '../system/borrows.js';
import { withBorrow, type BorrowWaitOptions } from '../system/with-borrow.js';
import type { Res } from '../system/params.js';
import { executeOn } from '../execution/execute.js';
import { resolveIn, resolveInAsync } from '../container/resolve.js';
import type { Container } from 'inversify';
import type { ownClass } from '../system/own-class.js';

const LIVE = 0;
const DISPOSED = 1;

/** Options of `ctx.child(options)`. */
export interface ChildOptions {
  /**
   * Gates every `Res` walk that crosses from the new context to this one.
   * Default: no filter.
   */
  readonly parentFilter?: ParentFilter;
}

/** @internal What a context needs only when something uses it: made on first use. */
class Extra {
  /** The controller behind `ctx.signal`. Kept after release, so `signal` stays the same object. */
  ac: AbortController | undefined = undefined;
  /** Tracked in-flight work. */
  inflight: Set<InFlight> | undefined = undefined;
  /** See `SystemContext._prelude`. */
  prelude: Cleanup | undefined = undefined;
  /** See `SystemContext._onInsert`. */
  onInsert: ((t: Token, value: unknown) => void) | undefined = undefined;
  /** This context registered its scope key as live (`createScope`). */
  scopeRoot = false;
  /** The disposal abort pass reached this context (its signal and in-flight work were aborted). */
  aborted = false;
  /** The disposal stopped waiting for in-flight work: later work is aborted and given up at once. */
  quiesced = false;
  /** The async borrow holders running on this context (one in-flight record for all of them). */
  holds: HoldGroup | undefined = undefined;
  /** The tool calls in flight through or of this context (the tools registry's call group, tracked once). */
  calls: InFlight | undefined = undefined;
}

interface Frame {
  readonly node: SystemContext;
  readonly errors: unknown[];
  /** A descendant disposed by the drive (its errors also go to its parent's frame). */
  readonly quiet: boolean;
}

/** The state of one drive: resumable after an await. */
interface Drive {
  /** The frames above the current one. */
  readonly frames: Frame[];
  /** The current frame. */
  f: Frame;
  readonly deadline: number;
}

/**
 * One context of the tree. Made by `server.createContext()` (a root) or `ctx.child()`.
 *
 * - `get` (the `Res` rule): own locals, then each ancestor's locals nearest first, then
 *   the globals (values inserted with `insertGlobal`, then classes bound in
 *   `server.container`). A {@link ParentFilter} on a context gates the walk from it to
 *   its parent.
 * - `getMut` (the `ResMut` rule): own locals only, never walking up.
 */
export class SystemContext implements AsyncDisposable {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** The server this context belongs to. */
  readonly server: Server;
  /** The parent context; `undefined` for a root context. */
  readonly parent: SystemContext | undefined;
  /** 0 for a root context, parent's depth + 1 otherwise. */
  readonly depth: number;
  /** @internal The nearest scope tag (see `createScope`), inherited at creation. */
  readonly _scopeKey: object | undefined;
  /** @internal The parent filter gating `Res` walks from this context to its parent. */
  readonly _filter: ParentFilter | undefined;
  /**
   * @internal The token of the oldest own local, kept in a field (most contexts hold one
   * or none: a turn its `Scratchpad`, a session its history), so they need no `Map`;
   * `undefined` when the slot is empty. Read locals with {@link SystemContext._local}.
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
  /** @internal 0 live, 1 disposing or disposed. */
  _state = LIVE;
  /** @internal Set once a disposable value was stored as a local (sticky; lets dispose skip a scan). */
  _mayOwn = false;
  /** @internal The newest live child (children are an intrusive list through `_prev` / `_next`). */
  _last: SystemContext | undefined = undefined;
  /** @internal The next older live sibling. */
  _prev: SystemContext | undefined = undefined;
  /** @internal The next newer live sibling. */
  _next: SystemContext | undefined = undefined;
  /** @internal Signal, in-flight work, prelude: made on first use. */
  _extra: Extra | undefined = undefined;
  #outputs: Outputs | undefined = undefined;
  #cleanups: Ownership | undefined = undefined;
  #disposal: Promise<void> | typeof RUNNING | typeof RUNNING_QUIET | undefined = undefined;
  /** Disposed on its own under a disposing ancestor: left linked for the ancestor's drive to collect (see `dispose`). */
  #keepLinked = false;
  /** Settles the disposal's promise once one was asked for (see `#promise`). */
  #settle: ((errors: unknown[]) => void) | undefined = undefined;

  /** @internal Use `server.createContext()` or `ctx.child()`. */
  constructor(server: Server, parent: SystemContext | undefined, scopeKey: object | undefined, filter?: ParentFilter) {
    this.server = server;
    this.parent = parent;
    this.depth = parent === undefined ? 0 : parent.depth + 1;
    this._scopeKey = scopeKey;
    this._filter = filter;
  }

  /** True once disposal has started. */
  get isDisposed(): boolean {
    return this._state !== LIVE;
  }

  /** @internal Throws ContextDisposedError when disposal has started. */
  _live(what: string): void {
    if (this._state !== LIVE) throw new ContextDisposedError(what, this.describe());
  }

  /** @internal A short description for messages, e.g. `context at depth 2 (scope researcher)`. */
  describe(): string {
    return `context at depth ${this.depth}${this._scopeKey ? ` (${scopeLabel(this._scopeKey)})` : ''}`;
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

  /** @internal Registers `c` (made with this context as its parent) as its newest live child. */
  _adopt(c: SystemContext): SystemContext {
    const last = this._last;
    if (last !== undefined) {
      last._next = c;
      c._prev = last;
    }
    this._last = c;
    return c;
  }

  /** @internal The live children, oldest first, as a new Set (`undefined` when none); for tests and leak reports. */
  get _children(): Set<SystemContext> | undefined {
    if (this._last === undefined) return undefined;
    const list: SystemContext[] = [];
    for (let c: SystemContext | undefined = this._last; c !== undefined; c = c._prev) list.push(c);
    return new Set(list.reverse());
  }

  /** @internal The Extra of this context, made on first use. */
  _x(): Extra {
    let x = this._extra;
    if (x === undefined) {
      x = this._extra = new Extra();
      // Made after the abort pass went by: nothing in it can have been aborted yet, and
      // whatever is added now is aborted as it is added.
      if (this._disposalStarted()) x.aborted = true;
    }
    return x;
  }

  /**
   * @internal The first step of this context's disposal, run once before its children
   * are disposed: how a scope owner such as an agent leaves its registry and announces
   * its end, whichever path disposes the context. When the context's own `dispose()`
   * starts the disposal it runs while the context is still live (its signal and
   * in-flight work are already aborted); when an ancestor's disposal reaches it, the
   * subtree was already marked disposed. A rejection is collected with the other
   * disposal errors.
   */
  get _prelude(): Cleanup | undefined {
    return this._extra?.prelude;
  }

  /** @internal Sets the prelude (see the getter). */
  set _prelude(fn: Cleanup | undefined) {
    if (fn === undefined && this._extra === undefined) return;
    this._x().prelude = fn;
  }

  /**
   * @internal Sees every `insert` on this context before the value is stored (it may
   * throw to refuse it, or change the value in place). Durable sessions set it while a
   * resumed agent's `setup` runs, to guard the locals restored before it.
   */
  get _onInsert(): ((t: Token, value: unknown) => void) | undefined {
    return this._extra?.onInsert;
  }

  /** @internal Sets the insert hook (see the getter). */
  set _onInsert(fn: ((t: Token, value: unknown) => void) | undefined) {
    if (fn === undefined && this._extra === undefined) return;
    this._x().onInsert = fn;
  }

  // ---------------------------------------------------------------- cancellation

  /**
   * An `AbortSignal` aborted (reason: a `ContextDisposedError`) the moment the disposal
   * of this context or of any ancestor starts. Made on first read; readable on a
   * disposed context, where it is already aborted.
   */
  get signal(): AbortSignal {
    const x = this._x();
    let ac = x.ac;
    if (ac === undefined) {
      ac = x.ac = new AbortController();
      if (this._disposalStarted()) ac.abort(this.#reason());
    }
    return ac.signal;
  }

  /** @internal Whether the disposal of this context or of an ancestor has started. */
  _disposalStarted(): boolean {
    if (this._state !== LIVE || this.#disposal !== undefined) return true;
    for (let c = this.parent; c !== undefined; c = c.parent) {
      if (c._state !== LIVE || c.#disposal !== undefined) return true;
    }
    return false;
  }

  /**
   * @internal Tracks in-flight work on this context: the disposal of this
   * context (or of an ancestor) aborts it when it starts, and awaits it (bounded by
   * `server.options.disposeTimeoutMs`) before running this context's cleanups. Returns
   * the function that untracks it. On a context whose disposal already started, the
   * work is aborted at once (and, once the disposal stopped waiting, given up at once).
   */
  _track(work: InFlight): () => void {
    const x = this._x();
    if (x.quiesced) {
      try {
        work.abort(this.#lazyReason());
      } catch {
        // nothing can collect it: the disposal that would have is over
      }
      try {
        work.giveUp?.();
      } catch {
        // same
      }
      return noop;
    }
    if (x.aborted) {
      try {
        work.abort(this.#lazyReason());
      } catch {
        // the disposal's errors are not reachable from here
      }
    }
    const set = (x.inflight ??= new Set());
    set.add(work);
    return () => void set.delete(work);
  }

  /** The abort reason, built on first use (an `Error` captures a stack: skipped when nothing needs it). */
  #lazyReason(): () => ContextDisposedError {
    let why: ContextDisposedError | undefined;
    return () => (why ??= this.#reason());
  }

  #reason(): ContextDisposedError {
    return new ContextDisposedError(
      'signal',
      this.describe(),
      `the disposal of the ${this.describe()} started: work running on it or below it was aborted.`,
    );
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
    this._extra?.onInsert?.(t, value);
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
        throw new TypeError(
          `${call}(${nameOf(t)}) on a ${this.describe()}: looking up Symbol.asyncDispose / Symbol.dispose on ${describeValue(value)} ` +
            `threw (${errorText(err)}), so polestar can not tell whether the context must dispose it; nothing was stored. ` +
            `Insert an object you control that wraps it.`,
          { cause: err },
        );
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

  /** @internal Number of own locals. */
  _localCount(): number {
    return (this._t1 === undefined ? 0 : 1) + (this._locals?.size ?? 0);
  }

  /** @internal The own locals' entries, oldest first (a new array). */
  _localEntries(): ResourceEntry[] {
    const out: ResourceEntry[] = this._e1 === undefined ? [] : [this._e1];
    if (this._locals !== undefined) for (const e of this._locals.values()) out.push(e);
    return out;
  }

  /** @internal The own locals as `[token, value]`, oldest first (for tests). */
  _localValues(): [Token, unknown][] {
    const out: [Token, unknown][] = this._t1 === undefined ? [] : [[this._t1, (this._e1 as ResourceEntry).value]];
    if (this._locals !== undefined) for (const [t, e] of this._locals) out.push([t, e.value]);
    return out;
  }

  /** Drops the own local of `t` (slot or map). */
  #deleteLocal(t: Token): void {
    if (this._t1 === t) this._t1 = this._e1 = undefined;
    else this._locals?.delete(t);
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
    this.#deleteLocal(token);
    if (e.counted) {
      e.counted = false;
      this.server._unhold(e.value);
    }
    return e.value as T;
  }

  /**
   * @internal Removes the locals of `tokens` (newest first) and disposes each value this
   * context was the last holder of (the rollback of `server._makeLocals`). Rejects with
   * the collected errors.
   */
  async _dropLocals(tokens: readonly Token[]): Promise<void> {
    const errors: unknown[] = [];
    for (let i = tokens.length - 1; i >= 0; i--) {
      const t = tokens[i] as Token;
      const e = this._local(t);
      if (e === undefined) continue;
      this.#deleteLocal(t);
      if (!e.counted) continue;
      e.counted = false;
      const v = e.value as object;
      if (this.server._unhold(v) > 0 || this.server._isServerValue(v) || !this.server._claimDisposal(v)) continue;
      await settle(() => disposeValue(v), errors);
    }
    throwCollected(errors, `the locals made for the ${this.describe()}`);
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
    throw this._missing(token);
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
   * @internal The error for a `Res` miss: `ResourceOutOfScope` when a parent filter on
   * the walk blocked the token and an ancestor above that filter holds it, else
   * `ResourceNotFound`.
   */
  _missing(t: Token): ParamError {
    return missingError(this, t);
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
    throw this._mutMiss(token, 'getMut');
  }

  /** @internal The error for a `ResMut` miss (marker rule first, then where it was found). */
  _mutMiss(token: Token, call: string): Error {
    assertToken(token, `${call}(token)`);
    mutMarkerCheck(token, call);
    return new ParamError('ResourceNotFound', token, mutHint(token, this));
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
    return (this.#cleanups ??= new Ownership()).add(fn, concurrent);
  }

  /**
   * @internal {@link SystemContext.onDispose} for polestar's own hot paths: `slot.fn(slot.arg)`
   * runs at disposal (no closure per cleanup; the slot may be the caller's own record);
   * {@link SystemContext._disown} unregisters it.
   * The caller checked that this context is live.
   */
  _own<S extends Slot>(slot: S): S {
    return (this.#cleanups ??= new Ownership()).pushSlot(slot);
  }

  /** @internal Unregisters a cleanup added by {@link SystemContext._own} (idempotent; a no-op once it ran). */
  _disown(slot: Slot): void {
    this.#cleanups?.remove(slot);
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
    const d = this.#disposal;
    if (d !== undefined) return d === RUNNING || d === RUNNING_QUIET ? this.#promise() : d;
    if (this._extra === undefined && this._last === undefined && !this.#hasOwnWork()) {
      // The fast path: nothing to abort, await or run.
      this._state = DISPOSED;
      this.#disposal = RESOLVED;
      this.#release();
      return RESOLVED;
    }
    // Memoized before anything runs; the promise itself is made only when someone asks
    // for it before the disposal is over (a re-entrant or concurrent call, or this call
    // when something has to be awaited). A disposal that runs synchronously to its end
    // (the usual case) makes none.
    // Disposed on its own while an ancestor's disposal runs (from an abort listener, a
    // cleanup, an agent/disposed listener): it stays linked, so the ancestor's drive finds
    // it, awaits it and collects its errors; its own promise is then marked handled.
    const underAncestor = this.parent !== undefined && this.parent._disposalStarted();
    if (underAncestor) this.#keepLinked = true;
    this.#disposal = underAncestor ? RUNNING_QUIET : RUNNING;
    const errors: unknown[] = [];
    const deadline = performance.now() + this.server.options.disposeTimeoutMs;
    let running: Promise<void> | undefined;
    try {
      running = this.#run(errors, deadline);
    } catch (err) {
      collect(err, errors); // never expected: the steps collect their own failures
    }
    if (running === undefined) {
      this.#finish(errors, underAncestor);
      return this.#promise(); // the settled one #finish memoized
    }
    running.then(
      () => this.#finish(errors, underAncestor),
      (err: unknown) => {
        collect(err, errors);
        this.#finish(errors, underAncestor);
      },
    );
    return this.#promise();
  }

  /** The promise of a disposal in progress, made on first request. */
  #promise(): Promise<void> {
    const d = this.#disposal;
    if (d !== RUNNING && d !== RUNNING_QUIET) return d as Promise<void>;
    const p = new Promise<void>((resolve, reject) => {
      this.#settle = (errors) => (errors.length === 0 ? resolve() : reject(collected(errors, this.describe())));
    });
    // a descendant's errors reach its ancestor's promise: nobody has to await this one
    if (d === RUNNING_QUIET) p.catch(noop);
    this.#disposal = p;
    return p;
  }

  /**
   * Ends the disposal with `errors`: settles its promise, or (when nobody asked for one)
   * memoizes a settled one. `quiet` (a descendant disposed by an ancestor's drive, whose
   * errors the ancestor collects): a rejection made here is marked handled.
   */
  #finish(errors: unknown[], quiet: boolean): void {
    const settle = this.#settle;
    if (settle !== undefined) {
      this.#settle = undefined;
      settle(errors);
      return;
    }
    if (errors.length === 0) this.#disposal = RESOLVED;
    else {
      const p = Promise.reject(collected(errors, this.describe()));
      if (quiet) p.catch(noop);
      this.#disposal = p;
    }
  }

  /** Same as {@link SystemContext.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  /** The prelude, the walk and the drive; `undefined` when it all ran synchronously. */
  #run(errors: unknown[], deadline: number): Promise<void> | undefined {
    const x = this._extra;
    const prelude = x?.prelude;
    if (x !== undefined && prelude !== undefined) {
      x.prelude = undefined;
      if (this._state === LIVE) this.#walk(false, errors);
      const pending = start(prelude, errors);
      if (pending !== undefined) return thenRun(settlePending(pending, errors), () => this.#walkAndDrive(errors, deadline));
    }
    return this.#walkAndDrive(errors, deadline);
  }

  /** Marks and aborts the subtree, then disposes it (see `#drive`). */
  #walkAndDrive(errors: unknown[], deadline: number): Promise<void> | undefined {
    this.#walk(true, errors);
    return this.#drive({ frames: [], f: { node: this, errors, quiet: false }, deadline });
  }

  /**
   * The synchronous start of a disposal, iterative at any depth. With `mark`, every live
   * context of the subtree is marked disposed; without (a prelude runs first), they stay
   * live. Either way each one not yet reached is aborted: its signal, its in-flight work,
   * its scope key's liveness. Contexts already marked were reached by an earlier start.
   */
  #walk(mark: boolean, errors: unknown[]): void {
    // The traversal runs no user code, so it shares one stack (left empty); the aborts
    // after it may start other disposals, so `reached` is this walk's own.
    const stack = walkStack;
    stack.push(this);
    // `reached` is iterated while abort listeners run (which may start other walks): one
    // from a pool, given back empty.
    const reached = reachedPool.pop() ?? [];
    while (stack.length > 0) {
      const n = stack.pop() as SystemContext;
      if (n._state !== LIVE) continue;
      if (mark) n._state = DISPOSED;
      const x = n._extra;
      if (x !== undefined && !x.aborted) reached.push(n);
      for (let c = n._last; c !== undefined; c = c._prev) stack.push(c);
    }
    if (reached.length > 0) {
      // Every context is marked before any abort runs: an abort listener sees the whole subtree disposed.
      // The reason (an Error, so a stack capture) is only built when something is there to abort.
      const reason = this.#lazyReason();
      for (let i = 0; i < reached.length; i++) (reached[i] as SystemContext).#abort(reason, errors);
      // Emptied by popping: `length = 0` is a runtime call on V8 (about 60 ns, 1% of an
      // agent lifecycle's two walks), a pop of the usual one or two entries a few ns. A
      // long list is truncated instead: popping keeps its backing store, and the pool
      // would hold it for good (8 bytes per context of the largest subtree disposed).
      if (reached.length > 64) reached.length = 0;
      else while (reached.length > 0) reached.pop();
    }
    if (reachedPool.length < 8) reachedPool.push(reached);
  }

  #abort(reason: () => ContextDisposedError, errors: unknown[]): void {
    const x = this._extra as Extra;
    if (x.aborted) return;
    x.aborted = true;
    if (x.scopeRoot) {
      x.scopeRoot = false;
      this.server._scopeEnded(this._scopeKey as object, this);
    }
    x.ac?.abort(reason());
    const works = x.inflight;
    if (works === undefined || works.size === 0) return;
    // aborting may change the set: iterate a copy (none needed for the usual single work)
    if (works.size === 1) {
      abortWork(works.values().next().value as InFlight, reason, errors);
      return;
    }
    for (const w of [...works]) abortWork(w, reason, errors);
  }

  /** Whether this context has its own disposal work (not counting children and the Extra). */
  #hasOwnWork(): boolean {
    if (this.#cleanups !== undefined && this.#cleanups.size > 0) return true;
    if (this._container !== undefined) return true;
    return this._mayOwn && (this._t1 !== undefined || (this._locals !== undefined && this._locals.size > 0));
  }

  /**
   * Disposes the marked subtree, descendants first (newest first), iteratively: an
   * explicit stack of frames instead of recursion, so any depth works. A descendant whose
   * own disposal is already running is awaited; every other one is memoized as running
   * here and disposed as part of this drive. Synchronous until the first step that has
   * something to await (then it continues from the same frames); `undefined` when it
   * all ran synchronously.
   */
  #drive(d: Drive): Promise<void> | undefined {
    for (;;) {
      const f = d.f;
      const c = f.node._last;
      if (c !== undefined) {
        const running = c.#disposal;
        if (running !== undefined) {
          const waited = settle(() => (typeof running === 'symbol' ? c.#promise() : running), f.errors);
          return thenRun(waited, () => {
            if (f.node._last === c) c.#unlink(); // never loop on a child that failed to leave
            return this.#drive(d);
          });
        }
        c._state = DISPOSED;
        if (c._extra === undefined && c._last === undefined && !c.#hasOwnWork()) {
          c.#disposal = RESOLVED;
          c.#release();
          continue;
        }
        c.#disposal = RUNNING_QUIET;
        d.frames.push(f);
        const next: Frame = { node: c, errors: [], quiet: true };
        d.f = next;
        const x = c._extra;
        const prelude = x?.prelude;
        if (x !== undefined && prelude !== undefined) {
          x.prelude = undefined;
          const pending = start(prelude, next.errors);
          if (pending !== undefined) return thenRun(settlePending(pending, next.errors), () => this.#drive(d));
        }
        continue;
      }
      const own = f.node.#disposeOwn(f.errors, d.deadline);
      if (own !== undefined) return thenRun(own, () => (this.#frameDone(d) ? undefined : this.#drive(d)));
      if (this.#frameDone(d)) return undefined;
    }
  }

  /** The current frame's node is disposed: ends it and pops its parent; true when it was the drive's root. */
  #frameDone(d: Drive): boolean {
    const f = d.f;
    const parent = d.frames.pop();
    if (parent === undefined) return true;
    for (const e of f.errors) parent.errors.push(e);
    f.node.#finish(f.errors, f.quiet);
    d.f = parent;
    return false;
  }

  /**
   * This context's own part of the disposal: in-flight work, cleanups, locals, container,
   * in that order. Synchronous as far as it can be (the first step that has something to
   * await continues asynchronously); `undefined` when it was all synchronous.
   */
  #disposeOwn(errors: unknown[], deadline: number): Promise<void> | undefined {
    const x = this._extra;
    const set = x?.inflight;
    if (x !== undefined && set !== undefined && set.size > 0 && !allIdle(set)) return thenRun(this.#quiesce(x, errors, deadline), () => this.#disposeCleanups(errors));
    // nothing running: the works (if any) are given up at once, as after a wait
    if (x !== undefined) this.#quiesceIdle(x, errors);
    return this.#disposeCleanups(errors);
  }

  #disposeCleanups(errors: unknown[]): Promise<void> | undefined {
    const draining = this.#cleanups?.drain(errors);
    if (draining !== undefined) return thenRun(draining, () => this.#disposeRest(errors));
    return this.#disposeRest(errors);
  }

  /** The locals, then the container, then the release. */
  #disposeRest(errors: unknown[]): Promise<void> | undefined {
    const locals = this.#disposeLocals(errors);
    if (locals !== undefined || this._container !== undefined) return this.#disposeContainer(locals, errors);
    this.#release();
    return undefined;
  }

  async #disposeContainer(locals: Promise<void> | undefined, errors: unknown[]): Promise<void> {
    if (locals !== undefined) await locals;
    const cont = this._container;
    this._container = undefined;
    if (cont !== undefined) await settle(() => cont.unbindAllAsync(), errors);
    this.#release();
  }

  /**
   * Awaits the in-flight work tracked here (including work tracked while waiting), until
   * the deadline; then gives every awaited work up and names the ones still running.
   */
  async #quiesce(x: Extra, errors: unknown[], deadline: number): Promise<void> {
    // Called only when some work is running (`#quiesceIdle` handles the rest).
    const set = x.inflight as ReadonlySet<InFlight>;
    const seen = new Set<InFlight>();
    const done = new Set<InFlight>();
    let timedOut = false;
    for (;;) {
      const waits: Promise<unknown>[] = [];
      for (const w of set) {
        if (seen.has(w)) continue;
        seen.add(w);
        let settled: Promise<unknown>;
        try {
          settled = Promise.resolve(w.settled);
        } catch (err) {
          settled = Promise.reject(err);
        }
        const mark = (): void => void done.add(w);
        waits.push(settled.then(mark, mark));
      }
      if (waits.length === 0) break;
      const left = deadline - performance.now();
      if (left <= 0 || !(await within(Promise.all(waits), left))) {
        timedOut = true;
        break;
      }
    }
    x.quiesced = true;
    if (timedOut) {
      for (const w of seen) {
        if (!done.has(w)) errors.push(new DisposeTimeoutError(labelOf(w), this.describe(), this.server.options.disposeTimeoutMs));
      }
    }
    for (const w of seen) {
      try {
        w.giveUp?.();
      } catch (err) {
        collect(err, errors);
      }
    }
  }

  /** {@link SystemContext.#quiesce} when nothing is running: no promise, no timer. */
  #quiesceIdle(x: Extra, errors: unknown[]): void {
    const set = x.inflight;
    if (set === undefined || set.size === 0) x.quiesced = true;
    else this.#giveUpIdle(x, set, errors);
  }

  /** Stops waiting for works that are all idle: each is given up, as after any wait. */
  #giveUpIdle(x: Extra, set: ReadonlySet<InFlight>, errors: unknown[]): void {
    x.quiesced = true;
    for (const w of [...set]) {
      try {
        w.giveUp?.();
      } catch (err) {
        collect(err, errors);
      }
    }
  }

  /**
   * Disposes the disposable locals this context is the last holder of, newest first:
   * never a global, never an object `server.container` made, never one another live
   * context still holds, never one polestar already disposed. Synchronous while their
   * disposals are: returns `undefined` when all ran, else a promise of the rest.
   */
  #disposeLocals(errors: unknown[]): Promise<void> | undefined {
    if (!this._mayOwn) return undefined;
    const entries = this._localEntries();
    return this.#disposeLocalsFrom(entries, entries.length - 1, errors);
  }

  #disposeLocalsFrom(entries: readonly ResourceEntry[], from: number, errors: unknown[]): Promise<void> | undefined {
    const server = this.server;
    for (let i = from; i >= 0; i--) {
      const e = entries[i] as ResourceEntry;
      if (!e.counted) continue;
      e.counted = false;
      const v = e.value as object;
      if (server._unhold(v) > 0 || server._isServerValue(v) || !server._claimDisposal(v)) continue;
      const pending = start(() => this.#notOwnDisposal(disposeValue(v)), errors);
      if (pending !== undefined) return thenRun(settlePending(pending, errors), () => this.#disposeLocalsFrom(entries, i - 1, errors));
    }
    return undefined;
  }

  /**
   * `undefined` when `r` is the memoized disposal of this context or of an ancestor (a
   * local whose disposal disposes the context holding it, e.g. an agent's handle held in
   * its own subtree): awaiting it here would wait for itself. Otherwise `r`.
   */
  #notOwnDisposal(r: unknown): unknown {
    if (r === undefined || r === null || typeof r !== 'object') return r;
    if (r === this.#disposal) return undefined;
    for (let c = this.parent; c !== undefined; c = c.parent) if (r === c.#disposal) return undefined;
    return r;
  }

  #release(): void {
    if (!this.#keepLinked) this.#unlink();
    this._t1 = this._e1 = undefined;
    this._locals = undefined;
    this._views = undefined;
    this._viewToken = undefined;
    this._view = undefined;
    this.#outputs = undefined;
    this.#cleanups = undefined;
    const x = this._extra;
    if (x !== undefined) {
      x.inflight = undefined;
      x.prelude = undefined;
      x.quiesced = true;
    }
  }

  /** Leaves the parent's child list (or the server's roots). Idempotent. */
  #unlink(): void {
    const p = this.parent;
    if (p === undefined) {
      this.server._forget(this);
      return;
    }
    const prev = this._prev;
    const next = this._next;
    if (next !== undefined) next._prev = prev;
    else if (p._last === this) p._last = prev;
    if (prev !== undefined) prev._next = next;
    this._prev = undefined;
    this._next = undefined;
  }
}

/** Aborts one in-flight work, collecting what it throws. */
function abortWork(w: InFlight, reason: () => ContextDisposedError, errors: unknown[]): void {
  try {
    w.abort(reason);
  } catch (err) {
    collect(err, errors);
  }
}

const RESOLVED: Promise<void> = Promise.resolve();
/** The traversal stack of `#walk` (empty between walks). */
const walkStack: SystemContext[] = [];
/** Empty arrays for `#walk`'s reached contexts (a walk started from an abort listener takes another). */
const reachedPool: SystemContext[][] = [];
/** A context's disposal is running and nobody asked for its promise yet. */
const RUNNING: unique symbol = Symbol('disposal running');
/** {@link RUNNING}, for a descendant disposed by an ancestor's drive (which collects its errors). */
const RUNNING_QUIET: unique symbol = Symbol('disposal running (errors collected by an ancestor)');

function noop(): void {
  // intentionally empty
}

/** Resolves `true` when `p` settles within `ms`, `false` when the time runs out first. */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Whether every work of `set` says it is idle. */
function allIdle(set: ReadonlySet<InFlight>): boolean {
  for (const w of set) if (w.idle !== true) return false;
  return true;
}

function labelOf(w: InFlight): string {
  try {
    return String(w.label);
  } catch {
    return 'in-flight work';
  }
}

/** @internal Reads `{ parentFilter }` once and validates it. */
export function readChildOptions(options: unknown, call: string): ParentFilter | undefined {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}: options must be an object such as { parentFilter }, got ${describeValue(options)}.`);
  }
  let f: unknown;
  try {
    f = (options as ChildOptions).parentFilter;
  } catch (err) {
    throw new TypeError(`${call}: reading options.parentFilter threw (${errorText(err)}).`, { cause: err });
  }
  if (f === undefined || f instanceof ParentFilter) return f;
  throw new TypeError(
    `${call}: parentFilter must be made by ParentFilter.allowOnly([...]) or ParentFilter.allowAllExcept([...]), got ${describeValue(f)}.`,
  );
}

function readCleanupOptions(options: unknown): boolean {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`onDispose(fn, options): options must be an object such as { concurrent: true }, got ${describeValue(options)}.`);
  }
  let c: unknown;
  try {
    c = (options as CleanupOptions).concurrent;
  } catch (err) {
    throw new TypeError(`onDispose(fn, options): reading options.concurrent threw (${errorText(err)}).`, { cause: err });
  }
  if (c === undefined || typeof c === 'boolean') return c === true;
  throw new TypeError(`onDispose(fn, { concurrent }): concurrent must be a boolean, got ${describeValue(c)}.`);
}

/**
 * The error for a `Res` miss from `ctx`: `ResourceOutOfScope` when a parent filter on
 * the walk blocked the token and an ancestor above that filter holds it, else
 * `ResourceNotFound`.
 */
function missingError(ctx: SystemContext, t: Token): ParamError {
  for (let c: SystemContext | undefined = ctx; c !== undefined; c = c.parent) {
    const f = c._filter;
    if (f === undefined || f.allows(t)) continue;
    for (let a = c.parent; a !== undefined; a = a.parent) {
      if (a._local(t) !== undefined) {
        const here = c === ctx ? `this ${ctx.describe()}` : `the ${c.describe()} above this ${ctx.describe()}`;
        return new ParamError(
          'ResourceOutOfScope',
          t,
          `the ${a.describe()} holds it, but the parent filter ${String(f)} on ${here} blocks it (and no global has it); ` +
            `to let it through, ${f._fix(t)}, or insert it into a context below the filter or as a global`,
        );
      }
    }
    break;
  }
  return new ParamError('ResourceNotFound', t, notFoundHint(t, ctx));
}

function safeName(t: unknown): string {
  return typeof t === 'function' || typeof t === 'symbol' ? nameOf(t as Token) : describeValue(t);
}

/**
 * How a scope key reads in messages: its own `toString()` when its class defines one
 * (an `Agent` reads `agent "researcher"`), else `scope <id | name | class name>`.
 * Never throws.
 */
function scopeLabel(key: object): string {
  try {
    const own = (key as { toString?: unknown }).toString;
    if (typeof own === 'function' && own !== Object.prototype.toString && own !== Function.prototype.toString) {
      try {
        return String(key);
      } catch {
        // fall through to the structural label
      }
    }
    const id = (key as { id?: unknown }).id;
    if (typeof id === 'string') return `scope ${id}`;
    const n = (key as { name?: unknown }).name;
    if (typeof n === 'string' && n) return `scope ${n}`;
    return `scope ${(key.constructor as { name?: string } | undefined)?.name ?? 'object'}`;
  } catch {
    return 'scope <a key that refuses inspection>';
  }
}

function readConflict(t: Token, ctx: SystemContext): ParamError {
  return new ParamError(
    'BorrowConflict',
    t,
    `a running system holds ResMut<${nameOf(t)}> seen from this ${ctx.describe()}; Res can not read it until that system settles`,
  );
}

function writeConflict(t: Token, ctx: SystemContext, e: ResourceEntry): ParamError {
  const held = e.writing ? `a running system holds ResMut<${nameOf(t)}>` : `${e.reads} running system(s) hold Res<${nameOf(t)}>`;
  return new ParamError('BorrowConflict', t, `${held} on this ${ctx.describe()}; ResMut needs it unborrowed`);
}

/** The marker rule, checked on a miss only: a global-marked class is never a local. */
function mutMarkerCheck(t: Token, call: string): void {
  assertMayBeMutated(t, `${call}(${nameOf(t)})`);
}

function mutHint(t: Token, ctx: SystemContext): string {
  let c = ctx.parent;
  while (c !== undefined) {
    if (c._local(t) !== undefined) {
      return `found in an ancestor ${c.describe()}, but ResMut never walks up: it only sees the locals of this ${ctx.describe()}; ` +
        `insert one here with ctx.insert(...), read it with Res / ctx.get, or run the system on the context that owns it`;
    }
    c = c.parent;
  }
  if (ctx.server._globals.has(t) || ctx.server._containerHas(t)) {
    return `found as a global, but ResMut never walks up to globals: globals are read-only through contexts; ` +
      `read it with Res / ctx.get, or insert a local copy into this ${ctx.describe()}`;
  }
  return `not in the locals of this ${ctx.describe()}; ResMut never walks up. Insert it with ctx.insert(...) first`;
}

function notFoundHint(t: Token, ctx: SystemContext): string {
  return `looked in the locals of this ${ctx.describe()}, its ${ctx.depth} ancestor(s) and the globals; ` +
    (subclassGlobalHint(t, ctx.server) ?? providerOf(t) ?? `insert it with ctx.insert(...), server.insertGlobal(...), server.registerLocal(...), or bind it in server.container`);
}

/**
 * Built on a miss only: when `t` is a class and a global is stored under a subclass of it
 * (a value global is stored under its own class: `globals: [new FakeLibrary()]` is
 * `FakeLibrary`'s, not `ToolLibrary`'s), says so and how to store it under `t`.
 */
function subclassGlobalHint(t: Token, server: Server): string | undefined {
  if (typeof t !== 'function') return undefined;
  let base: unknown;
  try {
    base = t.prototype;
  } catch {
    return undefined;
  }
  if (typeof base !== 'object' || base === null) return undefined;
  const found: string[] = [];
  for (const key of server._globals.keys()) {
    if (typeof key !== 'function' || key === t) continue;
    let proto: unknown;
    try {
      proto = key.prototype;
    } catch {
      continue;
    }
    if (typeof proto === 'object' && proto !== null && Object.prototype.isPrototypeOf.call(base, proto)) found.push(nameOf(key));
  }
  if (found.length === 0) return undefined;
  const name = nameOf(t);
  const which = found.length === 1 ? `a global ${found[0]} (extends ${name}) is registered` : `globals ${found.join(', ')} (each extends ${name}) are registered`;
  return `${which}: pass [${name}, value] to provide it as ${name} (a value global is stored under its own class), ` +
    `e.g. globals: [[${name}, new ${found[0]}()]] or server.insertGlobal(${name}, value)`;
}
