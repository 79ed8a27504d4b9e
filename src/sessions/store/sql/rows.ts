/**
 * Readers of the SQL session store's rows: integer columns (`pg` reads bigint as text), the
 * session row, events and checkpoints, each a `CORRUPT_ROW` error naming the row when it
 * holds what it must not.
 */
import { ROW_FORMAT, decodeJson, newerRow } from '../input.js';
import { corrupt, notFound } from '../failures.js';
import type { CheckpointInfo, SessionEventStatus, SessionInfo, StoredSessionEvent } from '../contract.js';
import type { SqlConn, SqlRow } from './driver.js';

/** The columns of an event row (`e`), in the order {@link eventOf} reads them. */
export const EVENT_COLUMNS = 'e.seq, e.turn, e.attempt, e.kind, e.format, e.body, e.at';


/** The columns of the session row that {@link sessionInfoOf} reads (of `polestar_sessions`, unqualified). */
export const SESSION_COLUMNS = `session_id, agent_id, format, meta, created_at, updated_at, committed_turn, last_seq,
            lease_owner, lease_epoch, lease_expires_at, open_turn, open_attempt, open_epoch, {now} AS now`;

/** The row of session `sessionId` as {@link SessionInfo}, or `SESSION_NOT_FOUND`; `UNSUPPORTED_FORMAT` for a newer row. */
export async function sessionRow(db: SqlConn, sessionId: string): Promise<{ info: SessionInfo; row: SqlRow }> {
  const { rows } = await db.run(`SELECT ${SESSION_COLUMNS} FROM polestar_sessions WHERE session_id = ?`, [sessionId]);
  return sessionInfoOf(rows[0], sessionId);
}

/** {@link sessionRow} of a row read with {@link SESSION_COLUMNS} (`undefined`: the session is gone). */
export function sessionInfoOf(row: SqlRow | undefined, sessionId: string): { info: SessionInfo; row: SqlRow } {
  if (row === undefined) throw notFound(sessionId);
  const where = `polestar_sessions row of session "${sessionId}"`;
  const format = int(row.format, where, sessionId);
  if (format > ROW_FORMAT) throw newerRow(`session "${sessionId}"`, format, sessionId);
  const now = int(row.now, where, sessionId);
  const expires = intOrNull(row.lease_expires_at, where, sessionId);
  const owner = row.lease_owner as string | null;
  const epoch = int(row.lease_epoch, where, sessionId);
  const info: SessionInfo = {
    sessionId,
    agentId: String(row.agent_id),
    meta: decodeJson(row.meta, `${where}: meta`, sessionId),
    createdAt: new Date(int(row.created_at, where, sessionId)),
    updatedAt: new Date(int(row.updated_at, where, sessionId)),
    committedTurn: nat(row.committed_turn, where, sessionId),
    lastSeq: nat(row.last_seq, where, sessionId),
    lease: owner !== null && expires !== null && expires > now ? { owner, epoch, remainingMs: expires - now, expiresAt: new Date(expires) } : undefined,
  };
  return { info, row };
}

export function eventOf(row: SqlRow, sessionId: string, status: SessionEventStatus): StoredSessionEvent {
  const seq = int(row.seq, `an event row of session "${sessionId}"`, sessionId);
  const where = `polestar_events row ${seq} of session "${sessionId}"`;
  const format = int(row.format, where, sessionId);
  if (format > ROW_FORMAT) throw newerRow(`event ${seq} of session "${sessionId}"`, format, sessionId);
  return {
    seq,
    turn: nat(row.turn, where, sessionId),
    attempt: nat(row.attempt, where, sessionId),
    kind: String(row.kind),
    body: decodeJson(row.body, `${where}: body`, sessionId),
    status,
    at: new Date(int(row.at, where, sessionId)),
  };
}

export async function checkpointList(db: SqlConn, sessionId: string): Promise<CheckpointInfo[]> {
  const { rows } = await db.run('SELECT turn, label, pinned, created_at FROM polestar_checkpoints WHERE session_id = ? ORDER BY turn', [sessionId]);
  return rows.map((row) => checkpointInfo(row, sessionId));
}

export function checkpointInfo(row: SqlRow, sessionId: string): CheckpointInfo {
  const where = `polestar_checkpoints row of session "${sessionId}"`;
  const turn = nat(row.turn, where, sessionId);
  const pinned = Number(row.pinned) === 1;
  const createdAt = new Date(int(row.created_at, where, sessionId));
  const label = row.label;
  return label === null || label === undefined ? { turn, pinned, createdAt } : { turn, label: String(label), pinned, createdAt };
}


/** The live lease of a session row, or `undefined` when it is free or expired. */
export function liveHolder(row: SqlRow, where: string, sessionId: string): { owner: string; epoch: number; remainingMs: number } | undefined {
  const expires = intOrNull(row.lease_expires_at, where, sessionId);
  const now = int(row.now, where, sessionId);
  if (row.lease_owner === null || row.lease_owner === undefined || expires === null || expires <= now) return undefined;
  return { owner: String(row.lease_owner), epoch: int(row.lease_epoch, where, sessionId), remainingMs: expires - now };
}

export function statusOf(status: unknown, superseded: boolean): SessionEventStatus | undefined {
  switch (status) {
    case 'started':
      return 'pending';
    case 'aborted':
      return 'aborted';
    case 'committed':
      return superseded ? 'superseded' : 'committed';
    default:
      return undefined;
  }
}

/** An integer column (`pg` reads bigint as text), or `CORRUPT_ROW`. */
export function int(value: unknown, where: string, sessionId: string | undefined): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?[0-9]+$/.test(value) ? Number(value) : typeof value === 'bigint' ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw corrupt(`${where} holds ${JSON.stringify(String(value))} where an integer belongs`, sessionId);
  return n;
}

export function intOrNull(value: unknown, where: string, sessionId: string | undefined): number | null {
  return value === null || value === undefined ? null : int(value, where, sessionId);
}

export function nat(value: unknown, where: string, sessionId: string | undefined): number {
  const n = int(value, where, sessionId);
  if (n < 0) throw corrupt(`${where} holds the negative number ${n}`, sessionId);
  return n;
}
