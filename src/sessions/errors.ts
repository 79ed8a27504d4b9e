/**
 * The error of durable sessions and their stores: one class, switched on by `code`.
 */
import { branded } from '../util/brand.js';

/**
 * What went wrong, as a stable string to switch on:
 *
 * - `SESSION_BUSY`: another owner holds the session's live lease (`holder` says who and for
 *   how long), or a turn of the session is already open.
 * - `SESSION_NOT_FOUND`: no stored session has this id.
 * - `SESSION_ALREADY_EXISTS`: `create` with an id that is already stored.
 * - `SESSION_CLOSED`: the durable session (or the store) was closed.
 * - `AGENT_MISMATCH`: `resume` with an agent id other than the stored one.
 * - `LEASE_LOST`: a write or renewal with a lease that is no longer current and unexpired on
 *   the store's clock (expired, taken over, released, or the session was deleted).
 * - `CHECKPOINT_NOT_FOUND`: no kept checkpoint for that turn.
 * - `CORRUPT_ROW`: a stored row can not be read (the message names the table, session and row).
 * - `UNSUPPORTED_FORMAT`: a row or the schema was written by a newer polestar.
 * - `SERIALIZE_FAILED` / `DESERIALIZE_FAILED`: a serializer or deserializer threw or
 *   produced a value that is not lossless JSON.
 * - `UNKNOWN_LOCAL`: a persisted local has no serializer.
 * - `STORE_LOCKED`: a lock wait of the store exceeded its bound: SQLite's file lock past the
 *   busy timeout, or a PostgreSQL row held by another transaction past `lock_timeout`
 *   (`SESSION_BUSY` stays a live lease of another owner).
 * - `STORE_ERROR`: the store failed otherwise (connection lost, disk full, store closed, a
 *   call that did not answer within `storeTimeoutMs`…); `cause` holds the driver's error.
 * - `COMMIT_UNKNOWN`: a turn's commit was sent but its outcome could not be found out
 *   because the store stays unreachable (`turn` and `attempt` say which). Until it is
 *   resolved, `turn()` and `rollback()` reject with it without running anything; call
 *   `durableSession.resolvePending()` once the store is back, and re-run the turn only when
 *   it answers `'not-committed'` (re-running it blindly stores its message twice).
 * - `TURN_ALREADY_COMMITTED`: `turn(fn, { key })` with the key of a turn of this session
 *   that is committed already (among the last `keepCheckpoints` turns; `turn` says which):
 *   `fn` did not run and nothing changed. The retried message was applied; do not send it
 *   again.
 * - `TURN_CANCELLED`: the turn in flight was cancelled (`sessions.cancel(sessionId, reason)`,
 *   from this process or another): its attempt was aborted and not committed; `reason` says
 *   why.
 */
export type SessionErrorCode =
  | 'SESSION_BUSY'
  | 'SESSION_NOT_FOUND'
  | 'SESSION_ALREADY_EXISTS'
  | 'SESSION_CLOSED'
  | 'AGENT_MISMATCH'
  | 'LEASE_LOST'
  | 'CHECKPOINT_NOT_FOUND'
  | 'CORRUPT_ROW'
  | 'UNSUPPORTED_FORMAT'
  | 'SERIALIZE_FAILED'
  | 'DESERIALIZE_FAILED'
  | 'UNKNOWN_LOCAL'
  | 'STORE_LOCKED'
  | 'STORE_ERROR'
  | 'COMMIT_UNKNOWN'
  | 'TURN_ALREADY_COMMITTED'
  | 'TURN_CANCELLED';

/** Every {@link SessionErrorCode}, in the order its documentation lists them. */
export const SESSION_ERROR_CODES: readonly SessionErrorCode[] = Object.freeze([
  'SESSION_BUSY',
  'SESSION_NOT_FOUND',
  'SESSION_ALREADY_EXISTS',
  'SESSION_CLOSED',
  'AGENT_MISMATCH',
  'LEASE_LOST',
  'CHECKPOINT_NOT_FOUND',
  'CORRUPT_ROW',
  'UNSUPPORTED_FORMAT',
  'SERIALIZE_FAILED',
  'DESERIALIZE_FAILED',
  'UNKNOWN_LOCAL',
  'STORE_LOCKED',
  'STORE_ERROR',
  'COMMIT_UNKNOWN',
  'TURN_ALREADY_COMMITTED',
  'TURN_CANCELLED',
] as const);

/** Who holds a lease, as a `SESSION_BUSY` error reports it. */
export interface LeaseHolder {
  /** The holder's lease owner id. */
  readonly owner: string;
  /** The holder's fencing epoch. */
  readonly epoch: number;
  /** Milliseconds left before the lease expires, on the store's clock (at the time of the refusal). */
  readonly remainingMs: number;
}

/** Options of the {@link SessionError} constructor. */
export interface SessionErrorOptions {
  /** The session the error is about, when there is one. */
  readonly sessionId?: string;
  /** The underlying error (a driver error, a serializer's throw…). */
  readonly cause?: unknown;
  /** For `SESSION_BUSY` caused by another owner's lease: who holds it. */
  readonly holder?: LeaseHolder;
  /** For `COMMIT_UNKNOWN`: the turn whose commit outcome is unknown; for `TURN_ALREADY_COMMITTED`: the committed turn with that key. */
  readonly turn?: number;
  /** For `COMMIT_UNKNOWN`: the attempt of that turn. */
  readonly attempt?: number;
  /**
   * For `TURN_CANCELLED`: the reason given to the cancel; for `SESSION_CLOSED` of a session
   * that closed by itself: `'handoff'` (another process asked for it) or `'idle'`
   * (`idleCloseMs` passed without a turn).
   */
  readonly reason?: string;
}

/**
 * The error of durable sessions and session stores. Switch on {@link SessionError.code};
 * the message names the session, what happened and what to do.
 */
export class SessionError extends Error {
  /**
   * True when `value` is an instance of `SessionError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'SessionError');
  /** Always `'SessionError'`. */
  override readonly name = 'SessionError';
  /** What went wrong. */
  readonly code: SessionErrorCode;
  /** The session the error is about, or `undefined` (e.g. a store-wide failure). */
  readonly sessionId: string | undefined;
  /** For `SESSION_BUSY` caused by another owner's lease: who holds it and for how long. */
  readonly holder: LeaseHolder | undefined;
  /** For `COMMIT_UNKNOWN`: the turn whose commit outcome is unknown; for `TURN_ALREADY_COMMITTED`: the committed turn with that key. */
  readonly turn: number | undefined;
  /** For `COMMIT_UNKNOWN`: the attempt of that turn. */
  readonly attempt: number | undefined;
  /**
   * For `TURN_CANCELLED`: the reason given to the cancel; for `SESSION_CLOSED` of a session
   * that closed by itself: `'handoff'` or `'idle'`. `undefined` otherwise.
   */
  readonly reason: string | undefined;

  /**
   * @param code - what went wrong.
   * @param message - the full message (name the session and the fix).
   * @param options - `sessionId`, `cause`, `holder`, `turn`, `attempt`, `reason`.
   */
  constructor(code: SessionErrorCode, message: string, options: SessionErrorOptions = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.code = code;
    this.sessionId = options.sessionId;
    this.holder = options.holder;
    this.turn = options.turn;
    this.attempt = options.attempt;
    this.reason = options.reason;
  }
}

/** @internal True when `err` is a {@link SessionError} (optionally with that code). */
export function isSessionError(err: unknown, code?: SessionErrorCode): err is SessionError {
  return err instanceof SessionError && (code === undefined || err.code === code);
}
