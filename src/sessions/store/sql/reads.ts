/**
 * The reads of the SQL session store: a session with its checkpoint, history and open
 * attempt, the status of one attempt, and the summaries `list` returns.
 */
import { ROW_FORMAT, decodeJson, decodeLocals, newerRow } from '../input.js';
import { corrupt, noCheckpoint, notFound } from '../failures.js';
import type { AttemptStatus, CheckpointInfo, LoadedSession, OpenAttempt, SessionSummary, StoredSessionEvent, TurnAttempt } from '../contract.js';
import type { SqlConn, SqlDialect, SqlRow } from './driver.js';
import { attemptRow, openOf } from './fence.js';
import { EVENT_COLUMNS, SESSION_COLUMNS, checkpointInfo, eventOf, int, nat, sessionInfoOf, sessionRow, statusOf } from './rows.js';

/**
 * Reads session `id` at turn `wanted` (its committed turn when `undefined`) in the read
 * transaction `db`, in three statements: the session row with the count and the last seq of
 * its log; every checkpoint (the locals of the wanted one only); the history.
 */
export async function loadSession(db: SqlConn, id: string, wanted: number | undefined): Promise<LoadedSession> {
  const head = await db.run(
    `SELECT ${SESSION_COLUMNS},
       (SELECT COUNT(*) FROM polestar_events e WHERE e.session_id = polestar_sessions.session_id) AS event_count,
       (SELECT COALESCE(MAX(e.seq), 0) FROM polestar_events e WHERE e.session_id = polestar_sessions.session_id) AS event_last
     FROM polestar_sessions WHERE session_id = ?`,
    [id],
  );
  const { info, row } = sessionInfoOf(head.rows[0], id);
  const turn = wanted ?? info.committedTurn;
  if (turn > info.committedTurn) throw noCheckpoint(id, turn, info.committedTurn);

  const cps = await db.run(
    'SELECT turn, format, label, pinned, created_at, CASE WHEN turn = ? THEN locals END AS locals FROM polestar_checkpoints WHERE session_id = ? ORDER BY turn',
    [turn, id],
  );
  const checkpoints = cps.rows.map((r) => checkpointInfo(r, id));
  const at = checkpoints.findIndex((c) => c.turn === turn);
  if (at < 0) {
    if (wanted !== undefined) throw noCheckpoint(id, turn, info.committedTurn);
    throw corrupt(`session "${id}" has committed turn ${turn} but no checkpoint for it`, id);
  }
  const cpRow = cps.rows[at] as SqlRow;
  const cpWhere = `polestar_checkpoints row (turn ${turn}) of session "${id}"`;
  const cpFormat = int(cpRow.format, cpWhere, id);
  if (cpFormat > ROW_FORMAT) throw newerRow(`the checkpoint of turn ${turn} of session "${id}"`, cpFormat, id);
  const checkpoint = { ...(checkpoints[at] as CheckpointInfo), locals: decodeLocals(cpRow.locals, `${cpWhere}: locals`, id) };

  const n = int(row.event_count, 'polestar_events', id);
  const last = int(row.event_last, 'polestar_events', id);
  if (n !== info.lastSeq || last !== info.lastSeq) {
    throw corrupt(`the log of session "${id}" holds ${n} event(s) up to seq ${last}, but its row says the last seq is ${info.lastSeq} (a gap or a lost row)`, id);
  }

  // The committed attempts of the current timeline first (one rollback check per attempt,
  // not one per event: MATERIALIZED keeps the planner from folding it back into the join),
  // then their history events.
  const hist = await db.run(
    `WITH k AS MATERIALIZED (
       SELECT a.turn, a.attempt FROM polestar_attempts a
       WHERE a.session_id = ? AND a.turn <= ? AND a.status = 'committed'
         AND NOT EXISTS (SELECT 1 FROM polestar_rollbacks r WHERE r.session_id = a.session_id AND r.rev > a.end_rev AND r.to_turn < a.turn))
     SELECT ${EVENT_COLUMNS} FROM k JOIN polestar_events e ON e.session_id = ? AND e.turn = k.turn AND e.attempt = k.attempt
     WHERE substr(e.kind, 1, 8) = 'history/'
     ORDER BY e.seq`,
    [id, turn, id],
  );
  const history = hist.rows.map((r) => eventOf(r, id, 'committed'));

  let open: OpenAttempt | undefined;
  const o2 = openOf(row, id);
  if (o2 !== undefined) {
    const started = await db.run('SELECT started_at FROM polestar_attempts WHERE session_id = ? AND turn = ? AND attempt = ?', [id, o2.turn, o2.attempt]);
    if (started.rows[0] === undefined) throw corrupt(`session "${id}" has turn ${o2.turn} attempt ${o2.attempt} open but no polestar_attempts row for it`, id);
    const evs = await db.run(
      `SELECT ${EVENT_COLUMNS} FROM polestar_events e WHERE e.session_id = ? AND e.turn = ? AND e.attempt = ? ORDER BY e.seq`,
      [id, o2.turn, o2.attempt],
    );
    open = {
      ...o2,
      startedAt: new Date(int(started.rows[0].started_at, `polestar_attempts row of session "${id}"`, id)),
      events: evs.rows.map((r) => eventOf(r, id, 'pending')),
    };
  }
  return { info, checkpoint, history, open, checkpoints };
}

/**
 * The status of attempt `a` of session `id`, read in the write transaction `db` (on
 * PostgreSQL under the session's row lock).
 */
export async function attemptStatusIn(db: SqlConn, dialect: SqlDialect, id: string, a: TurnAttempt): Promise<AttemptStatus> {
  const lock = dialect === 'postgres' ? ' FOR UPDATE' : '';
  const { rows } = await db.run(`SELECT format FROM polestar_sessions WHERE session_id = ?${lock}`, [id]);
  const row = rows[0];
  if (row === undefined) throw notFound(id);
  const format = int(row.format, `polestar_sessions row of session "${id}"`, id);
  if (format > ROW_FORMAT) throw newerRow(`session "${id}"`, format, id);
  const rec = await attemptRow(db, id, a);
  if (rec === undefined) return 'absent';
  switch (rec.status) {
    case 'started':
      return 'open';
    case 'committed':
    case 'aborted':
      return rec.status;
    default:
      throw corrupt(`polestar_attempts row (turn ${a.turn}, attempt ${a.attempt}) of session "${id}" holds the status ${JSON.stringify(rec.status)}`, id);
  }
}

/** The summary of a `polestar_sessions` row, as `list` returns it. */
export function summaryOf(row: SqlRow): SessionSummary {
  const id = String(row.session_id);
  const w = `polestar_sessions row of session "${id}"`;
  const format = int(row.format, w, id);
  if (format > ROW_FORMAT) throw newerRow(`session "${id}"`, format, id);
  return {
    sessionId: id,
    agentId: String(row.agent_id),
    committedTurn: nat(row.committed_turn, w, id),
    updatedAt: new Date(int(row.updated_at, w, id)),
    meta: decodeJson(row.meta, `${w}: meta`, id),
  };
}

/**
 * Up to `limit` events of session `id` after seq `afterSeq`, each with its status, in the
 * read transaction `db`; `first` checks the session exists (and is readable) first.
 */
export async function eventsPage(db: SqlConn, id: string, afterSeq: number, limit: number, first: boolean): Promise<StoredSessionEvent[]> {
  if (first) await sessionRow(db, id);
  const { rows } = await db.run(
    `SELECT ${EVENT_COLUMNS}, a.status AS status,
       CASE WHEN a.status = 'committed' AND EXISTS (SELECT 1 FROM polestar_rollbacks r
         WHERE r.session_id = e.session_id AND r.rev > a.end_rev AND r.to_turn < e.turn) THEN 1 ELSE 0 END AS superseded
     FROM polestar_events e
     LEFT JOIN polestar_attempts a ON a.session_id = e.session_id AND a.turn = e.turn AND a.attempt = e.attempt
     WHERE e.session_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
    [id, afterSeq, limit],
  );
  return rows.map((row) => {
    const n = int(row.seq, `an event row of session "${id}"`, id);
    const status = statusOf(row.status, Number(row.superseded) === 1);
    if (status === undefined) throw corrupt(`polestar_events row ${n} of session "${id}" belongs to turn ${String(row.turn)} attempt ${String(row.attempt)}, which has no valid polestar_attempts row`, id);
    return eventOf(row, id, status);
  });
}
