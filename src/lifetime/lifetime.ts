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
 * pointer writes. A `SystemContext` is a lifetime (it extends this class), so a context
 * carries no second object for its lifetime.
 */
import { closedError, closeReason, closeTimeoutError, collected } from './errors.js';
import { Finalizers, type Cleanup, type CleanupOptions, type Slot } from './finalizers.js';
import { collect, settle, settlePending, start, thenRun } from './settle.js';
import { abortAndGiveUp, abortWork, allIdle, awaitWorks, giveUpAll, labelOf, type InFlight } from './work.js';
import type { ContextDisposedError } from '../context/errors.js';
import type { HoldGroup } from '../system/borrows.js';

/** Where a lifetime is: `open`, `closing` (its close, or an ancestor's, started), `closed`. */
export type LifetimeState = 'open' | 'closing' | 'closed';

/** The tag of `Lifetime._state`: 0 open, 1 closing (marked), 2 closed. */
const OPEN = 0;
const CLOSING = 1;
const CLOSED = 2;

/** The close timeout of a lifetime with no parent and no timeout of its own, in milliseconds. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/** @internal What a lifetime needs only when something uses it: made on first use. */
export class LifetimeExtra {
  /** The controller behind `signal`. Kept after release, so `signal` stays the same object. */
  ac: AbortController | undefined = undefined;
  /** Tracked in-flight work. */
  inflight: Set<InFlight> | undefined = undefined;
  /** See `Lifetime._prelude`. */
  prelude: Cleanup | undefined = undefined;
  /** Run once, first, when the abort pass reaches this lifetime (see `Lifetime._onAbortPass`). */
  onAbort: ((lt: Lifetime) => void) | undefined = undefined;
  /** The abort pass reached this lifetime (its signal and in-flight work were aborted). */
  aborted = false;
  /** The close stopped waiting for in-flight work: later work is aborted and given up at once. */
  quiesced = false;
  /**
   * The async borrow holders running on this context (one in-flight record for all of
   * them). Kept for the borrow runner until it keeps its own group per lifetime.
   */
  holds: HoldGroup | undefined = undefined;
  /** The tool calls in flight through or of this context. Kept for the tools registry likewise. */
  calls: InFlight | undefined = undefined;
}

interface Frame {
  readonly node: Lifetime;
  readonly errors: unknown[];
  /** A descendant closed by the drive (its errors also go to its parent's frame). */
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

/** A close is running and nobody asked for its promise yet. */
const RUNNING: unique symbol = Symbol('close running');
/** {@link RUNNING}, for a descendant closed by an ancestor's drive (which collects its errors). */
const RUNNING_QUIET: unique symbol = Symbol('close running (errors collected by an ancestor)');
const RESOLVED: Promise<void> = Promise.resolve();

/**
 * @internal A lifetime: finalizers, in-flight work, child lifetimes, a lazily made
 * signal, and one memoized close. Contexts extend it; `Lifetime.root()` makes a
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
  _closeMemo: Promise<void> | typeof RUNNING | typeof RUNNING_QUIET | undefined = undefined;
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
    this._x().onAbort = fn;
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
      abortAndGiveUp(work, this._lazyReason());
      return noop;
    }
    if (x.aborted) {
      try {
        work.abort(this._lazyReason());
      } catch {
        // the close's errors are not reachable from here
      }
    }
    const set = (x.inflight ??= new Set());
    set.add(work);
    return () => void set.delete(work);
  }

  /** @internal The abort reason, built on first use (an `Error` captures a stack: skipped when nothing needs it). */
  _lazyReason(): () => ContextDisposedError {
    let why: ContextDisposedError | undefined;
    return () => (why ??= closeReason(this.describe()));
  }

  // ---------------------------------------------------------------- close

  /**
   * @internal Closes this lifetime (see the module comment for the order). Memoized
   * before anything runs: repeated, concurrent and re-entrant calls share one promise.
   */
  close(): Promise<void> {
    const d = this._closeMemo;
    if (d !== undefined) return d === RUNNING || d === RUNNING_QUIET ? this._closePromise() : d;
    if (this._extra === undefined && this._last === undefined && !this._hasAnyWork()) {
      // The fast path: nothing to abort, await or run.
      this._state = CLOSING;
      this._closeMemo = RESOLVED;
      this._release();
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
      running = this._runClose(errors, deadline);
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

  /** @internal The prelude, the walk and the drive; `undefined` when it all ran synchronously. */
  _runClose(errors: unknown[], deadline: number): Promise<void> | undefined {
    const x = this._extra;
    const prelude = x?.prelude;
    if (x !== undefined && prelude !== undefined) {
      x.prelude = undefined;
      if (this._state === OPEN) this._walk(false, errors);
      const pending = start(prelude, errors);
      if (pending !== undefined) return thenRun(settlePending(pending, errors), () => this._walkAndDrive(errors, deadline));
    }
    return this._walkAndDrive(errors, deadline);
  }

  /** @internal Marks and aborts the subtree, then closes it (see `_drive`). */
  _walkAndDrive(errors: unknown[], deadline: number): Promise<void> | undefined {
    this._walk(true, errors);
    return this._drive({ frames: [], f: { node: this, errors, quiet: false }, deadline });
  }

  /** @internal
   * The synchronous start of a close, iterative at any depth. With `mark`, every open
   * lifetime of the subtree is marked closing; without (a prelude runs first), they stay
   * open. Either way each one not yet reached is aborted: its abort hook, its signal, its
   * in-flight work. Lifetimes already marked were reached by an earlier start.
   */
  _walk(mark: boolean, errors: unknown[]): void {
    // The traversal runs no user code, so it shares one stack (left empty); the aborts
    // after it may start other closes, so `reached` is this walk's own, from a pool.
    const stack = walkStack;
    stack.push(this);
    const reached = reachedPool.pop() ?? [];
    while (stack.length > 0) {
      const n = stack.pop() as Lifetime;
      if (n._state !== OPEN) continue;
      if (mark) n._state = CLOSING;
      const x = n._extra;
      if (x !== undefined && !x.aborted) reached.push(n);
      for (let c = n._last; c !== undefined; c = c._prev) stack.push(c);
    }
    if (reached.length > 0) {
      // Every lifetime is marked before any abort runs: an abort listener sees the whole
      // subtree closing. The reason (an Error: a stack capture) is built only when needed.
      const reason = this._lazyReason();
      for (let i = 0; i < reached.length; i++) (reached[i] as Lifetime)._abortOwn(reason, errors);
      // Emptied by popping (`length = 0` is a runtime call on V8); a long list is
      // truncated instead, so the pool never keeps a large backing store.
      if (reached.length > 64) reached.length = 0;
      else while (reached.length > 0) reached.pop();
    }
    if (reachedPool.length < 8) reachedPool.push(reached);
  }

  /** @internal */
  _abortOwn(reason: () => ContextDisposedError, errors: unknown[]): void {
    const x = this._extra as LifetimeExtra;
    if (x.aborted) return;
    x.aborted = true;
    const hook = x.onAbort;
    if (hook !== undefined) {
      x.onAbort = undefined;
      hook(this);
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

  /** @internal Whether this lifetime has its own close work (not counting children and the extra record). */
  _hasAnyWork(): boolean {
    return (this._fin !== undefined && this._fin.size > 0) || this._hasOwnWork();
  }

  /** @internal
   * Closes the marked subtree, descendants first (newest first), iteratively: an explicit
   * stack of frames instead of recursion, so any depth works. A descendant whose own close
   * is already running is awaited; every other one is memoized as running here and closed
   * as part of this drive. Synchronous until the first step that has something to await
   * (then it continues from the same frames); `undefined` when it all ran synchronously.
   */
  _drive(d: Drive): Promise<void> | undefined {
    for (;;) {
      const f = d.f;
      const c = f.node._last;
      if (c !== undefined) {
        const running = c._closeMemo;
        if (running !== undefined) {
          const waited = settle(() => (typeof running === 'symbol' ? c._closePromise() : running), f.errors);
          return thenRun(waited, () => {
            if (f.node._last === c) c._unlink(); // never loop on a child that failed to leave
            return this._drive(d);
          });
        }
        c._state = CLOSING;
        if (c._extra === undefined && c._last === undefined && !c._hasAnyWork()) {
          c._closeMemo = RESOLVED;
          c._release();
          continue;
        }
        c._closeMemo = RUNNING_QUIET;
        d.frames.push(f);
        const next: Frame = { node: c, errors: [], quiet: true };
        d.f = next;
        const x = c._extra;
        const prelude = x?.prelude;
        if (x !== undefined && prelude !== undefined) {
          x.prelude = undefined;
          const pending = start(prelude, next.errors);
          if (pending !== undefined) return thenRun(settlePending(pending, next.errors), () => this._drive(d));
        }
        continue;
      }
      const own = f.node._closeOwn(f.errors, d.deadline);
      if (own !== undefined) return thenRun(own, () => (this._frameDone(d) ? undefined : this._drive(d)));
      if (this._frameDone(d)) return undefined;
    }
  }

  /** @internal The current frame's node is closed: ends it and pops its parent; true when it was the drive's root. */
  _frameDone(d: Drive): boolean {
    const f = d.f;
    const parent = d.frames.pop();
    if (parent === undefined) return true;
    for (const e of f.errors) parent.errors.push(e);
    f.node._finishClose(f.errors, f.quiet);
    d.f = parent;
    return false;
  }

  /** @internal
   * This lifetime's own part of the close: in-flight work, finalizers, the subclass's
   * rest, in that order. Synchronous as far as it can be; `undefined` when it all was.
   */
  _closeOwn(errors: unknown[], deadline: number): Promise<void> | undefined {
    const x = this._extra;
    const set = x?.inflight;
    if (x !== undefined && set !== undefined && set.size > 0 && !allIdle(set)) {
      return thenRun(this._quiesce(x, set, errors, deadline), () => this._closeFinalizers(errors));
    }
    // nothing running: the works (if any) are given up at once, as after a wait
    if (x !== undefined) {
      x.quiesced = true;
      if (set !== undefined && set.size > 0) giveUpAll(set, errors);
    }
    return this._closeFinalizers(errors);
  }

  /** @internal */
  _closeFinalizers(errors: unknown[]): Promise<void> | undefined {
    const draining = this._fin?.drain(errors);
    if (draining !== undefined) return thenRun(draining, () => this._closeRestThenRelease(errors));
    return this._closeRestThenRelease(errors);
  }

  /** @internal */
  _closeRestThenRelease(errors: unknown[]): Promise<void> | undefined {
    const rest = this._closeRest(errors);
    if (rest === undefined) {
      this._release();
      return undefined;
    }
    return rest.then(() => this._release());
  }

  /** @internal Awaits the running works (bounded by the deadline), then gives every awaited one up, naming the late ones. */
  async _quiesce(x: LifetimeExtra, set: ReadonlySet<InFlight>, errors: unknown[], deadline: number): Promise<void> {
    const { seen, late } = await awaitWorks(set, deadline);
    x.quiesced = true;
    if (late.length > 0) {
      const where = this.describe();
      const ms = this._closeTimeoutMs();
      for (const w of late) errors.push(closeTimeoutError(labelOf(w), where, ms));
    }
    giveUpAll(seen, errors);
  }

  /** @internal */
  _release(): void {
    if (!this._keepLinked) this._unlink();
    this._state = CLOSED;
    this._fin = undefined;
    const x = this._extra;
    if (x !== undefined) {
      x.inflight = undefined;
      x.prelude = undefined;
      x.quiesced = true;
    }
    this._released();
  }

  /** @internal Leaves the parent's child list (or, for a root, whatever lists it). Idempotent. */
  _unlink(): void {
    const p = this.parent;
    if (p === undefined) {
      this._detach();
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

/** The traversal stack of `#walk` (empty between walks). */
const walkStack: Lifetime[] = [];
/** Empty arrays for `#walk`'s reached lifetimes (a walk started from an abort listener takes another). */
const reachedPool: Lifetime[][] = [];

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
