/**
 * @internal The sessions plugin's view of its store: every call bounded by
 * `SessionsPlugin({ storeTimeoutMs })`, `create`/`acquire` carrying this plugin's owner
 * incarnation, and every fenced write preceded by a lease renewal when the lease is due
 * for one (so a loop of turns that never yields to timers keeps its lease).
 *
 * A call past its bound is abandoned, not cancelled: the promise the store returned is
 * still observed (its late settlement is ignored), and polestar's own stores stop the work
 * themselves (they are told the bound through the store-bound hook).
 */
import { SessionError, isSessionError } from './errors.js';
import type {
  AbortInput,
  AcquireOptions,
  AttemptStatus,
  BegunAttempt,
  BeginOptions,
  CheckpointInfo,
  CommitInput,
  CommittedTurn,
  CreateSessionInput,
  DeleteOptions,
  EventsQuery,
  Lease,
  ListQuery,
  LoadedSession,
  NewSessionEvent,
  SessionPage,
  SessionStore,
  StoredSessionEvent,
  TurnAttempt,
} from './store.js';

/** The errors made by a bound that passed (so disposal and the turn path can tell a timeout from a refusal). */
const timeouts = new WeakSet<object>();

/** @internal True when `err` is the rejection of a store call that did not answer within its bound. */
export function isStoreTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && timeouts.has(err);
}

/**
 * @internal Settles like `work`, or rejects with `onTimeout()` when `work` has not settled
 * after `ms` (an unref'd timer: a pending bound never keeps the process alive). `work`
 * may be a function: a synchronous throw becomes the rejection.
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
    timer.unref();
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
export class BoundedStore implements SessionStore {
  /** The store the plugin was given (or made). */
  readonly inner: SessionStore;
  /** The bound on one call, in milliseconds. */
  readonly timeoutMs: number;
  readonly #incarnation: string;
  readonly #guards = new WeakMap<Lease, WriteGuard>();

  constructor(inner: SessionStore, options: BoundedStoreOptions) {
    this.inner = inner;
    this.timeoutMs = options.timeoutMs;
    this.#incarnation = options.incarnation;
  }

  /** True when the store can report an attempt's status (`attemptStatus`). */
  get readsAttempts(): boolean {
    return typeof this.inner.attemptStatus === 'function';
  }

  /** Runs `guard.beforeWrite()` before every fenced write made with `lease` (until {@link BoundedStore.untrack}). */
  track(lease: Lease, guard: WriteGuard): void {
    this.#guards.set(lease, guard);
  }

  /** Stops guarding the writes of `lease`. */
  untrack(lease: Lease): void {
    this.#guards.delete(lease);
  }

  /** One call of the inner store, bounded. */
  call<T>(call: string, sessionId: string | undefined, run: () => Promise<T>): Promise<T> {
    const ms = this.timeoutMs;
    return bounded(run, ms, () => storeTimeoutError(call, sessionId, ms));
  }

  /** A fenced write: a due renewal first (awaited, bounded), then the bounded write. */
  #write<T>(call: string, lease: Lease, run: () => Promise<T>): Promise<T> {
    const guard = typeof lease === 'object' && lease !== null ? this.#guards.get(lease) : undefined;
    const sessionId = guard === undefined ? sessionOf(lease) : lease.sessionId;
    const due = guard?.beforeWrite();
    if (due === undefined) return this.call(call, sessionId, run);
    return due.then(() => this.call(call, sessionId, run));
  }

  create(input: CreateSessionInput): Promise<Lease> {
    const withIncarnation = input !== null && typeof input === 'object' && input.incarnation === undefined ? { ...input, incarnation: this.#incarnation } : input;
    return this.call('create', sessionOf(input), () => this.inner.create(withIncarnation));
  }

  acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
    const withIncarnation = options !== null && typeof options === 'object' && options.incarnation === undefined ? { ...options, incarnation: this.#incarnation } : options;
    return this.call('acquire', typeof sessionId === 'string' ? sessionId : undefined, () => this.inner.acquire(sessionId, withIncarnation));
  }

  renew(lease: Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    return this.call('renew', sessionOf(lease), () => this.inner.renew(lease, options));
  }

  release(lease: Lease): Promise<boolean> {
    return this.call('release', sessionOf(lease), () => this.inner.release(lease));
  }

  begin(lease: Lease, options?: BeginOptions): Promise<BegunAttempt> {
    return this.#write('begin', lease, () => (options === undefined ? this.inner.begin(lease) : this.inner.begin(lease, options)));
  }

  append(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[]): Promise<void> {
    return this.#write('append', lease, () => this.inner.append(lease, attempt, events));
  }

  commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
    return this.#write('commit', lease, () => this.inner.commit(lease, input));
  }

  abort(lease: Lease, input: AbortInput): Promise<void> {
    return this.#write('abort', lease, () => this.inner.abort(lease, input));
  }

  rollback(lease: Lease, turn: number): Promise<void> {
    return this.#write('rollback', lease, () => this.inner.rollback(lease, turn));
  }

  pin(lease: Lease, turn: number, label?: string): Promise<void> {
    return this.#write('pin', lease, () => this.inner.pin(lease, turn, label));
  }

  load(sessionId: string, options?: { readonly turn?: number }): Promise<LoadedSession> {
    return this.call('load', idOf(sessionId), () => this.inner.load(sessionId, options));
  }

  attemptStatus(sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
    const read = this.inner.attemptStatus;
    if (typeof read !== 'function') {
      return Promise.reject(new TypeError(`store.attemptStatus() for session "${String(sessionId)}": this store does not implement attemptStatus.`));
    }
    return this.call('attemptStatus', idOf(sessionId), () => read.call(this.inner, sessionId, attempt));
  }

  checkpoints(sessionId: string): Promise<readonly CheckpointInfo[]> {
    return this.call('checkpoints', idOf(sessionId), () => this.inner.checkpoints(sessionId));
  }

  list(query?: ListQuery): Promise<SessionPage> {
    return this.call('list', undefined, () => this.inner.list(query));
  }

  delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
    return this.call('delete', idOf(sessionId), () => this.inner.delete(sessionId, options));
  }

  events(sessionId: string, query?: EventsQuery): AsyncIterable<StoredSessionEvent> {
    const id = idOf(sessionId);
    return {
      [Symbol.asyncIterator]: (): AsyncIterator<StoredSessionEvent> => {
        let it: AsyncIterator<StoredSessionEvent>;
        try {
          it = this.inner.events(sessionId, query)[Symbol.asyncIterator]();
        } catch (err) {
          return { next: () => Promise.reject(err) };
        }
        const out: AsyncIterator<StoredSessionEvent> = { next: () => this.call('events', id, () => it.next()) };
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
