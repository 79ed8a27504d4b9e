/**
 * @internal The sessions plugin's view of its store: every call bounded by
 * `SessionsPlugin({ storeTimeoutMs })`, `create`/`acquire` carrying this plugin's owner
 * incarnation, and every fenced write preceded by a lease renewal when the lease is due
 * for one (so a loop of turns that never yields to timers keeps its lease).
 *
 * A call past its bound is abandoned, not cancelled: the promise the store returned is
 * still observed (its late settlement is ignored), and polestar's own stores stop the work
 * themselves (they are told the bound through the store-bound hook).
 *
 * The calls of one store share one bound, so their deadlines come in the order the calls
 * were made: they wait in one queue watched by one timer (armed at most once per bound,
 * never one per call), which keeps the cost of a turn's store calls to a few small objects.
 */
import { SessionError, isSessionError } from '../errors.js';
import { storeChannel, trace, type Mutable, type StoreOperation, type StoreTraceContext } from '../../observability/channels.js';
import type * as store from './contract.js';
import { DEFAULT_POLL_MS } from './input.js';

/** The errors made by a bound that passed (so disposal and the turn path can tell a timeout from a refusal). */
const timeouts = new WeakSet<object>();

/** @internal True when `err` is the rejection of a store call that did not answer within its bound. */
export function isStoreTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && timeouts.has(err);
}

/**
 * @internal Settles like `work`, or rejects with `onTimeout()` when `work` has not settled
 * after `ms`. The timer keeps the process alive while the caller waits (the work may be
 * waiting on nothing that does, such as a pool's queue), and is cleared when the work
 * settles. `work` may be a function: a synchronous throw becomes the rejection.
 */
export function bounded<T>(work: Promise<T> | (() => Promise<T>), ms: number, onTimeout: () => Error): Promise<T> {
  let p: Promise<T>;
  try {
    p = Promise.resolve(typeof work === 'function' ? work() : work);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const err = onTimeout();
      timeouts.add(err);
      reject(err);
    }, ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** @internal The `STORE_ERROR` of a store call that did not answer in time. */
export function storeTimeoutError(call: string, sessionId: string | undefined, ms: number): SessionError {
  const of = sessionId === undefined ? '' : ` for session "${sessionId}"`;
  return new SessionError(
    'STORE_ERROR',
    `store error: store.${call}()${of} did not answer within ${ms} ms (SessionsPlugin storeTimeoutMs); it was abandoned. Raise storeTimeoutMs or check the store.`,
    sessionId === undefined ? {} : { sessionId },
  );
}

/**
 * @internal True when a store write failed in a way that does not say whether it was
 * applied: a timeout, a `STORE_ERROR` (a connection lost after the statement was sent), or
 * an error that is not the contract's at all. A `TypeError` (a misuse refused with nothing
 * written) and every other `SessionError` code (`STORE_LOCKED`: the lock was never
 * obtained) are known refusals.
 */
export function outcomeUnknown(err: unknown): boolean {
  if (err instanceof TypeError) return false;
  if (isSessionError(err)) return err.code === 'STORE_ERROR';
  return true;
}

/** One store call in flight, waiting in {@link Deadlines}: `reject` is cleared once it settled. */
class Watch {
  next: Watch | undefined = undefined;
  readonly deadline: number;
  readonly call: string;
  readonly sessionId: string | undefined;
  reject: ((err: unknown) => void) | undefined;

  constructor(deadline: number, call: string, sessionId: string | undefined, reject: (err: unknown) => void) {
    this.deadline = deadline;
    this.call = call;
    this.sessionId = sessionId;
    this.reject = reject;
  }
}

/**
 * The calls in flight of one store, oldest first. Every call gets the same bound, so the
 * queue is in deadline order and one timer, armed for the oldest call still in flight,
 * watches them all. A settled call at the head is dropped at once (so the queue stays as
 * long as the calls in flight, plus the settled ones behind a slow one); a settled call
 * keeps no reference to its result. The timer keeps the process alive while a call is in
 * flight (its caller is waiting for the answer or the bound, and the call may wait on
 * nothing that keeps the event loop alive, such as a pool's queue); once no call is in
 * flight it is unref'd, so a finished program exits at once.
 */
class Deadlines {
  readonly #ms: number;
  #head: Watch | undefined;
  #tail: Watch | undefined;
  /** The deadline the armed timer stands for; `undefined` while none is armed. */
  #due: number | undefined;
  /** The armed timer; ref'd while a call is in flight. */
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    this.#ms = ms;
  }

  add(call: string, sessionId: string | undefined, reject: (err: unknown) => void): Watch {
    const watch = new Watch(performance.now() + this.#ms, call, sessionId, reject);
    if (this.#tail === undefined) this.#head = watch;
    else this.#tail.next = watch;
    this.#tail = watch;
    if (this.#due === undefined) this.#arm(watch.deadline);
    else if (this.#head === watch) this.#timer?.ref();
    return watch;
  }

  done(watch: Watch): void {
    watch.reject = undefined;
    if (watch === this.#head) this.#dropSettled(watch);
  }

  #dropSettled(from: Watch | undefined): void {
    let w = from;
    while (w !== undefined && w.reject === undefined) w = w.next;
    this.#head = w;
    if (w === undefined) {
      this.#tail = undefined;
      this.#timer?.unref();
    }
  }

  #arm(deadline: number): void {
    this.#due = deadline;
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(deadline - performance.now())));
  }

  readonly #fire = (): void => {
    // The timer firing means its deadline has come, whatever performance.now() says (a
    // timer may fire a fraction of a millisecond early, or run on a test's fake clock).
    const now = Math.max(performance.now(), this.#due as number);
    this.#due = undefined;
    let w = this.#head;
    while (w !== undefined && (w.reject === undefined || w.deadline <= now)) {
      const reject = w.reject;
      if (reject !== undefined) {
        w.reject = undefined;
        const err = storeTimeoutError(w.call, w.sessionId, this.#ms);
        timeouts.add(err);
        reject(err);
      }
      w = w.next;
    }
    this.#dropSettled(w);
    if (this.#head !== undefined) this.#arm(this.#head.deadline);
  };
}

/** @internal What runs before a fenced write of one lease (a due renewal); `undefined` when nothing has to. */
export interface WriteGuard {
  beforeWrite(): Promise<void> | undefined;
}

/** @internal What {@link BoundedStore} needs to know. */
export interface BoundedStoreOptions {
  /** `SessionsPlugin({ storeTimeoutMs })`. */
  readonly timeoutMs: number;
  /** This plugin's incarnation of its owner id: given to `create`/`acquire` when the caller gave none. */
  readonly incarnation: string;
}

/**
 * @internal The store as the sessions plugin calls it (see the module comment). It is
 * never given to users: `SessionsPlugin({ store })` stays theirs, and is what
 * `applyStoreBounds` is told about.
 */
export class BoundedStore implements store.SessionStore {
  /** The store the plugin was given (or made). */
  readonly inner: store.SessionStore;
  /** The bound on one call, in milliseconds. */
  readonly timeoutMs: number;
  readonly #incarnation: string;
  readonly #guards = new WeakMap<store.Lease, WriteGuard>();
  readonly #deadlines: Deadlines;

  constructor(inner: store.SessionStore, options: BoundedStoreOptions) {
    this.inner = inner;
    this.timeoutMs = options.timeoutMs;
    this.#incarnation = options.incarnation;
    this.#deadlines = new Deadlines(options.timeoutMs);
  }

  /** True when the store can report an attempt's status (`attemptStatus`). */
  get readsAttempts(): boolean {
    return typeof this.inner.attemptStatus === 'function';
  }

  /** True when the store carries handoff and cancel requests (`requestHandoff`, `requestCancel` and `requests`). */
  get routes(): boolean {
    const s = this.inner;
    return typeof s.requestHandoff === 'function' && typeof s.requestCancel === 'function' && typeof s.requests === 'function';
  }

  /** Runs `guard.beforeWrite()` before every fenced write made with `lease` (until {@link BoundedStore.untrack}). */
  track(lease: store.Lease, guard: WriteGuard): void {
    this.#guards.set(lease, guard);
  }

  /** Stops guarding the writes of `lease`. */
  untrack(lease: store.Lease): void {
    this.#guards.delete(lease);
  }

  /**
   * One call of the inner store, bounded (watched by the shared deadline queue: no timer of
   * its own); one `polestar:store` trace when that channel has subscribers.
   */
  call<T>(call: string, sessionId: string | undefined, run: () => Promise<T>): Promise<T> {
    if (storeChannel.hasSubscribers) {
      const context: Mutable<StoreTraceContext> = sessionId === undefined ? { op: call as StoreOperation } : { op: call as StoreOperation, sessionId };
      return trace(storeChannel, context, undefined, () => this.#bounded(call, sessionId, run));
    }
    return this.#bounded(call, sessionId, run);
  }

  #bounded<T>(call: string, sessionId: string | undefined, run: () => Promise<T>): Promise<T> {
    let p: Promise<T>;
    try {
      p = Promise.resolve(run());
    } catch (err) {
      return Promise.reject(err);
    }
    const deadlines = this.#deadlines;
    return new Promise<T>((resolve, reject) => {
      const watch = deadlines.add(call, sessionId, reject);
      p.then(
        (v) => {
          deadlines.done(watch);
          resolve(v);
        },
        (e: unknown) => {
          deadlines.done(watch);
          reject(e);
        },
      );
    });
  }

  /** A fenced write: a due renewal first (awaited, bounded), then the bounded write. */
  #write<T>(call: string, lease: store.Lease, run: () => Promise<T>): Promise<T> {
    const guard = typeof lease === 'object' && lease !== null ? this.#guards.get(lease) : undefined;
    const sessionId = guard === undefined ? sessionOf(lease) : lease.sessionId;
    const due = guard?.beforeWrite();
    if (due === undefined) return this.call(call, sessionId, run);
    return due.then(() => this.call(call, sessionId, run));
  }

  create(input: store.CreateSessionInput): Promise<store.Lease> {
    const withIncarnation = input !== null && typeof input === 'object' && input.incarnation === undefined ? { ...input, incarnation: this.#incarnation } : input;
    return this.call('create', sessionOf(input), () => this.inner.create(withIncarnation));
  }

  acquire(sessionId: string, options: store.AcquireOptions): Promise<store.Lease> {
    const withIncarnation = options !== null && typeof options === 'object' && options.incarnation === undefined ? { ...options, incarnation: this.#incarnation } : options;
    return this.call('acquire', typeof sessionId === 'string' ? sessionId : undefined, () => this.inner.acquire(sessionId, withIncarnation));
  }

  renew(lease: store.Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    return this.call('renew', sessionOf(lease), () => this.inner.renew(lease, options));
  }

  release(lease: store.Lease): Promise<boolean> {
    return this.call('release', sessionOf(lease), () => this.inner.release(lease));
  }

  begin(lease: store.Lease, options?: store.BeginOptions): Promise<store.BegunAttempt> {
    return this.#write('begin', lease, () => (options === undefined ? this.inner.begin(lease) : this.inner.begin(lease, options)));
  }

  append(lease: store.Lease, attempt: store.TurnAttempt, events: readonly store.NewSessionEvent[]): Promise<void> {
    return this.#write('append', lease, () => this.inner.append(lease, attempt, events));
  }

  commit(lease: store.Lease, input: store.CommitInput): Promise<store.CommittedTurn> {
    return this.#write('commit', lease, () => this.inner.commit(lease, input));
  }

  abort(lease: store.Lease, input: store.AbortInput): Promise<void> {
    return this.#write('abort', lease, () => this.inner.abort(lease, input));
  }

  rollback(lease: store.Lease, turn: number): Promise<void> {
    return this.#write('rollback', lease, () => this.inner.rollback(lease, turn));
  }

  pin(lease: store.Lease, turn: number, label?: string): Promise<void> {
    return this.#write('pin', lease, () => this.inner.pin(lease, turn, label));
  }

  load(sessionId: string, options?: { readonly turn?: number }): Promise<store.LoadedSession> {
    return this.call('load', idOf(sessionId), () => this.inner.load(sessionId, options));
  }

  attemptStatus(sessionId: string, attempt: store.TurnAttempt): Promise<store.AttemptStatus> {
    const read = this.inner.attemptStatus;
    if (typeof read !== 'function') {
      return Promise.reject(new TypeError(`store.attemptStatus() for session "${String(sessionId)}": this store does not implement attemptStatus.`));
    }
    return this.call('attemptStatus', idOf(sessionId), () => read.call(this.inner, sessionId, attempt));
  }

  requestHandoff(sessionId: string, request: { readonly owner: string; readonly until: Date }): Promise<boolean> {
    const ask = this.inner.requestHandoff;
    if (typeof ask !== 'function') return Promise.reject(notRouting('requestHandoff', sessionId));
    return this.call('requestHandoff', idOf(sessionId), () => ask.call(this.inner, sessionId, request));
  }

  requestCancel(sessionId: string, reason: string): Promise<store.TurnAttempt | undefined> {
    const ask = this.inner.requestCancel;
    if (typeof ask !== 'function') return Promise.reject(notRouting('requestCancel', sessionId));
    return this.call('requestCancel', idOf(sessionId), () => ask.call(this.inner, sessionId, reason));
  }

  requests(owner: string): Promise<readonly store.HolderRequest[]> {
    const read = this.inner.requests;
    if (typeof read !== 'function') return Promise.reject(notRouting('requests', undefined));
    return this.call('requests', undefined, () => read.call(this.inner, owner));
  }

  /**
   * The store's `watch`, unbounded (it is synchronous); a store without one, or whose `watch`
   * throws, gives a subscription in `'poll'` mode (the error reported through `onError`).
   */
  watch(onWake: (wake: store.StoreWake) => void, onError?: (err: Error) => void): store.StoreWatch {
    const watch = this.inner.watch;
    if (typeof watch === 'function') {
      try {
        return watch.call(this.inner, onWake, onError);
      } catch (err) {
        if (err instanceof TypeError) throw err;
        if (typeof onError === 'function') queueMicrotask(() => onError(err instanceof Error ? err : new Error(String(err))));
      }
    }
    return { mode: 'poll', pollMs: DEFAULT_POLL_MS, close: () => Promise.resolve() };
  }

  checkpoints(sessionId: string): Promise<readonly store.CheckpointInfo[]> {
    return this.call('checkpoints', idOf(sessionId), () => this.inner.checkpoints(sessionId));
  }

  list(query?: store.ListQuery): Promise<store.SessionPage> {
    return this.call('list', undefined, () => this.inner.list(query));
  }

  delete(sessionId: string, options?: store.DeleteOptions): Promise<boolean> {
    return this.call('delete', idOf(sessionId), () => this.inner.delete(sessionId, options));
  }

  events(sessionId: string, query?: store.EventsQuery): AsyncIterable<store.StoredSessionEvent> {
    const id = idOf(sessionId);
    return {
      [Symbol.asyncIterator]: (): AsyncIterator<store.StoredSessionEvent> => {
        let it: AsyncIterator<store.StoredSessionEvent>;
        try {
          it = this.inner.events(sessionId, query)[Symbol.asyncIterator]();
        } catch (err) {
          return { next: () => Promise.reject(err) };
        }
        const out: AsyncIterator<store.StoredSessionEvent> = { next: () => this.call('events', id, () => it.next()) };
        if (typeof it.return === 'function') {
          const ret = it.return.bind(it);
          out.return = (value?: unknown) => this.call('events', id, () => ret(value));
        }
        return out;
      },
    };
  }

  close(): Promise<void> {
    return this.call('close', undefined, () => this.inner.close());
  }
}

/** The `TypeError` of a routing call on a store without the method. */
function notRouting(call: string, sessionId: unknown): TypeError {
  const of = typeof sessionId === 'string' ? ` for session "${sessionId}"` : '';
  return new TypeError(`store.${call}()${of}: this store does not implement ${call} (handoff and cancel across processes need requestHandoff, requestCancel and requests).`);
}

function idOf(sessionId: unknown): string | undefined {
  return typeof sessionId === 'string' ? sessionId : undefined;
}

function sessionOf(x: unknown): string | undefined {
  if (x === null || typeof x !== 'object') return undefined;
  try {
    return idOf((x as { sessionId?: unknown }).sessionId);
  } catch {
    return undefined;
  }
}
