/**
 * The storage contract of durable sessions: the `SessionStore` interface and
 * the values it takes and returns. Stores implement it; `SessionsPlugin` is built on it.
 *
 * Storage model (every store):
 * - one **session row** per session: agent id, meta, the committed turn, the lease
 *   (owner, epoch, expiry on the store's clock) and the open turn attempt, if any;
 * - an **append-only event log** per session, `seq` contiguous from 1; each event belongs to
 *   one attempt `(turn, attempt)` of a turn;
 * - one **attempt record** per turn attempt, keyed by turn and attempt: written *started*
 *   by {@link SessionStore.begin} (with the turn's key, if it has one), ended *committed*
 *   or *aborted* exactly once;
 * - a **checkpoint** of the serialized locals per committed turn (checkpoint 0 by
 *   {@link SessionStore.create}); kept: checkpoint 0, the last `keepCheckpoints` turns',
 *   the last committed turn's and every pinned one;
 * - **rollback records**: a rollback supersedes the later turns, which stay in the log.
 *
 * The conversation history is never stored as a blob: it is the committed, not superseded
 * events whose kind starts with `history/` ({@link HISTORY_KIND_PREFIX}), in `seq` order.
 */
import type { JsonValue } from '../../util/lossless-json.js';
import type { LeaseHolder } from '../errors.js';


/**
 * Events whose kind starts with this prefix are history changes: {@link SessionStore.load}
 * returns the committed ones as `history`. (The sessions plugin writes `history/append` and
 * `history/replace`; a `TurnLog` kind can not start with it.)
 */
export const HISTORY_KIND_PREFIX = 'history/';

/**
 * A lease on one session: whoever holds the current, unexpired lease is the only one whose
 * writes a store accepts. `epoch` is the fencing token: it grows by one at every acquisition,
 * so a paused former holder's late write carries a stale epoch and is refused (`LEASE_LOST`).
 */
export interface Lease {
  /** The leased session. */
  readonly sessionId: string;
  /** The lease owner (one per server / `SessionsPlugin`; a store object may serve several). */
  readonly owner: string;
  /** The fencing epoch: 1 at `create`, then one more at every `acquire`. */
  readonly epoch: number;
  /**
   * The incarnation of the owner that took the lease (one per `SessionsPlugin` instance).
   * An `acquire` by the same `owner` with another incarnation takes a live lease over at
   * once (a restarted process with a stable owner id); absent for a lease taken without one.
   */
  readonly incarnation?: string;
}

/** One persisted local of a checkpoint: what a serializer produced for one token. */
export interface PersistedLocal {
  /** The serializer's stable key (never a class name). */
  readonly key: string;
  /** Whose local it is: the session context's or the agent context's. */
  readonly scope: 'session' | 'agent';
  /** The serializer version that wrote `data` (a positive integer). */
  readonly version: number;
  /** The serialized value (lossless JSON). */
  readonly data: JsonValue;
}

/** An event to append to a session's log. */
export interface NewSessionEvent {
  /** What happened, e.g. `history/append` or a `TurnLog` kind such as `tool/result`. */
  readonly kind: string;
  /** The event's body (lossless JSON; stored as JSON text, read back exactly). */
  readonly body: JsonValue;
}

/**
 * The status of a stored event, derived from its attempt's record and the rollbacks:
 * `committed`; `aborted` (the attempt failed or was interrupted); `superseded` (its turn was
 * committed, then a rollback went back before it); `pending` (flushed, attempt not ended).
 */
export type SessionEventStatus = 'committed' | 'aborted' | 'superseded' | 'pending';

/** An event as stored, with its position and status. */
export interface StoredSessionEvent {
  /** Position in the session's log: contiguous from 1. */
  readonly seq: number;
  /** The turn number of the attempt the event belongs to. */
  readonly turn: number;
  /** The attempt (1, 2, …) of that turn. */
  readonly attempt: number;
  /** What happened. */
  readonly kind: string;
  /** The body, exactly as given. */
  readonly body: JsonValue;
  /** The event's status at the time it was read. */
  readonly status: SessionEventStatus;
  /** When the event was written, on the store's clock. */
  readonly at: Date;
}

/** One turn attempt: `turn` is the number it would commit as, `attempt` counts tries of it. */
export interface TurnAttempt {
  /** The turn number (`committedTurn + 1` when it began). */
  readonly turn: number;
  /** The attempt number of that turn (1 for the first try; never reused). */
  readonly attempt: number;
}

/** What {@link SessionStore.begin} returns: the attempt it opened. */
export interface BegunAttempt extends TurnAttempt {
  /** When the attempt was started, on the store's clock. */
  readonly startedAt: Date;
}

/** An attempt that was started and never ended (its process crashed or lost its lease). */
export interface OpenAttempt extends BegunAttempt {
  /** The epoch of the lease that began it. */
  readonly epoch: number;
  /** The events it flushed before it stopped (status `pending`). */
  readonly events: readonly StoredSessionEvent[];
}

/** What {@link SessionStore.commit} resolves to. */
export interface CommittedTurn extends TurnAttempt {
  /** When the turn was committed, on the store's clock. */
  readonly committedAt: Date;
  /** The session's last `seq` after the commit. */
  readonly lastSeq: number;
}

/** A kept checkpoint, without its locals. */
export interface CheckpointInfo {
  /** The committed turn the checkpoint belongs to (0 = the one `create` wrote). */
  readonly turn: number;
  /** The pin's label, if it was pinned with one. */
  readonly label?: string;
  /** True when pinned by {@link SessionStore.pin} (kept regardless of retention). */
  readonly pinned: boolean;
  /** When the checkpoint was written, on the store's clock. */
  readonly createdAt: Date;
}

/** A kept checkpoint with its locals. */
export interface Checkpoint extends CheckpointInfo {
  /** The serialized locals, in the order they were given. */
  readonly locals: readonly PersistedLocal[];
}

/** The live lease of a session, as {@link SessionInfo} reports it. */
export interface LeaseState extends LeaseHolder {
  /** When it expires, on the store's clock. */
  readonly expiresAt: Date;
}

/** A session's row: identity and head. */
export interface SessionInfo {
  /** The session id. */
  readonly sessionId: string;
  /** The id of the agent the session belongs to. */
  readonly agentId: string;
  /** The application's metadata given at `create` (exact round trip). */
  readonly meta: JsonValue;
  /** When it was created, on the store's clock. */
  readonly createdAt: Date;
  /** When it was last written (any fenced write), on the store's clock. */
  readonly updatedAt: Date;
  /** The last committed turn (0 after `create`; set back by a rollback). */
  readonly committedTurn: number;
  /** The last `seq` of the log (0 when empty). */
  readonly lastSeq: number;
  /** The live lease, or `undefined` when the session is free (never leased, released or expired). */
  readonly lease: LeaseState | undefined;
}

/** What {@link SessionStore.load} resolves to: everything a resume needs. */
export interface LoadedSession {
  /** The session row. */
  readonly info: SessionInfo;
  /** The checkpoint loaded: the last committed turn's, or the one asked for. */
  readonly checkpoint: Checkpoint;
  /**
   * The history changes to replay: committed, not superseded events whose kind starts with
   * `history/`, of turns up to `checkpoint.turn`, in `seq` order.
   */
  readonly history: readonly StoredSessionEvent[];
  /** The attempt started and never ended, if any (a crash or a lost lease interrupted it). */
  readonly open: OpenAttempt | undefined;
  /** Every kept checkpoint, by turn. */
  readonly checkpoints: readonly CheckpointInfo[];
}

/** One item of {@link SessionStore.list}. */
export interface SessionSummary {
  /** The session id. */
  readonly sessionId: string;
  /** The agent it belongs to. */
  readonly agentId: string;
  /** Its last committed turn. */
  readonly committedTurn: number;
  /** When it was last written. */
  readonly updatedAt: Date;
  /** The metadata given at `create`. */
  readonly meta: JsonValue;
}

/** A page of {@link SessionStore.list}. */
export interface SessionPage {
  /** The sessions of this page, ordered by session id (Unicode code point order). */
  readonly items: readonly SessionSummary[];
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  readonly cursor?: string;
}

/** Input of {@link SessionStore.create}. */
export interface CreateSessionInput {
  /** The new session's id (a non-empty, well-formed string without NUL; at most 1024 characters). */
  readonly sessionId: string;
  /** The id of the agent it belongs to (same rules). */
  readonly agentId: string;
  /** The owner taking the first lease (epoch 1). */
  readonly owner: string;
  /** The owner's incarnation (see {@link Lease.incarnation}). */
  readonly incarnation?: string;
  /** Lease time to live in milliseconds (a positive integer). */
  readonly ttlMs: number;
  /** Application metadata (lossless JSON); `null` when omitted. */
  readonly meta?: JsonValue;
  /** The locals of checkpoint 0 (turn 0). */
  readonly locals: readonly PersistedLocal[];
}

/** Options of {@link SessionStore.acquire}. */
export interface AcquireOptions {
  /** Who takes the lease. */
  readonly owner: string;
  /**
   * The owner's incarnation. A live lease recorded for the same `owner` with another
   * incarnation is taken over at once (epoch + 1); with the same incarnation (or without
   * one) it is `SESSION_BUSY` as for any live lease.
   */
  readonly incarnation?: string;
  /** Lease time to live in milliseconds (a positive integer). */
  readonly ttlMs: number;
}

/** Input of {@link SessionStore.commit}. */
export interface CommitInput extends TurnAttempt {
  /** The attempt's events not flushed yet (history changes and `TurnLog` events). */
  readonly events: readonly NewSessionEvent[];
  /** The checkpoint of the turn: the serialized locals. */
  readonly locals: readonly PersistedLocal[];
  /** Retention: how many of the last turns' checkpoints to keep besides 0 and the pinned ones (default 20; the committed turn's is always kept). */
  readonly keepCheckpoints?: number;
}

/** Options of {@link SessionStore.begin}. */
export interface BeginOptions {
  /**
   * When an attempt begun with this same lease (same owner and epoch) is still open, end it
   * as aborted (reason `begin outcome unknown`) and open the next attempt in the same
   * transaction, instead of `SESSION_BUSY`. Used after a `begin` or `abort` whose reply was
   * lost: that attempt never ran anything that could commit.
   */
  readonly replaceOpen?: boolean;
  /**
   * The application's key of this turn (a non-empty, well-formed string without NUL, at most
   * 1024 characters), recorded with the attempt. When a committed turn of the current
   * timeline among the last `keyWindow` turns (turns `committedTurn - keyWindow + 1` to
   * `committedTurn`) was begun with the same key, `begin` rejects with
   * `TURN_ALREADY_COMMITTED` (its `turn` is that turn) and writes nothing: checked in the
   * same transaction that opens the attempt, so the answer costs no extra round trip. A turn
   * superseded by a rollback no longer counts. Only stores whose
   * {@link SessionStore.turnKeys} is `true` honour it.
   */
  readonly key?: string;
  /**
   * How many of the last committed turns `key` is compared with (an integer >= 1; default
   * 20). The sessions plugin passes its `keepCheckpoints` (at least 1).
   */
  readonly keyWindow?: number;
}

/**
 * What {@link SessionStore.attemptStatus} reports of one attempt: `committed`, `aborted`,
 * `open` (started, not ended), or `absent` (no such attempt recorded).
 */
export type AttemptStatus = 'committed' | 'aborted' | 'open' | 'absent';

/** Input of {@link SessionStore.abort}. */
export interface AbortInput extends TurnAttempt {
  /** Events to write with the aborted record (the `TurnLog` events not flushed yet). */
  readonly events?: readonly NewSessionEvent[];
  /** Why it was aborted (kept in the attempt record), e.g. the error's message or `interrupted`. */
  readonly reason?: string;
}

/** Options of {@link SessionStore.delete}. */
export interface DeleteOptions {
  /** The caller's current lease on the session, if it holds one (deleting it is then allowed). */
  readonly lease?: Lease;
  /** Delete even while another owner holds a live lease (its next write gets `LEASE_LOST`). */
  readonly force?: boolean;
}

/** Options of {@link SessionStore.list}. */
export interface ListQuery {
  /** Only the sessions of this agent. */
  readonly agentId?: string;
  /** Page size, 1–1000 (default 100). */
  readonly limit?: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string;
}

/** Options of {@link SessionStore.events}. */
export interface EventsQuery {
  /** Only events with a greater `seq` (default 0: from the start). */
  readonly afterSeq?: number;
  /** At most this many events (default: all). */
  readonly limit?: number;
}

// ---- routing: handoff and cancel requests, wake-ups ------------------------------------------

/**
 * A request to the holder of a session's lease, read by the holder (see
 * {@link SessionStore.requests}): `handoff` asks it to release the session for the waiting
 * owner `from`, until the waiter's deadline `until`; `cancel` asks it to abort the open
 * attempt `{ turn, attempt }` of the session, with `reason`.
 */
export type HolderRequest =
  | {
      /** A waiting process asks the holder to release the session. */
      readonly kind: 'handoff';
      /** The session asked for. */
      readonly sessionId: string;
      /** The lease owner that waits for it. */
      readonly from: string;
      /** The waiter's deadline: the request is ignored once it has passed on the store's clock. */
      readonly until: Date;
    }
  | {
      /** Someone asks for the open attempt of the session to be aborted. */
      readonly kind: 'cancel';
      /** The session whose attempt is cancelled. */
      readonly sessionId: string;
      /** The turn of the cancelled attempt. */
      readonly turn: number;
      /** The cancelled attempt of that turn. */
      readonly attempt: number;
      /** Why (the turn rejects carrying it). */
      readonly reason: string;
    };

/**
 * What woke a watcher of {@link SessionStore.watch}: a release of `sessionId` (its lease is
 * free: a waiter may try to take it), a handoff or cancel request addressed to the lease
 * owner `owner` (read them with {@link SessionStore.requests}), or `resync`: wake-ups may
 * have been missed (the store's notification connection came back), so read everything
 * again. A wake-up is only a hint to read the store: the requests and leases themselves are
 * rows, and a watcher may receive wake-ups meant for other owners or other sessions.
 */
export type StoreWake =
  | {
      /** A lease of `sessionId` was released (or the session was deleted). */
      readonly kind: 'release';
      /** The session. */
      readonly sessionId: string;
    }
  | {
      /** A handoff or cancel request was recorded. */
      readonly kind: 'handoff' | 'cancel';
      /** The session it is about. */
      readonly sessionId: string;
      /** The lease owner it is addressed to. */
      readonly owner: string;
    }
  | {
      /** Wake-ups may have been missed: read everything again. */
      readonly kind: 'resync';
    };

/** A running subscription of {@link SessionStore.watch}. */
export interface StoreWatch {
  /**
   * `'notify'`: wake-ups arrive as they happen (PostgreSQL `LISTEN`, or in-process delivery by
   * the memory store); `'poll'`: the caller must also read the store every `pollMs`, since
   * wake-ups from other processes do not reach it. It can change while the subscription runs
   * (a PostgreSQL store whose `LISTEN` connection could not be set up polls until it can).
   */
  readonly mode: 'notify' | 'poll';
  /** How often a caller polls in `'poll'` mode, in milliseconds (the store's `pollMs`, default 250). */
  readonly pollMs: number;
  /** Stops the subscription (idempotent); resolves once its connection, if any, is closed. */
  close(): Promise<void>;
}

/**
 * Where durable sessions live. Every method returns a promise and reports every failure by
 * rejecting: a {@link SessionError} for what the contract names, a `TypeError` for malformed
 * input or a misuse of the protocol (committing an attempt that is not open), in both cases
 * with nothing written.
 *
 * Every write but `create`, `acquire`, `release` and `delete` is **fenced**: it is refused
 * with `LEASE_LOST`, writing nothing, unless its lease is the session's current one (same
 * owner, same epoch) and unexpired on the store's clock. The lease protocol decides who may
 * write; a store never trusts the caller's clock.
 *
 * A store object may serve several servers at once, each its own lease owner; several
 * store objects may share one backend (processes on one host with SQLite, on many hosts with
 * PostgreSQL). `runSessionStoreConformance` (polestar-di/testing) checks an implementation.
 */
export interface SessionStore {
  /**
   * `true` when {@link SessionStore.begin} honours {@link BeginOptions.key}: it records the
   * key with the attempt and refuses a key of a recent committed turn with
   * `TURN_ALREADY_COMMITTED`. The memory, SQLite and PostgreSQL stores do. Without it the
   * sessions plugin refuses `turn(fn, { key })` with a `TypeError` (it could not tell
   * whether the keyed turn was applied), and `runSessionStoreConformance` skips the key
   * checks.
   */
  readonly turnKeys?: boolean;

  /**
   * Creates a session with its checkpoint 0 and a first lease (epoch 1) for `owner`, in one
   * transaction. `SESSION_ALREADY_EXISTS` when the id is taken (nothing changes).
   */
  create(input: CreateSessionInput): Promise<Lease>;

  /**
   * Takes the session's lease for `owner` when it is free, released or expired on the
   * store's clock (epoch + 1), or at once when the live lease is `owner`'s own, recorded with
   * another `incarnation` (a restarted process with a stable owner id). `SESSION_BUSY` (with
   * `holder`) while any other live lease is held (the same owner's included, with the same
   * incarnation or when either side has none); `SESSION_NOT_FOUND`; `UNSUPPORTED_FORMAT`
   * for a session written by a newer format.
   */
  acquire(sessionId: string, options: AcquireOptions): Promise<Lease>;

  /**
   * Extends a live lease to `ttlMs` (default: the ttl it was acquired with) from now on the
   * store's clock. `LEASE_LOST` when it is no longer current or already expired; when another
   * incarnation of the lease's own owner took the session over, that `LEASE_LOST` has the
   * `cause` `{ reason: 'owner-reused', owner, epoch }` (so has every fenced write's).
   */
  renew(lease: Lease, options?: { readonly ttlMs?: number }): Promise<void>;

  /**
   * Gives the lease up. Resolves `true` when it was still the session's recorded lease
   * (expired or not), `false` otherwise (taken over, released, or the session is gone).
   * Never `LEASE_LOST`.
   */
  release(lease: Lease): Promise<boolean>;

  /**
   * Opens an attempt of turn `committedTurn + 1` (fenced) and writes its *started* record.
   * The attempt number is one more than the highest attempt of that turn ever recorded.
   * `SESSION_BUSY` while another attempt is open (commit or abort it first), unless
   * `options.replaceOpen` and that attempt was begun with this same lease. With
   * `options.key` (on a store whose {@link SessionStore.turnKeys} is `true`), the key is
   * recorded with the attempt, and a key of a recent committed turn rejects with
   * `TURN_ALREADY_COMMITTED`, writing nothing (checked before the open attempt).
   */
  begin(lease: Lease, options?: BeginOptions): Promise<BegunAttempt>;

  /**
   * Appends events to the open attempt at once (a `TurnLog.flush()`), fenced. Their status
   * is `pending` until the attempt ends. The attempt must be open and begun with this lease.
   */
  append(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[]): Promise<void>;

  /**
   * Commits the open attempt in one fenced transaction: its events, the *committed* record,
   * the checkpoint of `locals` and the checkpoint retention; `committedTurn` becomes
   * `turn`. Idempotent: committing an attempt this lease already committed resolves to the
   * same result and writes nothing (retry after an unknown outcome), also once the lease has
   * expired, as long as it is still the session's recorded lease; after another `acquire`
   * (or a `release`) it is `LEASE_LOST`, and {@link SessionStore.attemptStatus} tells the outcome.
   */
  commit(lease: Lease, input: CommitInput): Promise<CommittedTurn>;

  /**
   * Ends the open attempt as *aborted* with `events`, fenced. Also ends an attempt begun
   * under an earlier epoch (an interrupted turn found by `load`). Idempotent like `commit`:
   * aborting an attempt that is already aborted resolves and writes nothing.
   */
  abort(lease: Lease, input: AbortInput): Promise<void>;

  /**
   * Goes back to a kept checkpoint of the current timeline, fenced: writes a rollback
   * record, drops the checkpoints of later turns, and `committedTurn` becomes `turn`. The
   * later turns' events stay in the log as `superseded`. `CHECKPOINT_NOT_FOUND` for a turn
   * without a kept checkpoint; `SESSION_BUSY` while an attempt is open.
   */
  rollback(lease: Lease, turn: number): Promise<void>;

  /**
   * Pins the kept checkpoint of `turn` (kept regardless of retention), with `label` if
   * given (otherwise its label is unchanged), fenced. `CHECKPOINT_NOT_FOUND` otherwise.
   */
  pin(lease: Lease, turn: number, label?: string): Promise<void>;

  /**
   * Reads what a resume needs in one consistent snapshot: the row, the checkpoint of the
   * last committed turn (or of `turn`: `CHECKPOINT_NOT_FOUND` unless kept), the history
   * changes up to it, the open attempt, the kept checkpoints. `SESSION_NOT_FOUND`,
   * `CORRUPT_ROW`, `UNSUPPORTED_FORMAT`. Needs no lease.
   */
  load(sessionId: string, options?: { readonly turn?: number }): Promise<LoadedSession>;

  /**
   * The status of one attempt of a session, read after any write transaction of that
   * session in flight has ended (PostgreSQL: under the session's row lock; SQLite: queued
   * behind it), so a commit whose reply was lost is seen as it really ended. Needs no lease.
   * `SESSION_NOT_FOUND`. Optional: without it the sessions plugin resolves an unknown
   * commit by repeating the (idempotent) commit.
   */
  attemptStatus?(sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus>;

  /** The kept checkpoints of a session, by turn. `SESSION_NOT_FOUND`. */
  checkpoints(sessionId: string): Promise<readonly CheckpointInfo[]>;

  /** A page of sessions, ordered by id, optionally of one agent. */
  list(query?: ListQuery): Promise<SessionPage>;

  /**
   * Deletes a session and all its rows. Resolves `false` when there was none.
   * `SESSION_BUSY` (with `holder`) while another owner holds a live lease, unless `force`
   * or `lease` is that live lease.
   */
  delete(sessionId: string, options?: DeleteOptions): Promise<boolean>;

  /**
   * Every stored event of a session, aborted, superseded and pending ones included, in
   * `seq` order, read page by page. The iterator rejects with `SESSION_NOT_FOUND` for an
   * unknown session and `CORRUPT_ROW` / `UNSUPPORTED_FORMAT` for an unreadable row.
   */
  events(sessionId: string, query?: EventsQuery): AsyncIterable<StoredSessionEvent>;


  // ---- routing: handoff and cancel requests, wake-ups (optional) --------------------------
  // A store without these methods still works: the sessions plugin then polls `load` while
  // it waits for a lease, and can neither hand a session off nor cancel a turn across
  // processes.

  /**
   * Asks the holder of `sessionId`'s live lease to release it, on behalf of the waiting owner
   * `request.owner`, until `request.until` (the waiter's deadline; a later request of the same
   * session replaces an earlier one). Resolves `true` when a live lease of another owner was
   * asked (and a `handoff` wake-up sent to it), `false` when the session is absent, unleased,
   * expired or leased to `request.owner` itself (nothing recorded). The request applies to
   * that lease only: a release, or an acquire by anyone, removes it. Needs no lease.
   */
  requestHandoff?(sessionId: string, request: { readonly owner: string; readonly until: Date }): Promise<boolean>;

  /**
   * Records a cancel of the session's open attempt (the one `load().open` reports), with
   * `reason`, and sends a `cancel` wake-up to its lease owner. Resolves that attempt's
   * `{ turn, attempt }`, or `undefined` when no attempt is open (nothing recorded). The cancel
   * applies to that exact attempt only: once it ends, the cancel is moot. Needs no lease.
   */
  requestCancel?(sessionId: string, reason: string): Promise<TurnAttempt | undefined>;

  /**
   * The requests addressed to leases of `owner` that still apply: handoff requests whose
   * `until` has not passed on the store's clock and whose session `owner` still holds (the
   * same live lease that was asked), and cancels of an attempt that is still open and was
   * begun under `owner`'s current lease of its session. Ordered by session id (Unicode code
   * point order), a session's cancel before its handoff.
   */
  requests?(owner: string): Promise<readonly HolderRequest[]>;

  /**
   * Subscribes to wake-ups: `onWake` is called (never synchronously inside the call that
   * caused it) for each release, handoff request and cancel request, of this store object and,
   * where the store can tell (PostgreSQL), of every other process on the same database.
   * Synchronous; a non-function `onWake` or `onError` is a `TypeError`. Errors of the
   * subscription never throw: they turn it into `'poll'` mode and are reported once through
   * `onError`, if given (so is an `onWake` that throws). One subscription per caller; the
   * PostgreSQL store keeps one dedicated `LISTEN` connection per store object for all its
   * watchers. On a closed store the subscription is in `'poll'` mode and does nothing.
   */
  watch?(onWake: (wake: StoreWake) => void, onError?: (err: Error) => void): StoreWatch;

  // ---- end of routing ---------------------------------------------------------------------

  /**
   * Closes the store: waits for the operations in flight, then releases its connections
   * (a pool it was given stays open: that is the caller's). Later calls reject with
   * `STORE_ERROR`. Idempotent.
   */
  close(): Promise<void>;
}
