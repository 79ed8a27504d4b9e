/**
 * @internal A durable turn: its checks, the fenced *started* record (`begin`), the turn
 * function run in a session turn holding the `TurnLog`, then one commit (history changes,
 * `TurnLog` events, the committed record and a checkpoint of the persisted locals), or an
 * aborted record and the memory put back to the last committed turn.
 */
import type { SystemContext } from '../../context/system-context.js';
import { describeValue, errorText } from '../../context/token.js';
import type { Session } from '../../conversation/session.js';
import type { Mutable, TurnTraceContext } from '../../observability/channels.js';
import { isStoreTimeout, outcomeUnknown } from '../store/bounded-call.js';
import { SessionError, isSessionError } from '../errors.js';
import { checkTurnKey } from '../store/input.js';
import { serializeLocals } from '../serializers.js';
import type { BeginOptions, BegunAttempt, CommitInput, Lease, PersistedLocal } from '../store/contract.js';
import { TurnLog } from '../turn-log.js';
import { storeFailure } from './lease.js';
import { abortOrSupersede, abortStale, commitUnknown, notApplied, resolve, runExclusive } from './pending.js';
import { restoreCommitted } from './restore.js';
import { EMPTY, MAYBE_OPEN, SETTLED, noop, type DurableState, type PendingCommit } from './state.js';
import { TurnState, logEvents, stripEvent } from './turn-state.js';
import { TurnAbort, checkSignal } from './abort.js';
import { checkMs } from '../../util/check-ms.js';

/** A turn's function: runs in the turn context (which holds a `Scratchpad` and the `TurnLog`). */
export type TurnFn<R> = (turnCtx: SystemContext, session: Session) => R | Promise<R>;

/** Options of {@link DurableSession.turn}. */
export interface DurableTurnOptions {
  /**
   * The application's key of this turn, e.g. the id of the user message it handles (a
   * non-empty, well-formed string without NUL, at most 1024 characters), stored with the
   * attempt. A `turn()` whose key is the key of a committed turn of this session, among its
   * last `keepCheckpoints` turns (at least the last one), rejects with
   * `TURN_ALREADY_COMMITTED` (its `turn` says which) without running `fn` and without
   * changing anything: the answer to "was my retried message applied?", also after a
   * `COMMIT_UNKNOWN`, a crash or a resume in another process. A turn undone by a rollback no
   * longer counts. Needs a store whose `turnKeys` is `true` (the memory, SQLite and
   * PostgreSQL stores); with any other, a keyed `turn()` rejects with a `TypeError`.
   */
  readonly key?: string;
  /**
   * Aborts the turn. Already aborted: `turn()` rejects with `signal.reason` without running
   * `fn` or writing anything. Aborted while the turn waits in the queue (`waitMs`): it leaves
   * the queue and rejects with the reason. Aborted while `fn` runs: the turn context's
   * disposal starts (`turnCtx.signal` aborts with a `ContextDisposedError` whose `cause` is
   * the reason, and every tool execution made through it is aborted and awaited), the
   * attempt is aborted and not committed (the history and locals go back to the last
   * committed turn), and `turn()` rejects with the reason once `fn` has settled (make `fn`
   * honour `turnCtx.signal`). Once `fn` has returned, an abort changes nothing: `turn()`
   * settles with the commit's outcome. The listener added to the signal is removed when the
   * turn settles, so one long-lived signal may serve any number of turns.
   */
  readonly signal?: AbortSignal;
  /**
   * How long the turn may wait for the turn in flight (or a rollback or checkpoint) instead
   * of rejecting with `SESSION_BUSY`, in milliseconds (a finite number from 0 to 2^31 - 1;
   * default 0: no wait). Waiting turns run in call order. A turn whose slot does not come
   * within `waitMs` leaves the queue and rejects with `SESSION_BUSY`; `close()` rejects the
   * waiting ones with `SESSION_CLOSED`.
   */
  readonly waitMs?: number;
}

/** The checked options of one `turn()` call. */
interface TurnCall {
  readonly key: string | undefined;
  readonly signal: AbortSignal | undefined;
  readonly waitMs: number;
}

type Outcome<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

/** @internal `durableSession.turn(fn, options)` once traced (`traced`: its `polestar:turn` context object, when traced). */
export function turnOf<R>(s: DurableState, fn: TurnFn<R>, options: DurableTurnOptions | undefined, traced: Mutable<TurnTraceContext> | undefined): Promise<Awaited<R>> {
  if (typeof fn !== 'function') {
    return Promise.reject(new TypeError(`durableSession.turn(fn) on session "${s.id}": fn must be a function (turnCtx, session) => result, got ${describeValue(fn)}.`));
  }
  let call: TurnCall;
  try {
    call = turnCall(s, options);
  } catch (err) {
    return Promise.reject(err);
  }
  const { signal, waitMs } = call;
  if (signal?.aborted === true) return Promise.reject(signal.reason);
  const refused = s.refuse('turn()') ?? (waitMs > 0 ? undefined : s.refuseBusy('turn()'));
  if (refused !== undefined) return Promise.reject(refused);
  const control = new TurnAbort(signal);
  return runExclusive(s, 'turn', () => runTurn(s, fn, traced, call.key, control), { what: 'turn()', waitMs, control });
}

const NO_OPTIONS: TurnCall = Object.freeze({ key: undefined, signal: undefined, waitMs: 0 });

/** The checked options of `turn(fn, options)` (each read once); a `TypeError` naming the option otherwise. */
function turnCall(s: DurableState, options: unknown): TurnCall {
  if (options === undefined) return NO_OPTIONS;
  const what = `durableSession.turn(fn, options) on session "${s.id}"`;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object such as { key }, got ${describeValue(options)}.`);
  }
  const read = (name: 'key' | 'signal' | 'waitMs'): unknown => {
    try {
      return (options as Record<string, unknown>)[name];
    } catch (err) {
      throw new TypeError(`${what}: options.${name} could not be read: ${errorText(err)}.`, { cause: err });
    }
  };
  const key = turnKey(s, read('key'), what);
  const signal = checkSignal(read('signal'), `${what}: options.signal`);
  const rawWait = read('waitMs');
  const waitMs = rawWait === undefined ? 0 : checkMs(rawWait, `${what}: options.waitMs`);
  return { key, signal, waitMs };
}

/** The checked `key` of `turn(fn, options)`; a `TypeError` naming the option otherwise. */
function turnKey(s: DurableState, raw: unknown, what: string): string | undefined {
  const key = checkTurnKey(raw, `${what}: options.key`);
  if (key !== undefined && s.rt.store.inner.turnKeys !== true) {
    throw new TypeError(
      `${what}: options.key needs a store that records turn keys, and this store's turnKeys is not true, so it could not tell whether a turn with that key was committed. ` +
        'Use MemorySessionStore, SqliteSessionStore or PostgresSessionStore (or a store that implements keys), or run the turn without a key.',
    );
  }
  return key;
}

/** @internal One turn, from its started record to its commit (or its aborted record). */
export async function runTurn<R>(
  s: DurableState,
  fn: TurnFn<R>,
  traced: Mutable<TurnTraceContext> | undefined,
  key: string | undefined,
  control?: TurnAbort,
): Promise<Awaited<R>> {
  const rt = s.rt;
  const store = rt.store;
  const lease = s.lease as Lease;
  // Settling the ledger may have awaited the store: the session may be over by now.
  const refused = s.refuse('turn()');
  if (refused !== undefined && s.state !== 'closing') throw refused;
  // Aborted while the ledger settled: nothing of this turn was written.
  if (control?.wasAborted() === true) throw control.error;
  const t = new TurnState(s.id, (ts) => flush(s, ts));
  let attempt: BegunAttempt;
  try {
    // With a key, the store refuses it (TURN_ALREADY_COMMITTED, writing nothing) when a recent committed turn has it.
    const keyed: BeginOptions | undefined = key === undefined ? undefined : { key, keyWindow: Math.max(1, rt.keepCheckpoints) };
    attempt = await (s.ledger.kind === 'maybe-open' ? beginSuperseding(s, lease, keyed) : keyed === undefined ? store.begin(lease) : store.begin(lease, keyed));
  } catch (err) {
    throw beginFailed(s, err);
  }
  t.attempt = attempt;
  control?.begun(attempt);
  if (traced !== undefined) {
    traced.turn = attempt.turn;
    traced.attempt = attempt.attempt;
  }
  if (s.tornDown) throw notCommitted(s, attempt.turn, undefined);
  if (control?.wasAborted() === true) {
    // Aborted while the started record was written: fn does not run, the attempt is aborted.
    await abortOrSupersede(s, lease, attempt, EMPTY, abortedText(control.error));
    throw control.error;
  }
  s.turn = t;
  let outcome: Outcome<Awaited<R>>;
  try {
    const session = s.session as Session;
    const value = await (control === undefined
      ? session._turn((turnCtx, turnSession) => {
          turnCtx.insert(TurnLog, t.log);
          return fn(turnCtx, turnSession);
        }, traced)
      : session._turn(
          async (turnCtx, turnSession) => {
            turnCtx.insert(TurnLog, t.log);
            try {
              return await fn(turnCtx, turnSession);
            } finally {
              // From here an abort changes nothing: the turn settles with its commit's outcome.
              control.fnDone = true;
            }
          },
          traced,
          (turnCtx) => {
            control.ctx = turnCtx;
          },
        ));
    outcome = { ok: true, value };
  } catch (error) {
    outcome = { ok: false, error };
  }
  // An abort that reached fn before it returned: the attempt is not committed, turn() rejects with the abort's reason.
  if (control?.wasAborted() === true) outcome = { ok: false, error: control.error };
  t.accepting = false;
  await t.settled();
  if (s.turn === t) s.turn = undefined;
  if (s.tornDown) throw notCommitted(s, attempt.turn, outcome.ok ? undefined : outcome.error);

  if (outcome.ok && t.flushUnknown !== undefined) {
    // The events of that flush may or may not be stored: committing could write them twice.
    outcome = {
      ok: false,
      error: new SessionError(
        'STORE_ERROR',
        `turn ${attempt.turn} of session "${s.id}" was not committed: a TurnLog.flush() of it had an unknown outcome (${errorText(t.flushUnknown)}), ` +
          'so committing could store its events twice; the history and locals went back to the last committed turn. Retry the turn.',
        { sessionId: s.id, cause: t.flushUnknown },
      ),
    };
  }
  if (outcome.ok) {
    const value = outcome.value;
    let locals: PersistedLocal[] | undefined;
    try {
      locals = serializeLocals(rt.serializers, s.homes(), s.id);
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (locals !== undefined) {
      const input: CommitInput = {
        turn: attempt.turn,
        attempt: attempt.attempt,
        events: t.pending.map(stripEvent),
        locals,
        keepCheckpoints: rt.keepCheckpoints,
      };
      try {
        await store.commit(lease, input);
      } catch (err) {
        // A lock wait is a refusal too, but finding out costs little and is never wrong.
        if (outcomeUnknown(err) || isSessionError(err, 'STORE_LOCKED')) {
          // The commit may have been applied: find out before turn() settles.
          const pending: PendingCommit = { kind: 'commit-unknown', attempt, input, log: logEvents(t), cause: err };
          s.ledger = pending;
          const found = await resolve(s, pending);
          if (found.outcome === 'committed') return value;
          throw found.outcome === 'not-committed' ? notApplied(s, pending, found.status) : commitUnknown(s, pending, found.error);
        }
        const failure = storeFailure(s, err);
        if (!s.tornDown) {
          await abortOrSupersede(s, lease, attempt, logEvents(t), `commit failed: ${errorText(err)}`);
          await restoreCommitted(s, s.committedLocals);
        }
        throw failure;
      }
      s.advance(attempt.turn, locals);
      // A listener's failure does not undo a committed turn. With no listener, nothing is
      // emitted (no payload made, nothing awaited).
      if (s.heard('session/turn-committed')) await s.emit('session/turn-committed').catch(noop);
      return value;
    }
  }
  const error = (outcome as { error: unknown }).error;
  await abortOrSupersede(s, lease, attempt, logEvents(t), control?.wasAborted() === true ? abortedText(error) : errorText(error));
  if (!s.tornDown) await restoreCommitted(s, s.committedLocals);
  throw error;
}

/**
 * Writes the started record after a `begin` or `abort` whose outcome was unknown: it
 * supersedes the attempt that may have been left open (`replaceOpen`; on a store that
 * does not know the option, by aborting that attempt first). A turn with a settled ledger
 * calls `store.begin(lease)` directly (no extra step on the happy path).
 */
async function beginSuperseding(s: DurableState, lease: Lease, keyed: BeginOptions | undefined): Promise<BegunAttempt> {
  const store = s.rt.store;
  let attempt: BegunAttempt;
  try {
    attempt = await store.begin(lease, { ...keyed, replaceOpen: true });
  } catch (err) {
    if (!isSessionError(err, 'SESSION_BUSY')) throw err;
    await abortStale(s);
    attempt = await (keyed === undefined ? store.begin(lease) : store.begin(lease, keyed));
  }
  s.ledger = SETTLED;
  return attempt;
}

/**
 * The error a turn whose started record failed rejects with. A `begin` whose outcome is
 * unknown (or a lock wait) may have left an attempt open: the next turn supersedes it, and
 * this turn rejects with `STORE_ERROR` (`fn` did not run, so nothing of it can commit).
 */
function beginFailed(s: DurableState, err: unknown): unknown {
  const locked = isSessionError(err, 'STORE_LOCKED');
  if (!locked && !outcomeUnknown(err)) return storeFailure(s, err);
  // Superseding an attempt that is not there costs nothing: after a lock wait too.
  if (s.ledger.kind === 'settled') s.ledger = MAYBE_OPEN;
  if (locked) return err;
  return new SessionError(
    'STORE_ERROR',
    `turn ${s.committedTurn + 1} of session "${s.id}" did not start: store.begin() failed (${errorText(err)}); fn did not run, so nothing of the turn was committed. ` +
      'Retry the turn (it supersedes the attempt that may have been left open)' +
      (isStoreTimeout(err) ? ', or raise storeTimeoutMs if the store is only slow.' : ', and check the store if it keeps failing.'),
    { sessionId: s.id, cause: err },
  );
}

/**
 * Writes what the turn buffered (a `TurnLog.flush()`); a batch that may be stored makes the turn
 * unable to commit. The first flush of an attempt writes even when nothing is buffered: the store
 * may have written the started record without waiting for the disk, and a durable append makes it
 * durable, so a tool that flushes before acting outside the process is always on record.
 */
async function flush(s: DurableState, t: TurnState): Promise<void> {
  const batch = t.pending.splice(0);
  if (batch.length === 0 && t.flushed) return;
  try {
    await s.rt.store.append(s.lease as Lease, t.attempt as BegunAttempt, batch.map(stripEvent));
    t.flushed = true;
  } catch (err) {
    if (outcomeUnknown(err)) {
      // The batch may be stored: it is not written again, and the turn can not commit.
      t.flushUnknown ??= err;
      throw new SessionError(
        'STORE_ERROR',
        `TurnLog.flush() in turn ${(t.attempt as BegunAttempt).turn} of session "${s.id}": store.append() failed (${errorText(err)}) and may or may not have written the events; ` +
          'this turn can no longer commit (it would risk storing them twice): let it fail and retry it.',
        { sessionId: s.id, cause: err },
      );
    }
    // Put the batch back in front (no spread into a call: a turn may hold any number of events).
    const rest = t.pending.splice(0);
    for (const e of batch) t.pending.push(e);
    for (const e of rest) t.pending.push(e);
    throw storeFailure(s, err);
  }
}

/** The reason stored with the aborted record of an aborted turn. */
function abortedText(reason: unknown): string {
  return `aborted: ${errorText(reason)}`;
}

/** The rejection of a turn the session's end overtook: `LEASE_LOST`, the turn's own error, or `SESSION_CLOSED`. */
function notCommitted(s: DurableState, turn: number, error: unknown): unknown {
  if (s.lost !== undefined) {
    return new SessionError('LEASE_LOST', `turn ${turn} of session "${s.id}" was not committed: the session lost its lease (${s.lost.message}); resume it (sessions.resume) and retry the turn.`, {
      sessionId: s.id,
      cause: s.lost,
    });
  }
  if (error !== undefined) return error;
  return new SessionError('SESSION_CLOSED', `turn ${turn} of session "${s.id}" was not committed: the session was disposed while it ran; resume it (sessions.resume) and retry the turn.`, {
    sessionId: s.id,
  });
}
