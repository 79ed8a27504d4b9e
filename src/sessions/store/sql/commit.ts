/**
 * The writes of a commit once its fenced UPDATE of the session row matched: the events, the
 * committed record, the checkpoint and the retention of older checkpoints.
 */
import { ROW_FORMAT, encodeJson, type CheckedCommit } from '../input.js';
import type { CommittedTurn, Lease } from '../contract.js';
import type { SqlConn, SqlDialect, SqlRow, SqlValue } from './driver.js';
import { EVENT_CHUNK, insertEvents } from './fence.js';
import { int } from './rows.js';

/**
 * Writes commit `c` of lease `l` in the write transaction `db`, given `row` (what the fenced
 * UPDATE returned: `last_seq`, `updated_at`, `rev`) and `locals` (the encoded checkpoint).
 */
export async function writeCommit(db: SqlConn, dialect: SqlDialect, l: Lease, c: CheckedCommit, locals: string, row: SqlRow): Promise<CommittedTurn> {
const where = `polestar_sessions row of session "${l.sessionId}"`;
const last = int(row.last_seq, where, l.sessionId);
const now = int(row.updated_at, where, l.sessionId);
const rev = int(row.rev, where, l.sessionId);
if (dialect === 'postgres' && c.events.length <= EVENT_CHUNK) {
  // PostgreSQL: events, the committed record, the checkpoint and the retention in one
  // statement (its parts see one snapshot and touch disjoint rows): three round trips fewer.
  const params: SqlValue[] = [];
  const parts: string[] = [];
  if (c.events.length > 0) {
    const first = last - c.events.length + 1;
    c.events.forEach((e, j) => params.push(l.sessionId, first + j, c.turn, c.attempt, e.kind, ROW_FORMAT, encodeJson(e.body), now));
    parts.push(`e AS (INSERT INTO polestar_events (session_id, seq, turn, attempt, kind, format, body, at) VALUES ${c.events.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')})`);
  }
  parts.push("a AS (UPDATE polestar_attempts SET status = 'committed', ended_at = ?, end_rev = ?, end_seq = ? WHERE session_id = ? AND turn = ? AND attempt = ?)");
  params.push(now, rev, last, l.sessionId, c.turn, c.attempt);
  parts.push('d AS (DELETE FROM polestar_checkpoints WHERE session_id = ? AND turn > 0 AND turn < ? AND turn <= ? AND pinned = 0)');
  params.push(l.sessionId, c.turn, c.turn - c.keepCheckpoints);
  params.push(l.sessionId, c.turn, ROW_FORMAT, locals, now);
  await db.run(
    `WITH ${parts.join(', ')} INSERT INTO polestar_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, ?, ?, ?, NULL, 0, ?)`,
    params,
  );
  return { turn: c.turn, attempt: c.attempt, committedAt: new Date(now), lastSeq: last };
}
await insertEvents(db, l.sessionId, c, c.events, last - c.events.length + 1, now);
await db.run(
  "UPDATE polestar_attempts SET status = 'committed', ended_at = ?, end_rev = ?, end_seq = ? WHERE session_id = ? AND turn = ? AND attempt = ?",
  [now, rev, last, l.sessionId, c.turn, c.attempt],
);
await db.run('INSERT INTO polestar_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, ?, ?, ?, NULL, 0, ?)', [
  l.sessionId,
  c.turn,
  ROW_FORMAT,
  locals,
  now,
]);
await db.run('DELETE FROM polestar_checkpoints WHERE session_id = ? AND turn > 0 AND turn < ? AND turn <= ? AND pinned = 0', [
  l.sessionId,
  c.turn,
  c.turn - c.keepCheckpoints,
]);
return { turn: c.turn, attempt: c.attempt, committedAt: new Date(now), lastSeq: last };
}
