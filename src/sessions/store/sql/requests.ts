/**
 * The routing writes and reads of the SQL session store: handoff and cancel requests (rows of
 * `polestar_requests`, one of each kind per session), the release that clears them, and the
 * notification that wakes other processes (PostgreSQL: `pg_notify` in the same transaction,
 * so it is delivered only if the transaction commits).
 */
import { decodeJson, encodeJson } from '../input.js';
import { corrupt } from '../failures.js';
import type { HolderRequest, Lease, StoreWake, TurnAttempt } from '../contract.js';
import type { SqlConn, SqlDialect } from './driver.js';
import { fenceParams } from './fence.js';
import { int } from './rows.js';
import { WAKE_CHANNEL, encodeWake } from './wakes.js';

/** Sends `wake` to every listening process when the database can (PostgreSQL), at commit. */
export async function notifyIn(db: SqlConn, dialect: SqlDialect, wake: StoreWake): Promise<void> {
  if (dialect === 'postgres') await db.run('SELECT pg_notify(?, ?)', [WAKE_CHANNEL, encodeWake(wake)]);
}

/**
 * Releases lease `l` in the write transaction `db`: true when it was still the session's
 * recorded lease. A release removes the session's handoff request and the cancels that no
 * longer apply (of an attempt that ended), and wakes the waiters.
 */
export async function releaseIn(db: SqlConn, dialect: SqlDialect, l: Lease): Promise<boolean> {
  const { rows } = await db.run(
    'UPDATE polestar_sessions SET lease_owner = NULL, lease_expires_at = NULL, lease_incarnation = NULL WHERE session_id = ? AND lease_owner = ? AND lease_epoch = ? RETURNING lease_epoch',
    fenceParams(l),
  );
  if (rows.length === 0) return false;
  await db.run(
    `DELETE FROM polestar_requests WHERE session_id = ? AND (kind = 'handoff' OR NOT EXISTS (
       SELECT 1 FROM polestar_sessions s WHERE s.session_id = polestar_requests.session_id AND s.open_turn = polestar_requests.turn AND s.open_attempt = polestar_requests.attempt))`,
    [l.sessionId],
  );
  await notifyIn(db, dialect, { kind: 'release', sessionId: l.sessionId });
  return true;
}

/** The checked input of a handoff request. */
export interface CheckedHandoff {
  readonly sessionId: string;
  readonly owner: string;
  /** The waiter's deadline, in milliseconds since the epoch. */
  readonly until: number;
}

/**
 * Records handoff request `h` in the write transaction `db` when another owner holds a live
 * lease of the session (replacing an earlier request), and wakes it: resolves that owner, or
 * `undefined` when nothing was recorded.
 */
export async function requestHandoffIn(db: SqlConn, dialect: SqlDialect, h: CheckedHandoff): Promise<string | undefined> {
  const { rows } = await db.run(
    `INSERT INTO polestar_requests (session_id, kind, holder, epoch, requester, until_at, turn, attempt, reason, at)
     SELECT session_id, 'handoff', lease_owner, lease_epoch, ?, ?, NULL, NULL, NULL, {now} FROM polestar_sessions
     WHERE session_id = ? AND lease_owner IS NOT NULL AND lease_owner <> ? AND lease_expires_at > {now}
     ON CONFLICT (session_id, kind) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, requester = excluded.requester,
       until_at = excluded.until_at, at = excluded.at
     RETURNING holder`,
    [h.owner, h.until, h.sessionId, h.owner],
  );
  const holder = rows[0]?.holder;
  if (typeof holder !== 'string') return undefined;
  await notifyIn(db, dialect, { kind: 'handoff', sessionId: h.sessionId, owner: holder });
  return holder;
}

/**
 * Records a cancel of the session's open attempt in the write transaction `db` (replacing an
 * earlier cancel), and wakes its lease owner: resolves the attempt and that owner (`null`
 * when no lease is recorded), or `undefined` when no attempt is open.
 */
export async function requestCancelIn(db: SqlConn, dialect: SqlDialect, sessionId: string, reason: string): Promise<(TurnAttempt & { holder: string | null }) | undefined> {
  const { rows } = await db.run(
    `INSERT INTO polestar_requests (session_id, kind, holder, epoch, requester, until_at, turn, attempt, reason, at)
     SELECT session_id, 'cancel', lease_owner, open_epoch, NULL, NULL, open_turn, open_attempt, ?, {now} FROM polestar_sessions
     WHERE session_id = ? AND open_turn IS NOT NULL
     ON CONFLICT (session_id, kind) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, turn = excluded.turn,
       attempt = excluded.attempt, reason = excluded.reason, at = excluded.at
     RETURNING holder, turn, attempt`,
    [encodeJson(reason), sessionId],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const where = `polestar_requests row (cancel) of session "${sessionId}"`;
  const holder = typeof row.holder === 'string' ? row.holder : null;
  const out = { turn: int(row.turn, where, sessionId), attempt: int(row.attempt, where, sessionId), holder };
  if (holder !== null) await notifyIn(db, dialect, { kind: 'cancel', sessionId, owner: holder });
  return out;
}

/**
 * The requests addressed to leases of `owner` that still apply (see `SessionStore.requests`),
 * ordered by session id, a session's cancel before its handoff.
 */
export async function requestsIn(db: SqlConn, owner: string): Promise<HolderRequest[]> {
  const { rows } = await db.run(
    `SELECT r.session_id, r.kind, r.requester, r.until_at, r.turn, r.attempt, r.reason
     FROM polestar_requests r JOIN polestar_sessions s ON s.session_id = r.session_id
     WHERE r.holder = ? AND s.lease_owner = r.holder AND (
       (r.kind = 'handoff' AND s.lease_epoch = r.epoch AND s.lease_expires_at > {now} AND r.until_at > {now})
       OR (r.kind = 'cancel' AND s.open_turn = r.turn AND s.open_attempt = r.attempt AND s.open_epoch = r.epoch AND s.open_epoch = s.lease_epoch))
     ORDER BY r.session_id, r.kind`,
    [owner],
  );
  return rows.map((row): HolderRequest => {
    const sessionId = String(row.session_id);
    const where = `polestar_requests row (${String(row.kind)}) of session "${sessionId}"`;
    if (row.kind === 'handoff') {
      if (typeof row.requester !== 'string') throw corrupt(`${where} names no waiting owner`, sessionId);
      return { kind: 'handoff', sessionId, from: row.requester, until: new Date(int(row.until_at, where, sessionId)) };
    }
    const reason = decodeJson(row.reason, `${where}: reason`, sessionId);
    if (typeof reason !== 'string') throw corrupt(`${where} holds a reason that is not a string`, sessionId);
    return { kind: 'cancel', sessionId, turn: int(row.turn, where, sessionId), attempt: int(row.attempt, where, sessionId), reason };
  });
}
