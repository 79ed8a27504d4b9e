/**
 * @internal How the sessions plugin tells polestar's own stores the bound it puts on every
 * store call, so that a call past it is abandoned only once its work has stopped (the
 * PostgreSQL client is destroyed, a SQLite call still queued never runs) and the database's
 * own lock waits end before it (`lock_timeout` on PostgreSQL). A store object shared by
 * several servers uses the smallest bound any of them set.
 */
import type { SessionStore } from './contract.js';

/** @internal */
export const STORE_BOUND: unique symbol = Symbol('polestar.sessions.storeBound');

/**
 * The bounds the sessions plugin puts on its store's calls (`SessionsPlugin({ storeTimeoutMs,
 * leaseTtlMs })`), which a SQL driver is told through its `setBounds`.
 */
export interface StoreBounds {
  /** `SessionsPlugin({ storeTimeoutMs })`: the bound on one store call. */
  readonly callTimeoutMs: number;
  /** `SessionsPlugin({ leaseTtlMs })`: a transaction idle longer than this is ended by the database. */
  readonly leaseTtlMs: number;
}

/** @internal A store that accepts the plugin's bounds. */
export interface BoundableStore {
  [STORE_BOUND](bounds: StoreBounds): void;
}

/** @internal Tells `store` the bounds when it is one of polestar's own stores. */
export function applyStoreBounds(store: SessionStore, bounds: StoreBounds): void {
  const hook = (store as Partial<BoundableStore>)[STORE_BOUND];
  if (typeof hook === 'function') hook.call(store, bounds);
}

/** @internal Merges a new bound into the ones a store holds: the smallest wins. */
export function mergeBounds(held: StoreBounds | undefined, next: StoreBounds): StoreBounds {
  if (held === undefined) return next;
  return { callTimeoutMs: Math.min(held.callTimeoutMs, next.callTimeoutMs), leaseTtlMs: Math.min(held.leaseTtlMs, next.leaseTtlMs) };
}
