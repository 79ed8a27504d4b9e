/**
 * @internal Keeps a durable session's lease: renews it every `ttlMs / 3` on an unref'd
 * timer (a held lease never keeps the process alive), and from the write path: a fenced
 * write made when a third of `ttlMs` has passed since the last successful renewal (or the
 * acquisition) renews first, so a loop of turns whose store calls never yield to the
 * timer phase keeps its lease. A `LEASE_LOST` renewal reports the loss once; any other
 * failure (a store hiccup) is retried at the next tick or write: if the store stays away
 * past the TTL, the next renewal or write is refused with `LEASE_LOST`.
 */
import type { BoundedStore, WriteGuard } from '../store/bounded-call.js';
import { isSessionError, type SessionError } from '../errors.js';
import type { Lease } from '../store/contract.js';

const noop = (): void => undefined;

/** @internal */
export class LeaseKeeper implements WriteGuard {
  readonly #store: BoundedStore;
  readonly #lease: Lease;
  readonly #ttlMs: number;
  readonly #every: number;
  readonly #onLost: (err: SessionError) => void;
  #timer: ReturnType<typeof setInterval> | undefined;
  #renewing: Promise<void> | undefined;
  /** `performance.now()` when the last successful renewal (or the acquisition) was sent. */
  #renewedAt: number;
  #stopped = false;

  /**
   * @param acquiredAt - `performance.now()` taken before the call that obtained `lease` was sent.
   */
  constructor(store: BoundedStore, lease: Lease, ttlMs: number, onLost: (err: SessionError) => void, acquiredAt = performance.now()) {
    this.#store = store;
    this.#lease = lease;
    this.#ttlMs = ttlMs;
    this.#every = Math.max(1, Math.floor(ttlMs / 3));
    this.#onLost = onLost;
    this.#renewedAt = acquiredAt;
  }

  /**
   * Starts the timer and the write-path renewal (idempotent; nothing after `stop()`). A
   * lease already due for a renewal (its acquisition answered slowly) is renewed at once.
   */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    const timer = setInterval(() => void this.#renew().catch(noop), this.#every);
    timer.unref();
    this.#timer = timer;
    this.#store.track(this.#lease, this);
    if (performance.now() - this.#renewedAt >= this.#every) void this.#renew().catch(noop);
  }

  /**
   * @internal When the lease expires as this process knows it (ms since the epoch, like
   * `Date.now()`): the last successful renewal's send time (or the acquisition's) plus the
   * TTL. Conservative: the store's own expiry is at or after it. Read by `inspect`.
   */
  get expiresAt(): number {
    return Math.round(performance.timeOrigin + this.#renewedAt + this.#ttlMs);
  }

  /** Stops renewing for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#store.untrack(this.#lease);
  }

  /**
   * Called before each fenced write of the lease: `undefined` while the lease was renewed
   * less than `ttlMs / 3` ago, else the renewal (rejecting only with its `LEASE_LOST`).
   */
  beforeWrite(): Promise<void> | undefined {
    if (this.#stopped || performance.now() - this.#renewedAt < this.#every) return undefined;
    return this.#renew();
  }

  #renew(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#renewing !== undefined) return this.#renewing;
    const sent = performance.now();
    const p = this.#store.renew(this.#lease, { ttlMs: this.#ttlMs }).then(
      () => {
        this.#renewing = undefined;
        if (sent > this.#renewedAt) this.#renewedAt = sent;
      },
      (err: unknown) => {
        this.#renewing = undefined;
        if (this.#stopped || !isSessionError(err, 'LEASE_LOST')) return;
        this.stop();
        this.#onLost(err);
        throw err;
      },
    );
    this.#renewing = p;
    return p;
  }
}
