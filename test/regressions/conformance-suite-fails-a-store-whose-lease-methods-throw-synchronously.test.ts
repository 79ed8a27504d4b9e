/**
 * Bug: `runSessionStoreConformance` passed a store whose lease methods throw synchronously
 * for a lease that is not an object (its only malformed-lease probe was an object with epoch
 * 0), although every store method must reject, never throw.
 * Fixed: the suite calls every method with hostile input of every type in each argument
 * position, and a synchronous throw fails the hostile-input check, naming the method and the
 * input.
 */
import { MemorySessionStore } from '../../src/index.js';
import type { AbortInput, BeginOptions, BegunAttempt, CommitInput, CommittedTurn, Lease, NewSessionEvent, TurnAttempt } from '../../src/sessions.js';
import { runSessionStoreConformance, SESSION_STORE_CONFORMANCE_CHECKS } from '../../src/testing/index.js';

/** What a careless store does first: reads the lease's session id before any promise exists. */
function sessionOf(lease: Lease): string {
  if (typeof lease !== 'object' || lease === null) throw new TypeError(`lease must be an object, got ${typeof lease}`);
  return lease.sessionId;
}

/** A MemorySessionStore whose lease methods throw synchronously for a non-object lease. */
class SyncLeaseStore extends MemorySessionStore {
  override renew(lease: Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    sessionOf(lease);
    return super.renew(lease, options);
  }
  override release(lease: Lease): Promise<boolean> {
    sessionOf(lease);
    return super.release(lease);
  }
  override begin(lease: Lease, options?: BeginOptions): Promise<BegunAttempt> {
    sessionOf(lease);
    return super.begin(lease, options);
  }
  override append(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[]): Promise<void> {
    sessionOf(lease);
    return super.append(lease, attempt, events);
  }
  override commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
    sessionOf(lease);
    return super.commit(lease, input);
  }
  override abort(lease: Lease, input: AbortInput): Promise<void> {
    sessionOf(lease);
    return super.abort(lease, input);
  }
  override rollback(lease: Lease, turn: number): Promise<void> {
    sessionOf(lease);
    return super.rollback(lease, turn);
  }
  override pin(lease: Lease, turn: number, label?: string): Promise<void> {
    sessionOf(lease);
    return super.pin(lease, turn, label);
  }
}

test('a store whose lease methods throw synchronously for a non-object lease fails the suite, naming each method and the input', async () => {
  const hostile = SESSION_STORE_CONFORMANCE_CHECKS.find((n) => n.startsWith('every method rejects for hostile input'));
  expect(hostile).toBeDefined();
  const outcome = await runSessionStoreConformance(() => new SyncLeaseStore(), { leaseTtlMs: 200 }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(AggregateError);
  const failures = ((outcome as AggregateError).errors as Error[]).map((e) => e.message);
  expect(failures).toHaveLength(1);
  expect(failures[0].startsWith(`${hostile}: `)).toBe(true);
  for (const method of ['renew', 'release', 'begin', 'append', 'commit', 'abort', 'rollback', 'pin']) {
    expect(failures[0]).toContain(`store.${method}(lease = null`);
  }
  expect(failures[0]).toMatch(/store\.begin\(lease = null, options\) threw synchronously instead of rejecting: TypeError: lease must be an object, got object/);
  expect(failures[0]).toMatch(/store\.commit\(lease = NaN, input\) threw synchronously instead of rejecting: TypeError: lease must be an object, got number\n- … and \d+ more of store\.commit\(\) with a hostile lease/);
});
