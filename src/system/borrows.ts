/**
 * Borrows: taking and releasing the read / write borrows of running
 * systems on resource entries, the holders named in conflict messages, and the
 * waiting-borrow queues.
 *
 * Borrow state lives on the `ResourceEntry` (`reads`, `writing`, and `queue`, the FIFO of
 * waiting acquirers, made on first use). Fail-fast acquirers (`'fail'` runs, `ctx.get` /
 * `ctx.getMut`) look at the current holders only; only waiting acquirers ever queue.
 *
 * Cost model: a synchronous run takes and releases its borrows with plain field writes;
 * releasing checks `entry.queue` for `undefined` (the one extra cost waiting borrows add
 * to the hot path). Everything else here (a {@link Hold}, a {@link Waiter}, a queue) is
 * made only for work that outlives the call that started it.
 */
import { ContextDisposedError, ParamError } from '../context/errors.js';
import { groupSlot } from '../lifetime/groups.js';
import type { InFlight } from '../lifetime/work.js';
import { MAX_TIMEOUT_MS } from '../context/server-options.js';
import type { ResourceEntry } from '../context/resource-entry.js';
import type { SystemContext } from '../context/system-context.js';
import { describeValue, nameOf, type Token } from '../context/token.js';

/** @internal Borrowed entries of one run, indexed by parameter. */
export type Held = (ResourceEntry | undefined)[];

/** @internal One borrow a waiting acquirer needs: the entry, read or write, and where it goes in `held`. */
export interface BorrowRequest {
  readonly entry: ResourceEntry;
  readonly write: boolean;
  readonly token: Token;
  /** The parameter index (the slot in `held`). */
  readonly index: number;
}

/** @internal One place in an entry's waiting queue. */
export interface QueueItem {
  readonly waiter: Waiter;
  readonly write: boolean;
}

/** The hint every `'fail'` conflict of a system adds: how to wait instead. */
export const WAIT_HINT =
  "to wait for the borrow instead of failing at once, use new Server({ borrows: 'wait' }) or system(params, fn, { borrows: 'wait' })";

// ------------------------------------------------------------------ holders

/** Async holders whose borrows are taken: a doubly linked list, O(1) in and out. */
const holders: { first: Hold | undefined } = { first: undefined };

const RESOLVED: Promise<void> = Promise.resolve();

/** The group slot of the borrow holders: one {@link HoldGroup} per context with async holders. */
const HOLDS = groupSlot('borrow holders', () => new HoldGroup());

/**
 * @internal Work that holds borrows beyond the call that took them: a system run whose
 * body returned a promise, a `withMut` / `withRes` callback, a tool system, and any of
 * them while it waits for its borrows.
 *
 * It joins the {@link HoldGroup} of the context it runs on, so that context's disposal
 * aborts it (a waiter rejects at once with `ContextDisposedError`), awaits it, and then
 * gives it up, which releases its borrows even if the body never settles.
 * While its borrows are taken it is linked into the holder list, so conflict and
 * timeout messages can name it.
 */
export class Hold {
  /** How the holder reads in messages, e.g. `system "summarize"`. */
  readonly label: string;
  /** The context the work runs on. */
  readonly ctx: SystemContext;
  /** The entries it borrowed, by parameter. */
  readonly held: Held;
  /** Per parameter: whether it is a write borrow. */
  readonly writes: readonly boolean[];
  /** Set while it waits for its borrows. */
  waiter: Waiter | undefined = undefined;
  /** Neighbours in the holder list. */
  prev: Hold | undefined = undefined;
  next: Hold | undefined = undefined;
  /** Neighbours in its context's group. */
  gprev: Hold | undefined = undefined;
  gnext: Hold | undefined = undefined;
  #group: HoldGroup | undefined = undefined;
  #linked = false;
  #released = false;

  constructor(label: string, ctx: SystemContext, held: Held, writes: readonly boolean[]) {
    this.label = label;
    this.ctx = ctx;
    this.held = held;
    this.writes = writes;
  }

  /** Joins the group of its context (made and tracked there on first use). Call once, before anything awaits. */
  track(): void {
    const g = this.ctx.group(HOLDS);
    this.#group = g;
    g.add(this);
  }

  /** The disposal of its context started: a waiter stops waiting; a running body goes on (it can watch `ctx.signal`). */
  abort(reason: () => unknown): void {
    this.waiter?.fail(disposedError(reason(), this.ctx, this.label));
  }

  /** Its borrows were taken: link it, so messages can name it. */
  link(): void {
    if (this.#linked || this.#released) return;
    this.#linked = true;
    const head = holders.first;
    this.next = head;
    if (head !== undefined) head.prev = this;
    holders.first = this;
  }

  /** Releases its borrows (once) and unlinks it. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#unlink();
    release(this.held, this.writes);
  }

  /** Gives back borrows it was granted, to wait again (what it needs changed meanwhile). */
  retreat(): void {
    this.#unlink();
    release(this.held, this.writes);
  }

  #unlink(): void {
    if (!this.#linked) return;
    this.#linked = false;
    if (this.prev !== undefined) this.prev.next = this.next;
    else holders.first = this.next;
    if (this.next !== undefined) this.next.prev = this.prev;
    this.prev = this.next = undefined;
  }

  /** The work is over: release its borrows and leave its group. */
  end(): void {
    this.release();
    const g = this.#group;
    if (g !== undefined) {
      this.#group = undefined;
      g.remove(this);
    }
  }
}

/**
 * @internal The async holders running on one context, as one in-flight
 * record: tracked on the context once (when its first holder starts), it aborts, awaits
 * and gives up all of them. Tracking each run separately would cost a `Set` insertion
 * and deletion per run; a group costs four pointer writes.
 */
export class HoldGroup implements InFlight {
  #first: Hold | undefined = undefined;
  #count = 0;
  #idle: { promise: Promise<void>; resolve: () => void } | undefined = undefined;
  #abortReason: (() => unknown) | undefined = undefined;
  #aborted = false;
  #gaveUp = false;

  /** The holders still running, for the disposal's timeout message. */
  get label(): string {
    const names: string[] = [];
    for (let h = this.#first; h !== undefined; h = h.gnext) names.push(h.label);
    return names.join(', ') || 'no system';
  }

  /** No holder is running. */
  get idle(): boolean {
    return this.#count === 0;
  }

  /** Settles once no holder is running (at once when none is); never rejects. */
  get settled(): Promise<unknown> {
    if (this.#count === 0) return RESOLVED;
    if (this.#idle === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  add(h: Hold): void {
    const head = this.#first;
    h.gnext = head;
    if (head !== undefined) head.gprev = h;
    this.#first = h;
    this.#count++;
    if (this.#aborted) h.abort(this.#abortReason as () => unknown);
    if (this.#gaveUp) h.release();
  }

  remove(h: Hold): void {
    if (h.gprev !== undefined) h.gprev.gnext = h.gnext;
    else this.#first = h.gnext;
    if (h.gnext !== undefined) h.gnext.gprev = h.gprev;
    h.gprev = h.gnext = undefined;
    if (--this.#count === 0 && this.#idle !== undefined) {
      this.#idle.resolve();
      this.#idle = undefined;
    }
  }

  /** The disposal of the context started: every waiter in it rejects. */
  abort(reason: () => unknown): void {
    this.#aborted = true;
    this.#abortReason = reason;
    for (let h = this.#first; h !== undefined; ) {
      const next = h.gnext;
      h.abort(reason);
      h = next;
    }
  }

  /** The disposal stopped waiting: every holder's borrows are released, settled or not. */
  giveUp(): void {
    this.#gaveUp = true;
    for (let h = this.#first; h !== undefined; h = h.gnext) h.release();
  }
}

/** `label (Res)` / `label (ResMut)` of every linked holder of `e`. */
function holdersOf(e: ResourceEntry): string[] {
  const names: string[] = [];
  for (let h = holders.first; h !== undefined; h = h.next) {
    const held = h.held;
    for (let i = 0; i < held.length; i++) {
      if (held[i] === e) names.push(`${h.label} (${h.writes[i] ? 'ResMut' : 'Res'})`);
    }
  }
  return names;
}

function disposedError(reason: unknown, ctx: SystemContext, label: string): ContextDisposedError {
  return reason instanceof ContextDisposedError ? reason : new ContextDisposedError(`a waiting borrow of ${label}`, ctx.describe());
}

// ------------------------------------------------------------------ release

/**
 * @internal Releases every borrow recorded in `held` (clearing the slots) and lets
 * waiting acquirers of those entries in.
 */
export function release(held: Held, writes: readonly boolean[]): void {
  for (let i = 0; i < held.length; i++) {
    const e = held[i];
    if (e === undefined) continue;
    if (writes[i]) e.writing = false;
    else e.reads--;
    held[i] = undefined;
    if (e.queue !== undefined) pump(e);
  }
}

// ------------------------------------------------------------------ 'fail' conflicts

/**
 * @internal The `BorrowConflict` of a `'fail'` fetch by a system: names the holder(s)
 * when they are known, and how to wait instead.
 */
export function failConflict(t: Token, ctx: SystemContext, e: ResourceEntry, write: boolean): ParamError {
  const n = nameOf(t);
  const named = holdersOf(e);
  let held: string;
  if (!write) {
    held = `${named.length > 0 ? named.join(', ') : 'a running system'} holds ResMut<${n}> seen from this ${ctx.describe()}; Res can not read it until that settles`;
  } else if (e.writing) {
    held = `${named.length > 0 ? named.join(', ') : 'a running system'} holds ResMut<${n}> on this ${ctx.describe()}; ResMut needs it unborrowed`;
  } else {
    held = `${named.length > 0 ? named.join(', ') : `${e.reads} running system(s)`} hold${named.length === 1 ? 's' : ''} Res<${n}> on this ${ctx.describe()}; ResMut needs it unborrowed`;
  }
  return new ParamError('BorrowConflict', t, `${held}; ${WAIT_HINT}`);
}

// ------------------------------------------------------------------ waiting

/** Whether `r` can be granted now: the holders allow it and no earlier waiter conflicts. */
function grantableOne(r: BorrowRequest, w: Waiter | undefined): boolean {
  const e = r.entry;
  if (r.write ? e.writing || e.reads > 0 : e.writing) return false;
  const q = e.queue;
  if (q !== undefined) {
    for (let i = 0; i < q.length; i++) {
      const it = q[i];
      if (it.waiter === w) break;
      if (it.write || r.write) return false;
    }
  }
  return true;
}

function grantable(reqs: readonly BorrowRequest[], w: Waiter | undefined): boolean {
  for (let i = 0; i < reqs.length; i++) if (!grantableOne(reqs[i], w)) return false;
  return true;
}

function take(reqs: readonly BorrowRequest[], held: Held): void {
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i];
    if (r.write) r.entry.writing = true;
    else r.entry.reads++;
    held[r.index] = r.entry;
  }
}

/**
 * @internal Takes every borrow of `reqs` at once when all can be granted now (the
 * holders allow it and nobody queued earlier conflicts); `false` takes none.
 */
export function tryTake(reqs: readonly BorrowRequest[], held: Held): boolean {
  if (!grantable(reqs, undefined)) return false;
  take(reqs, held);
  return true;
}

/**
 * @internal An acquirer waiting for all its borrows at once. It holds none while it
 * waits; it is granted when every one can be, FIFO per entry (a reader never overtakes a
 * queued writer, a writer never overtakes any earlier waiter of that entry).
 */
export class Waiter {
  readonly reqs: readonly BorrowRequest[];
  readonly hold: Hold;
  readonly timeoutMs: number;
  readonly promise: Promise<void>;
  #resolve!: () => void;
  #reject!: (err: unknown) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #done = false;
  #onTimeout: (index: number, err: ParamError) => unknown;

  /**
   * @param onTimeout - turns the timeout's `BorrowConflict` into the error to reject with;
   *   `index` is the parameter whose borrow could not be granted.
   */
  constructor(reqs: readonly BorrowRequest[], hold: Hold, timeoutMs: number, onTimeout: (index: number, err: ParamError) => unknown) {
    this.reqs = reqs;
    this.hold = hold;
    this.timeoutMs = timeoutMs;
    this.#onTimeout = onTimeout;
    this.promise = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Joins the queue of every entry (all at once, so every queue sees waiters in one order) and starts the clock. */
  start(): void {
    for (const r of this.reqs) (r.entry.queue ??= []).push({ waiter: this, write: r.write });
    this.hold.waiter = this;
    this.#timer = setTimeout(() => this.#timeout(), this.timeoutMs);
  }

  /** Granted: takes every borrow into the hold. */
  grant(): void {
    this.#leave();
    take(this.reqs, this.hold.held);
    this.hold.link();
    this.#resolve();
  }

  /** Stops waiting with `err` (the context's disposal, the caller's signal); lets others in. */
  fail(err: unknown): void {
    if (this.#done) return;
    this.#leave();
    this.#pumpMine();
    this.#reject(err);
  }

  #timeout(): void {
    if (this.#done) return;
    const r = this.#blocked();
    const err = this.#timeoutError(r);
    this.#leave();
    this.#pumpMine();
    this.#reject(this.#onTimeout(r.index, err));
  }

  #leave(): void {
    this.#done = true;
    this.hold.waiter = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const r of this.reqs) {
      const q = r.entry.queue;
      if (q === undefined) continue;
      for (let i = q.length - 1; i >= 0; i--) if (q[i].waiter === this) q.splice(i, 1);
      if (q.length === 0) r.entry.queue = undefined;
    }
  }

  #pumpMine(): void {
    for (const r of this.reqs) if (r.entry.queue !== undefined) pump(r.entry);
  }

  /** The first borrow (declaration order) that still can not be granted. */
  #blocked(): BorrowRequest {
    return this.reqs.find((x) => !grantableOne(x, this)) ?? this.reqs[0];
  }

  /** `BorrowConflict` for the blocked borrow `r`, naming its holders. */
  #timeoutError(r: BorrowRequest): ParamError {
    const e = r.entry;
    const n = nameOf(r.token);
    const holders = holdersOf(e);
    let why: string;
    if (holders.length > 0) why = `held by ${holders.join(', ')}`;
    else if (e.writing || (r.write && e.reads > 0)) why = 'held by a running system';
    else {
      const ahead: string[] = [];
      for (const it of e.queue ?? []) {
        if (it.waiter === this) break;
        if (it.write || r.write) ahead.push(`${it.waiter.hold.label} (${it.write ? 'ResMut' : 'Res'})`);
      }
      why = `queued behind ${ahead.join(', ') || 'earlier waiters'}`;
    }
    return new ParamError(
      'BorrowConflict',
      r.token,
      `${this.hold.label} waited ${this.timeoutMs} ms for ${r.write ? 'ResMut' : 'Res'}<${n}> on this ${this.hold.ctx.describe()}, ${why}; ` +
        `raise borrowTimeoutMs, or make the holder finish sooner (a wait on a borrow that the waiting code's own run holds, ` +
        `such as a withMut or a tool system inside a system body, can only end this way)`,
    );
  }
}

/** Grants every waiter of `e` that can be granted now, in queue order. */
function pump(e: ResourceEntry): void {
  const q = e.queue;
  if (q === undefined) return;
  for (let i = 0; i < q.length; ) {
    const w = q[i].waiter;
    if (grantable(w.reqs, w)) {
      w.grant(); // removes its items from q (all at or after i)
      if (e.queue !== q) return;
    } else i++;
  }
}

/**
 * @internal Reads a `borrowTimeoutMs`-like option: 0 to 2,147,483,647 ms (the longest
 * delay a Node timer honours), as `new Server({ borrowTimeoutMs })` accepts.
 */
export function checkTimeout(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMEOUT_MS) {
    throw new TypeError(`${where} must be a number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, got ${describeValue(value)}.`);
  }
  return value;
}
