/**
 * Lifetime: the one way polestar ties something to the life of something else.
 *
 * A lifetime is open, then closing, then closed (its tag, `state`). While open it takes
 * finalizers (`addFinalizer`), in-flight work (`track`) and child lifetimes (`fork`: a
 * child is closed by its parent's close, and leaves its parent when it closes on its
 * own). `close()` is memoized before anything runs: every caller, repeated, concurrent or
 * re-entrant, gets the same promise.
 *
 * Closing, from the moment it starts: the whole subtree is marked closing before any
 * abort listener runs; every `signal` in it is aborted and every tracked work aborted;
 * then descendants close first, newest first, each one awaiting its in-flight work
 * (bounded by its close timeout, measured from the start of this close), then running
 * its finalizers (last added first), then its own rest (a context's locals and
 * container). Errors are collected, a descendant's into its ancestor's, into one
 * `AggregateError` after all ran.
 *
 * Nothing is allocated until it is needed: a lifetime that gets no finalizer, whose
 * signal is never read and that has no children closes with a few field writes. Children
 * are an intrusive list (`_last` / `_prev` / `_next`): adding and removing one is a few
 * pointer writes. A `SystemContext` is a lifetime (it embeds this class's fields and
 * methods, see {@link embedLifetime}), so a context carries no second object for its
 * lifetime. The close itself (the walk and the drive) is in `close.ts`.
 */
import { hasAnyWork, lazyReason, release, runClose } from './close.js';
import { closedError, closeReason, collected } from './errors.js';
import { CLOSED, CLOSING, LifetimeExtra, OPEN, RESOLVED, RUNNING, RUNNING_QUIET, type CloseMemo, type LifetimeNode } from './node.js';
import { Finalizers, type Cleanup, type CleanupOptions, type Slot } from './finalizers.js';
import { readGroup, writeGroup, type GroupSlot } from './groups.js';
import { collect } from './settle.js';
import { abortAndGiveUp, type InFlight } from './work.js';

/** Where a lifetime is: `open`, `closing` (its close, or an ancestor's, started), `closed`. */
export type LifetimeState = 'open' | 'closing' | 'closed';

/** The close timeout of a lifetime with no parent and no timeout of its own, in milliseconds. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/**
 * @internal A lifetime: finalizers, in-flight work, child lifetimes, a lazily made
 * signal, and one memoized close. Contexts embed its fields and methods; `Lifetime.root()` makes a
 * standalone one.
 */
export class Lifetime {
  /** The parent lifetime; `undefined` for a root. */
  readonly parent: Lifetime | undefined;
  /** @internal The tag: 0 open, 1 closing (marked), 2 closed. */
  _state = OPEN;
  /** @internal The newest open child (children are an intrusive list through `_prev` / `_next`). */
  _last: Lifetime | undefined = undefined;
  /** @internal The next older open sibling. */
  _prev: Lifetime | undefined = undefined;
  /** @internal The next newer open sibling. */
  _next: Lifetime | undefined = undefined;
  /** @internal Signal, in-flight work, prelude: made on first use. */
  _extra: LifetimeExtra | undefined = undefined;
  /** @internal */
  _fin: Finalizers | undefined = undefined;
  /** @internal */
  _closeMemo: CloseMemo = undefined;
  /** @internal Closed on its own under a closing ancestor: left linked for the ancestor's drive to collect. */
  _keepLinked = false;
  /** @internal Settles the close's promise once one was asked for (see `_closePromise`). */
  _settleClose: ((errors: unknown[]) => void) | undefined = undefined;

  /** @internal Use `Lifetime.root()` or `lifetime.fork()` (a context: `ctx.child()`). */
  constructor(parent: Lifetime | undefined) {
    this.parent = parent;
  }

  /** @internal A standalone root lifetime, described as `label` in messages. */
  static root(options?: { readonly label?: string; readonly timeoutMs?: number }): Lifetime {
    return new NamedLifetime(undefined, options?.label ?? 'lifetime', options?.timeoutMs);
  }

  // ---------------------------------------------------------------- hooks (a context overrides them)

  /** How this lifetime reads in messages. */
  describe(): string {
    return 'lifetime';
  }

  /** @internal How long a close waits for in-flight work, in milliseconds. */
  _closeTimeoutMs(): number {
    return this.parent === undefined ? DEFAULT_CLOSE_TIMEOUT_MS : this.parent._closeTimeoutMs();
  }

  /** @internal Whether the subclass has close work of its own (beyond finalizers and children). */
  _hasOwnWork(): boolean {
    return false;
  }

  /** @internal The subclass's close work, run after the finalizers; `undefined` when all ran synchronously. */
  _closeRest(_errors: unknown[]): Promise<void> | undefined {
    return undefined;
  }

  /** @internal Drops what the subclass holds, once closed. */
  _released(): void {
    // nothing to drop
  }

  /** @internal A root leaving whatever lists it (a context: its server's roots). */
  _detach(): void {
    // a standalone root is in no list
  }

  /** @internal The child `fork()` makes. */
  _forkOne(): Lifetime {
    return new Lifetime(this);
  }

  // ---------------------------------------------------------------- state

  /** @internal Where this lifetime is. `closing` from the moment its close (or an ancestor's) started. */
  get state(): LifetimeState {
    if (this._state === CLOSED) return 'closed';
    return this._disposalStarted() ? 'closing' : 'open';
  }

  /** @internal Throws ContextDisposedError (naming `what` and this lifetime) once closing started. */
  _live(what: string): void {
    if (this._state !== OPEN) throw closedError(what, this.describe());
  }

  /** @internal Whether the close of this lifetime or of an ancestor has started. */
  _disposalStarted(): boolean {
    if (this._state !== OPEN || this._closeMemo !== undefined) return true;
    for (let c = this.parent; c !== undefined; c = c.parent) {
      if (c._state !== OPEN || c._closeMemo !== undefined) return true;
    }
    return false;
  }

  /** @internal Whether `r` is the memoized close promise of this lifetime or of an ancestor. */
  _isCloseOfLine(r: unknown): boolean {
    if (r === undefined || r === null || typeof r !== 'object') return false;
    if (r === this._closeMemo) return true;
    for (let c = this.parent; c !== undefined; c = c.parent) if (r === c._closeMemo) return true;
    return false;
  }

  /** @internal The extra record of this lifetime, made on first use. */
  _x(): LifetimeExtra {
    let x = this._extra;
    if (x === undefined) {
      x = this._extra = new LifetimeExtra();
      // Made after the abort pass went by: nothing in it can have been aborted yet, and
      // whatever is added now is aborted as it is added.
      if (this._disposalStarted()) x.aborted = true;
    }
    return x;
  }

  // ---------------------------------------------------------------- children

  /** @internal A new child lifetime, closed by this one's close (a finalizer of it). Throws once closing started. */
  fork(): Lifetime {
    this._live('fork()');
    return this._adopt(this._forkOne());
  }

  /** @internal The open children, oldest first (a new array; for leak reports, `inspect` and tests). */
  _openChildren<T extends Lifetime>(this: T): T[] {
    const out: T[] = [];
    for (let c = this._last; c !== undefined; c = c._prev) out.push(c as T);
    return out.reverse();
  }

  /** @internal Registers `c` (made with this lifetime as its parent) as its newest open child. */
  _adopt<C extends Lifetime>(c: C): C {
    const last = this._last;
    if (last !== undefined) {
      last._next = c;
      c._prev = last;
    }
    this._last = c;
    return c;
  }

  // ---------------------------------------------------------------- finalizers

  /**
   * @internal Adds `fn`, run when this lifetime closes (last added runs first); with
   * `{ concurrent: true }` adjacent concurrent finalizers start together. Returns the
   * function that removes it. Throws ContextDisposedError once closing started.
   */
  addFinalizer(fn: Cleanup, options?: CleanupOptions): () => void {
    this._live('addFinalizer()');
    return this._finalizers().add(fn, options?.concurrent === true);
  }

  /** @internal This lifetime's finalizer stack, made on first use (the caller checked it is open). */
  _finalizers(): Finalizers {
    return (this._fin ??= new Finalizers());
  }

  /**
   * @internal {@link Lifetime.addFinalizer} for polestar's own hot paths: `slot.fn(slot.arg)`
   * runs at close (no closure per finalizer; the slot may be the caller's own record);
   * {@link Lifetime._removeFinalizer} removes it. The caller checked that this lifetime is open.
   */
  _addFinalizerSlot<S extends Slot>(slot: S): S {
    return this._finalizers().pushSlot(slot);
  }

  /** @internal Removes a finalizer added by {@link Lifetime._addFinalizerSlot} (idempotent; a no-op once it ran). */
  _removeFinalizer(slot: Slot): void {
    this._fin?.remove(slot);
  }

  /**
   * @internal The first step of this lifetime's close, run once before its children are
   * closed: how a scope owner such as an agent leaves its registry and announces its end,
   * whichever path closes it. When its own `close()` starts the close it runs while the
   * lifetime is still open (its signal and in-flight work are already aborted); when an
   * ancestor's close reaches it, the subtree was already marked. A rejection is collected
   * with the other close errors.
   */
  get _prelude(): Cleanup | undefined {
    return this._extra?.prelude;
  }

  /** @internal Sets the prelude (see the getter). */
  set _prelude(fn: Cleanup | undefined) {
    if (fn === undefined && this._extra === undefined) return;
    this._x().prelude = fn;
  }

  /** @internal Runs `fn(this)` once, first, when the abort pass of a close reaches this lifetime. */
  _onAbortPass(fn: ((lt: Lifetime) => void) | undefined): void {
    this._x().onAbort = fn as ((lt: LifetimeNode) => void) | undefined; // it is called with this lifetime
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
      if (this._disposalStarted()) ac.abort(closeReason(this.describe()));
    }
    return ac.signal;
  }

  /**
   * @internal Tracks in-flight work: the close of this lifetime (or of an ancestor) aborts
   * it when it starts, and awaits it (bounded by the close timeout) before running this
   * lifetime's finalizers. Returns the function that untracks it. On a lifetime whose
   * close already started, the work is aborted at once (and, once the close stopped
   * waiting, given up at once).
   */
  track(work: InFlight): () => void {
    const x = this._x();
    if (x.quiesced) {
      abortAndGiveUp(work, lazyReason(this));
      return noop;
    }
    if (x.aborted) {
      try {
        work.abort(lazyReason(this));
      } catch {
        // the close's errors are not reachable from here
      }
    }
    const set = (x.inflight ??= new Set());
    set.add(work);
    return () => void set.delete(work);
  }

  /**
   * @internal The work group of `slot` on this lifetime: made with `slot.make()` and
   * tracked here (see {@link Lifetime.track}) the first time it is asked for, the same
   * group after, also once closed. Its members join and leave it with no tracking of
   * their own: one in-flight record per lifetime for a whole module.
   */
  group<G extends InFlight>(slot: GroupSlot<G>): G {
    const x = this._x();
    let g = readGroup(x, slot.index) as G | undefined;
    if (g === undefined) {
      g = slot.make();
      writeGroup(x, slot.index, g);
      this.track(g);
    }
    return g;
  }

  /** @internal The work group of `slot` if {@link Lifetime.group} made one here; makes nothing. */
  groupIfMade<G extends InFlight>(slot: GroupSlot<G>): G | undefined {
    const x = this._extra;
    return x === undefined ? undefined : (readGroup(x, slot.index) as G | undefined);
  }

  // ---------------------------------------------------------------- close

  /**
   * @internal Closes this lifetime (see the module comment for the order). Memoized
   * before anything runs: repeated, concurrent and re-entrant calls share one promise.
   */
  close(): Promise<void> {
    const d = this._closeMemo;
    if (d !== undefined) return d === RUNNING || d === RUNNING_QUIET ? this._closePromise() : d;
    if (this._extra === undefined && this._last === undefined && !hasAnyWork(this)) {
      // The fast path: nothing to abort, await or run.
      this._state = CLOSING;
      this._closeMemo = RESOLVED;
      release(this);
      return RESOLVED;
    }
    // Memoized before anything runs; the promise itself is made only when someone asks
    // for it before the close is over (a re-entrant or concurrent call, or this call when
    // something has to be awaited). A close that runs synchronously to its end (the usual
    // case) makes none. Closed on its own while an ancestor's close runs (from an abort
    // listener, a finalizer, an agent/disposed listener): it stays linked, so the
    // ancestor's drive finds it, awaits it and collects its errors; its own promise is
    // then marked handled.
    const underAncestor = this.parent !== undefined && this.parent._disposalStarted();
    if (underAncestor) this._keepLinked = true;
    this._closeMemo = underAncestor ? RUNNING_QUIET : RUNNING;
    const errors: unknown[] = [];
    const deadline = performance.now() + this._closeTimeoutMs();
    let running: Promise<void> | undefined;
    try {
      running = runClose(this, errors, deadline);
    } catch (err) {
      collect(err, errors); // never expected: the steps collect their own failures
    }
    if (running === undefined) {
      this._finishClose(errors, underAncestor);
      return this._closePromise(); // the settled one _finishClose memoized
    }
    running.then(
      () => this._finishClose(errors, underAncestor),
      (err: unknown) => {
        collect(err, errors);
        this._finishClose(errors, underAncestor);
      },
    );
    return this._closePromise();
  }

  /** @internal The promise of a close in progress, made on first request. */
  _closePromise(): Promise<void> {
    const d = this._closeMemo;
    if (d !== RUNNING && d !== RUNNING_QUIET) return d as Promise<void>;
    const p = new Promise<void>((resolve, reject) => {
      this._settleClose = (errors) => (errors.length === 0 ? resolve() : reject(collected(errors, this.describe())));
    });
    // a descendant's errors reach its ancestor's promise: nobody has to await this one
    if (d === RUNNING_QUIET) p.catch(noop);
    this._closeMemo = p;
    return p;
  }

  /** @internal Ends the close with `errors`: settles its promise, or memoizes a settled one. `quiet`: a rejection is marked handled. */
  _finishClose(errors: unknown[], quiet: boolean): void {
    const settleIt = this._settleClose;
    if (settleIt !== undefined) {
      this._settleClose = undefined;
      settleIt(errors);
      return;
    }
    if (errors.length === 0) this._closeMemo = RESOLVED;
    else {
      const p = Promise.reject(collected(errors, this.describe()));
      if (quiet) p.catch(noop);
      this._closeMemo = p;
    }
  }
}

/** A standalone lifetime with a label and, optionally, its own close timeout. */
class NamedLifetime extends Lifetime {
  readonly #label: string;
  readonly #timeoutMs: number | undefined;

  constructor(parent: Lifetime | undefined, label: string, timeoutMs: number | undefined) {
    super(parent);
    this.#label = label;
    this.#timeoutMs = timeoutMs;
  }

  override describe(): string {
    return this.#label;
  }

  override _closeTimeoutMs(): number {
    return this.#timeoutMs ?? super._closeTimeoutMs();
  }

  override _forkOne(): Lifetime {
    return new NamedLifetime(this, `child of ${this.#label}`, undefined);
  }
}

function noop(): void {
  // intentionally empty
}

/**
 * @internal Makes instances of `cls` lifetimes without a class hierarchy: installs every
 * method and accessor of `Lifetime` that `cls` does not define itself on its prototype.
 * `cls` must declare and initialize the lifetime's fields (`parent`, `_state`, `_last`,
 * `_prev`, `_next`, `_extra`, `_fin`, `_closeMemo`, `_keepLinked`, `_settleClose`) in its
 * constructor, and declare `interface Cls extends Lifetime {}` for the types. (A derived
 * class's construction costs about twice a plain one's on V8: a context, made every turn,
 * embeds its lifetime instead.)
 */
export function embedLifetime(cls: abstract new (...args: never[]) => unknown): void {
  const proto = cls.prototype as object;
  for (const [key, desc] of Object.entries(Object.getOwnPropertyDescriptors(Lifetime.prototype))) {
    if (key === 'constructor' || Object.prototype.hasOwnProperty.call(proto, key)) continue;
    Object.defineProperty(proto, key, desc);
  }
}
