/**
 * The lease writes of the SQL session store that retry within their transaction: taking a
 * session's lease, and deleting a session unless another owner holds it.
 */
import { ROW_FORMAT, leaseOf, newerRow } from '../input.js';
import { busyLease, notFound } from '../failures.js';
import type { Lease } from '../contract.js';
import type { SqlConn, SqlDialect } from './driver.js';
import { notifyIn } from './requests.js';
import { int, liveHolder } from './rows.js';

/** What {@link acquireIn} takes: the checked input of `acquire`. */
export interface CheckedAcquire {
  readonly sessionId: string;
  readonly owner: string;
  readonly incarnation: string | undefined;
  readonly ttlMs: number;
}

/**
 * Takes the lease of `a.sessionId` in the write transaction `db`, or throws why not
 * (`SESSION_BUSY`, `SESSION_NOT_FOUND`…). A handoff request addressed to the lease it
 * replaces is removed.
 */
export async function acquireIn(db: SqlConn, a: CheckedAcquire): Promise<Lease> {
  const where = `polestar_sessions row of session "${a.sessionId}"`;
  // On PostgreSQL (READ COMMITTED) an acquire that waited for another one's row lock
  // re-checks the row and finds it leased; by the time the diagnosis reads it, the
  // winner may have released it again. Then the session is free: try again.
  for (;;) {
    // A live lease is taken over at once only by another incarnation of its own owner
    // (`<>` is never true when either incarnation is NULL).
    const incarnation = a.incarnation ?? null;
    const { rows } = await db.run(
      `UPDATE polestar_sessions SET lease_owner = ?, lease_epoch = lease_epoch + 1, lease_expires_at = {now} + ?, lease_ttl_ms = ?, lease_incarnation = ?
       WHERE session_id = ? AND format <= ? AND (lease_owner IS NULL OR lease_expires_at <= {now} OR (lease_owner = ? AND lease_incarnation <> ?))
       RETURNING lease_epoch`,
      [a.owner, a.ttlMs, a.ttlMs, incarnation, a.sessionId, ROW_FORMAT, a.owner, incarnation],
    );
    if (rows.length > 0) {
      await db.run("DELETE FROM polestar_requests WHERE session_id = ? AND kind = 'handoff'", [a.sessionId]);
      return leaseOf(a.sessionId, a.owner, int(rows[0].lease_epoch, where, a.sessionId), a.incarnation);
    }
    const found = await db.run('SELECT format, lease_owner, lease_epoch, lease_expires_at, lease_incarnation, {now} AS now FROM polestar_sessions WHERE session_id = ?', [
      a.sessionId,
    ]);
    const row = found.rows[0];
    if (row === undefined) throw notFound(a.sessionId);
    const format = int(row.format, where, a.sessionId);
    if (format > ROW_FORMAT) throw newerRow(`session "${a.sessionId}"`, format, a.sessionId);
    const holder = liveHolder(row, where, a.sessionId);
    const reused = holder !== undefined && holder.owner === a.owner && incarnation !== null && row.lease_incarnation !== null && row.lease_incarnation !== undefined && row.lease_incarnation !== incarnation;
    // (taken by another incarnation of this owner in between: take it over in turn)
    if (holder !== undefined && !reused) throw busyLease(a.sessionId, holder);
  }
}

/**
 * Deletes session `id` with its rows (its requests included) in the write transaction `db`,
 * and wakes its waiters like a release: false when there is no such session, `SESSION_BUSY`
 * when another lease than `mine` holds it (unless `force`).
 */
export async function deleteIn(db: SqlConn, dialect: SqlDialect, id: string, force: boolean, mine: Lease | undefined): Promise<boolean> {
  const w = `polestar_sessions row of session "${id}"`;
  for (;;) {
    const { rows } = await db.run(
      `DELETE FROM polestar_sessions
       WHERE session_id = ? AND (? = 1 OR lease_owner IS NULL OR lease_expires_at <= {now} OR (lease_owner = ? AND lease_epoch = ?))
       RETURNING session_id`,
      [id, force ? 1 : 0, mine?.owner ?? null, mine?.epoch ?? null],
    );
    if (rows.length > 0) break;
    const found = await db.run('SELECT lease_owner, lease_epoch, lease_expires_at, {now} AS now FROM polestar_sessions WHERE session_id = ?', [id]);
    const row = found.rows[0];
    if (row === undefined) return false;
    const holder = liveHolder(row, w, id);
    // freed between the two statements (see acquire): try again
    if (holder !== undefined) throw busyLease(id, holder);
  }
  for (const table of ['polestar_events', 'polestar_attempts', 'polestar_checkpoints', 'polestar_rollbacks', 'polestar_requests']) {
    await db.run(`DELETE FROM ${table} WHERE session_id = ?`, [id]);
  }
  await notifyIn(db, dialect, { kind: 'release', sessionId: id });
  return true;
}
