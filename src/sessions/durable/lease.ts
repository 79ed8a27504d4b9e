/**
 * @internal A durable session's lease: keeping the lease an open transaction obtained
 * (renewed by a `LeaseKeeper`), and the lease-lost path: a `LEASE_LOST` from the store or
 * from a renewal refuses every later call, emits `session/lease-lost` and disposes the
 * session.
 */
import { isSessionError, type SessionError } from '../errors.js';
import type { Lease } from '../store/contract.js';
import { LeaseKeeper } from './lease-keeper.js';
import { noop, type DurableState } from './state.js';

/**
 * @internal Keeps a lease the open transaction obtained (`sent`: `performance.now()`
 * before the call that obtained it, where the store started counting its TTL); if the
 * session was torn down meanwhile, gives it up at once and returns false.
 */
export function adoptLease(s: DurableState, lease: Lease, sent: number): boolean {
  if (s.tornDown) {
    const { store } = s.rt;
    void (s.mode === 'create' ? store.delete(s.id, { lease }) : store.release(lease)).catch(noop);
    return false;
  }
  s.lease = lease;
  const keeper = new LeaseKeeper(s.rt.store, lease, s.rt.leaseTtlMs, (err) => leaseLost(s, err), sent);
  s.keeper = keeper;
  keeper.start();
  return true;
}

/** The lease is lost: later calls are refused, and the session ends (at once, or once a pending commit is found out). */
function leaseLost(s: DurableState, err: SessionError): void {
  s.rt.owners.observe(err);
  if (s.lost !== undefined || s.tornDown) return;
  s.lost = err;
  s.keeper?.stop();
  // While a commit's outcome is being found out, turn() settles first (a committed turn
  // resolves): the end of the session is announced right after (see `resolve` of pending.ts).
  if (s.ledger.kind === 'resolving') return;
  endLost(s, err);
}

/** @internal Emits `session/lease-lost` and disposes the session. */
export function endLost(s: DurableState, err: SessionError): void {
  void s.emit('session/lease-lost', err).catch(noop);
  void s.dispose().catch(noop);
}

/** @internal Reports a store failure: a `LEASE_LOST` starts the lease-lost path. Returns the error to reject with. */
export function storeFailure(s: DurableState, err: unknown): unknown {
  if (isSessionError(err, 'LEASE_LOST')) leaseLost(s, err);
  return err;
}
