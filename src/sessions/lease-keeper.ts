/**
 * @internal Renews a durable session's lease every `ttlMs / 3` on an unref'd timer (a
 * held lease never keeps the process alive). A `LEASE_LOST` renewal reports the loss once;
 * any other failure (a store hiccup) is retried at the next tick: if the store stays away
 * past the TTL, the next renewal or write is refused with `LEASE_LOST`.
 */
import { isSessionError, type SessionError } from './errors.js';
import type { Lease, SessionStore } from './store.js';

/** @internal */
export class LeaseKeeper {
  readonly #store: SessionStore;
  readonly #lease: Lease;
  readonly #ttlMs: number;
  readonly #onLost: (err: SessionError) => void;
  #timer: ReturnType<typeof setInterval> | undefined;
  #renewing = false;
  #stopped = false;

  constructor(store: SessionStore, lease: Lease, ttlMs: number, onLost: (err: SessionError) => void) {
    this.#store = store;
    this.#lease = lease;
    this.#ttlMs = ttlMs;
    this.#onLost = onLost;
  }

  /** Starts the timer (idempotent; nothing after `stop()`). */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    const every = Math.max(1, Math.floor(this.#ttlMs / 3));
    const timer = setInterval(() => this.#tick(), every);
    timer.unref();
    this.#timer = timer;
  }

  /** Stops renewing for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    if (this.#renewing || this.#stopped) return;
    this.#renewing = true;
    this.#store.renew(this.#lease, { ttlMs: this.#ttlMs }).then(
      () => {
        this.#renewing = false;
      },
      (err: unknown) => {
        this.#renewing = false;
        if (this.#stopped) return;
        if (isSessionError(err, 'LEASE_LOST')) {
          this.stop();
          this.#onLost(err);
        }
      },
    );
  }
}
