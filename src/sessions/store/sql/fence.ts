/**
 * The lease fence of the SQL session store: the condition every fenced write matches, and
 * the diagnosis of a write that matched nothing (lease lost, attempt not open). Also the
 * statements shared by several turn operations.
 */
import { ROW_FORMAT, alreadyCommitted, encodeJson, type CheckedBegin } from '../input.js';
import { busyAttempt, corrupt, leaseLost } from '../failures.js';
import type { BegunAttempt, Lease, NewSessionEvent, TurnAttempt } from '../contract.js';
import type { SqlConn, SqlDialect, SqlResult, SqlRow, SqlValue } from './driver.js';
import { int, intOrNull } from './rows.js';

/** Events per INSERT statement. */
export const EVENT_CHUNK = 200;

/** The condition of a fenced write: the session's lease is `?` (owner, epoch) and unexpired. */
export const FENCE = 'session_id = ? AND lease_owner = ? AND lease_epoch = ? AND lease_expires_at > {now}';
/** The parameters of {@link FENCE} for lease `l`. */
export const fenceParams = (l: Lease): SqlValue[] => [l.sessionId, l.owner, l.epoch];


/**
 * The attempts `k` of session row `p` that hold a committed turn of the current timeline
 * among the last `?` (keyWindow) turns, begun with the key `?`: committed, at most
 * `committed_turn`, and not superseded by a rollback made after the commit to an earlier turn.
 */
export const KEYED_CONDITION = `k.turn <= p.committed_turn AND k.turn > p.committed_turn - ? AND k.turn_key = ? AND k.status = 'committed'
  AND NOT EXISTS (SELECT 1 FROM polestar_rollbacks r WHERE r.session_id = k.session_id AND r.rev > k.end_rev AND r.to_turn < k.turn)`;

/** {@link KEYED_CONDITION} as a subquery of an UPDATE of `polestar_sessions`. */
export const KEYED_TURN = `SELECT 1 FROM polestar_attempts k WHERE k.session_id = polestar_sessions.session_id AND ${KEYED_CONDITION.replaceAll('p.committed_turn', 'polestar_sessions.committed_turn')}`;

/** The reason a fenced statement matched nothing: LEASE_LOST, or the session row for further checks. */
export async function diagnose(c: SqlConn, l: Lease, what: string): Promise<SqlRow> {
  const row = await fenceRow(c, l);
  fence(row, l, what);
  return row as SqlRow;
}

/** The session row as the fence sees it (`undefined` when the session is gone). */
export async function fenceRow(c: SqlConn, l: Lease): Promise<SqlRow | undefined> {
  const { rows } = await c.run(
    'SELECT lease_owner, lease_epoch, lease_expires_at, lease_incarnation, open_turn, open_attempt, open_epoch, committed_turn, {now} AS now FROM polestar_sessions WHERE session_id = ?',
    [l.sessionId],
  );
  return rows[0];
}

/** True when `l` is still the session's recorded lease (live or expired: no acquire or release replaced it). */
export function recorded(row: SqlRow | undefined, l: Lease): boolean {
  return row !== undefined && row.lease_owner === l.owner && int(row.lease_epoch, `polestar_sessions row of session "${l.sessionId}"`, l.sessionId) === l.epoch;
}

/** Throws the `LEASE_LOST` of `l` against `row`, unless the lease is current and unexpired. */
export function fence(row: SqlRow | undefined, l: Lease, what: string): void {
  const where = `polestar_sessions row of session "${l.sessionId}"`;
  const lost = leaseLost(
    l,
    row === undefined
      ? { exists: false, owner: null, epoch: 0, expiresAt: null, now: 0, incarnation: null }
      : {
          exists: true,
          owner: (row.lease_owner as string | null) ?? null,
          epoch: int(row.lease_epoch, where, l.sessionId),
          expiresAt: intOrNull(row.lease_expires_at, where, l.sessionId),
          now: int(row.now, where, l.sessionId),
          incarnation: (row.lease_incarnation as string | null | undefined) ?? null,
        },
    `store.${what}()`,
  );
  if (lost !== undefined) throw lost;
}

export function openOf(row: SqlRow, sessionId: string): { turn: number; attempt: number; epoch: number } | undefined {
  const where = `polestar_sessions row of session "${sessionId}"`;
  const turn = intOrNull(row.open_turn, where, sessionId);
  if (turn === null) return undefined;
  return { turn, attempt: int(row.open_attempt, where, sessionId), epoch: int(row.open_epoch, where, sessionId) };
}

export async function insertEvents(c: SqlConn, sessionId: string, a: TurnAttempt, events: readonly NewSessionEvent[], firstSeq: number, at: number): Promise<void> {
  for (let i = 0; i < events.length; i += EVENT_CHUNK) {
    const chunk = events.slice(i, i + EVENT_CHUNK);
    const params: SqlValue[] = [];
    chunk.forEach((e, j) => params.push(sessionId, firstSeq + i + j, a.turn, a.attempt, e.kind, ROW_FORMAT, encodeJson(e.body), at));
    await c.run(
      `INSERT INTO polestar_events (session_id, seq, turn, attempt, kind, format, body, at) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      params,
    );
  }
}

/** Ends `open` (begun with `l`) as aborted with `reason`, writing no event; no-op when it is no longer the open one. */
export async function endOpen(db: SqlConn, l: Lease, open: TurnAttempt, reason: string): Promise<void> {
  const { rows } = await db.run(
    `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, open_turn = NULL, open_attempt = NULL, open_epoch = NULL
     WHERE ${FENCE} AND open_turn = ? AND open_attempt = ? AND open_epoch = lease_epoch
     RETURNING last_seq, updated_at, rev`,
    [...fenceParams(l), open.turn, open.attempt],
  );
  if (rows.length === 0) return;
  const where = `polestar_sessions row of session "${l.sessionId}"`;
  await db.run(
    "UPDATE polestar_attempts SET status = 'aborted', ended_at = ?, end_rev = ?, end_seq = ?, reason = ? WHERE session_id = ? AND turn = ? AND attempt = ?",
    [int(rows[0].updated_at, where, l.sessionId), int(rows[0].rev, where, l.sessionId), int(rows[0].last_seq, where, l.sessionId), encodeJson(reason), l.sessionId, open.turn, open.attempt],
  );
}

export async function attemptRow(db: SqlConn, sessionId: string, a: TurnAttempt): Promise<{ status: string; epoch: number; endedAt: number; endSeq: number } | undefined> {
  const { rows } = await db.run('SELECT status, epoch, ended_at, end_seq FROM polestar_attempts WHERE session_id = ? AND turn = ? AND attempt = ?', [
    sessionId,
    a.turn,
    a.attempt,
  ]);
  const row = rows[0];
  if (row === undefined) return undefined;
  const where = `polestar_attempts row (turn ${a.turn}, attempt ${a.attempt}) of session "${sessionId}"`;
  return {
    status: String(row.status),
    epoch: int(row.epoch, where, sessionId),
    endedAt: intOrNull(row.ended_at, where, sessionId) ?? 0,
    endSeq: intOrNull(row.end_seq, where, sessionId) ?? 0,
  };
}

/**
 * Opens the next attempt of session `l.sessionId` (the fenced *started* record) in the write
 * transaction `db`: refused with `LEASE_LOST`, `SESSION_BUSY` (another attempt open) or
 * `TURN_ALREADY_COMMITTED` (a keyed begin whose key a recent committed turn has); with
 * `replaceOpen`, an attempt this very lease left open is ended as aborted first.
 */
export async function beginIn(db: SqlConn, dialect: SqlDialect, l: Lease, o: CheckedBegin): Promise<BegunAttempt> {
  const postgres = dialect === 'postgres';
  const keyed = o.key !== undefined;
  // A keyed begin opens nothing when a committed turn of the current timeline among
  // the last keyWindow ones has the key (checked in the same statement: no round trip
  // of its own). The only commit of this session that could run concurrently is one of
  // this same lease, whose outcome the sessions plugin finds out before its next begin.
  // The attempt opened is attempt 1 of the next turn, unless that turn has attempts
  // already (an aborted or interrupted one, or turns a rollback superseded): then the
  // insert of the started record meets attempt 1, and the attempt becomes the highest
  // one + 1 (attempts are numbered from 1 and never deleted apart from their session).
  const opening = `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, open_turn = committed_turn + 1, open_epoch = lease_epoch, open_attempt = 1
       WHERE ${FENCE} AND open_turn IS NULL${keyed ? ` AND NOT EXISTS (${KEYED_TURN})` : ''}`;
  const params = keyed ? [...fenceParams(l), o.keyWindow, o.key as string] : fenceParams(l);
  let rows: readonly SqlRow[];
  for (;;) {
    // PostgreSQL: the started record in the same statement (one round trip fewer).
    ({ rows } = await db.run(
      postgres
        ? `WITH u AS (${opening} RETURNING session_id, open_turn, open_attempt, lease_epoch, updated_at),
           i AS (INSERT INTO polestar_attempts (session_id, turn, attempt, status, epoch, started_at, turn_key)
             SELECT session_id, open_turn, open_attempt, 'started', lease_epoch, updated_at, CAST(? AS text) FROM u
             ON CONFLICT (session_id, turn, attempt) DO NOTHING RETURNING turn)
           SELECT open_turn, open_attempt, updated_at, (SELECT COUNT(*) FROM i) AS inserted FROM u`
        : `${opening} RETURNING open_turn, open_attempt, updated_at`,
      postgres ? [...params, o.key ?? null] : params,
    ));
    if (rows.length > 0) break;
    const row = await diagnose(db, l, 'begin');
    if (keyed) {
      const found = await db.run(
        `SELECT k.turn FROM polestar_sessions p JOIN polestar_attempts k ON k.session_id = p.session_id
         WHERE p.session_id = ? AND ${KEYED_CONDITION} ORDER BY k.turn DESC LIMIT 1`,
        [l.sessionId, o.keyWindow, o.key as string],
      );
      if (found.rows.length > 0) throw alreadyCommitted(l.sessionId, o.key as string, int(found.rows[0].turn, `polestar_attempts row of session "${l.sessionId}"`, l.sessionId));
    }
    const open = openOf(row, l.sessionId);
    // (an attempt ended by a concurrent call of the same holder in between: try again)
    if (open === undefined) continue;
    if (!o.replaceOpen || open.epoch !== l.epoch) throw busyAttempt(l.sessionId, open, 'beginning another');
    // Begun with this very lease by a begin (or left by an abort) whose reply was lost:
    // end it as aborted in this transaction, then open the next attempt.
    await endOpen(db, l, open, 'begin outcome unknown');
  }
  const where = `polestar_sessions row of session "${l.sessionId}"`;
  const turn = int(rows[0].open_turn, where, l.sessionId);
  let attempt = int(rows[0].open_attempt, where, l.sessionId);
  const now = int(rows[0].updated_at, where, l.sessionId);
  const started = (n: number): Promise<SqlResult> =>
    db.run(
      "INSERT INTO polestar_attempts (session_id, turn, attempt, status, epoch, started_at, turn_key) VALUES (?, ?, ?, 'started', ?, ?, ?) ON CONFLICT (session_id, turn, attempt) DO NOTHING",
      [l.sessionId, turn, n, l.epoch, now, o.key ?? null],
    );
  const inserted = postgres ? int(rows[0].inserted, where, l.sessionId) : (await started(attempt)).changes;
  if (inserted === 0) {
    // The turn has attempts already: open the next one after the highest.
    const next = await db.run(
      `UPDATE polestar_sessions SET open_attempt = (SELECT MAX(a.attempt) + 1 FROM polestar_attempts a
         WHERE a.session_id = polestar_sessions.session_id AND a.turn = polestar_sessions.open_turn)
       WHERE session_id = ? RETURNING open_attempt`,
      [l.sessionId],
    );
    attempt = int(next.rows[0]?.open_attempt, where, l.sessionId);
    if ((await started(attempt)).changes !== 1) throw corrupt(`session "${l.sessionId}" has an attempt ${attempt} of turn ${turn} above its highest`, l.sessionId);
  }
  return { turn, attempt, startedAt: new Date(now) };
}
