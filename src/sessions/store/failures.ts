/**
 * @internal The errors a session store raises for what it finds in its rows and leases: a
 * corrupt row, a busy lease or attempt, a lost lease, a missing session or
 * checkpoint, a closed store. Every store (memory, SQLite, PostgreSQL) makes them here, so
 * they read the same whichever store raised them.
 */
import { SessionError } from '../errors.js';
import type { Lease, TurnAttempt } from './contract.js';

/** @internal A `CORRUPT_ROW` error. */
export function corrupt(what: string, sessionId: string | undefined, cause?: unknown): SessionError {
  return new SessionError(
    'CORRUPT_ROW',
    `corrupt row: ${what}. The session can not be read as stored; restore the row from a backup, or roll the session back to an earlier checkpoint.`,
    cause === undefined ? { sessionId } : { sessionId, cause },
  );
}

/** @internal "1.2 s" / "350 ms". */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.max(0, Math.round(ms))} ms`;
}

/** @internal The `SESSION_BUSY` error for a session leased by another owner. */
export function busyLease(sessionId: string, holder: { owner: string; epoch: number; remainingMs: number }): SessionError {
  return new SessionError(
    'SESSION_BUSY',
    `session busy: "${sessionId}" is leased by "${holder.owner}" (epoch ${holder.epoch}, ${formatMs(holder.remainingMs)} left on the store's clock); retry after it is released or expires.`,
    { sessionId, holder },
  );
}

/** @internal The `SESSION_NOT_FOUND` error. */
export function notFound(sessionId: string): SessionError {
  return new SessionError('SESSION_NOT_FOUND', `session not found: no stored session has the id "${sessionId}"; create it first.`, { sessionId });
}

/** @internal The `SESSION_BUSY` error for an open attempt. */
export function busyAttempt(sessionId: string, open: { turn: number; attempt: number }, what: string): SessionError {
  return new SessionError(
    'SESSION_BUSY',
    `session busy: turn ${open.turn} (attempt ${open.attempt}) of session "${sessionId}" is still open; commit or abort it before ${what}.`,
    { sessionId },
  );
}

/** @internal The `CHECKPOINT_NOT_FOUND` error. */
export function noCheckpoint(sessionId: string, turn: number, committedTurn: number): SessionError {
  return new SessionError(
    'CHECKPOINT_NOT_FOUND',
    turn > committedTurn
      ? `checkpoint not found: session "${sessionId}" has committed ${committedTurn} turn(s); there is no turn ${turn} to go back to.`
      : `checkpoint not found: the checkpoint of turn ${turn} of session "${sessionId}" was not kept (kept: checkpoint 0, the last keepCheckpoints turns' and the pinned ones); pin a checkpoint with checkpoint() to keep it.`,
    { sessionId },
  );
}

/** What the store knows about a lease that failed the fence. */
export interface FenceState {
  readonly exists: boolean;
  readonly owner: string | null;
  readonly epoch: number;
  readonly expiresAt: number | null;
  readonly now: number;
  /** The incarnation recorded with the session's lease, if any. */
  readonly incarnation: string | null;
}

/**
 * @internal The `cause` of a `LEASE_LOST` whose lease was taken over by another incarnation
 * of its own owner id (another process, or another server of this one, started with it).
 */
export interface OwnerReusedCause {
  readonly reason: 'owner-reused';
  /** The owner id both incarnations use. */
  readonly owner: string;
  /** The epoch of the lease that took the session over. */
  readonly epoch: number;
}

/**
 * @internal The `LEASE_LOST` error for a fenced write, or `undefined` when the lease is in
 * fact current and unexpired (then the write failed for another reason).
 */
export function leaseLost(lease: Lease, s: FenceState, what: string): SessionError | undefined {
  const mine = `lease of "${lease.owner}" (epoch ${lease.epoch})`;
  let why: string;
  if (!s.exists) why = `session "${lease.sessionId}" was deleted`;
  else if (s.owner === lease.owner && s.epoch === lease.epoch) {
    if (s.expiresAt !== null && s.expiresAt > s.now) return undefined;
    why = `the ${mine} expired ${formatMs(s.now - (s.expiresAt ?? s.now))} ago on the store's clock`;
  } else if (s.owner === null) why = `the ${mine} was released`;
  else if (s.owner === lease.owner && s.epoch !== lease.epoch && lease.incarnation !== undefined && s.incarnation !== null && s.incarnation !== lease.incarnation) {
    const cause: OwnerReusedCause = { reason: 'owner-reused', owner: s.owner, epoch: s.epoch };
    return new SessionError(
      'LEASE_LOST',
      `lease lost: ${what} refused because another process started with the same owner id "${s.owner}" took session "${lease.sessionId}" over (its lease is epoch ${s.epoch}; the ${mine} is stale). Nothing was written. Two live processes must not share an owner id: give each process its own SessionsPlugin({ owner }).`,
      { sessionId: lease.sessionId, cause },
    );
  } else if (s.epoch !== lease.epoch) why = `session "${lease.sessionId}" is now leased by "${s.owner}" (epoch ${s.epoch}) and the ${mine} is stale`;
  else why = `the ${mine} does not match the session's lease`;
  return new SessionError(
    'LEASE_LOST',
    `lease lost: ${what} refused because ${why}. Nothing was written; resume the session to continue.`,
    { sessionId: lease.sessionId },
  );
}

/** @internal The `TypeError` for an attempt that is not open. */
export function notOpen(sessionId: string, a: TurnAttempt, open: { turn: number; attempt: number } | undefined, what: string): TypeError {
  return new TypeError(
    `store.${what}: turn ${a.turn} attempt ${a.attempt} of session "${sessionId}" is not open` +
      (open ? ` (the open one is turn ${open.turn} attempt ${open.attempt})` : ' (no attempt is open: call begin() first)') +
      '.',
  );
}

/** @internal The error of a call on a closed store. */
export function storeClosed(what: string): SessionError {
  return new SessionError('STORE_ERROR', `store error: ${what} was called after the session store was closed; make a new store.`);
}
