/**
 * @internal Outcomes a durable session does not know: a commit whose reply was lost is
 * *pending* until the store says how it ended (the live session then advances, or goes
 * back to the last committed turn); a `begin` or `abort` whose reply was lost may have left
 * an attempt open. Turns and rollbacks run one at a time, each after the ledger is settled.
 */
import { errorText } from '../../context/token.js';
import { bounded, outcomeUnknown, storeTimeoutError } from '../store/bounded-call.js';
import { SessionError, isSessionError } from '../errors.js';
import type { AttemptStatus, Lease, NewSessionEvent, TurnAttempt } from '../store/contract.js';
import { endLost, storeFailure } from './lease.js';
import type { TurnAbort } from './abort.js';
import { slotFreed } from './idle.js';
import type { SlotWaiter } from './queue.js';
import { restoreCommitted } from './restore.js';
import { MAYBE_OPEN, SETTLED, noop, type DurableState, type Found, type Ledger, type PendingCommit, type SlotKind } from './state.js';

/** @internal How a call takes the turn slot. */
export interface ExclusiveOptions {
  /** The call, for messages (`turn()`, `rollback()`, `checkpoint()`). */
  readonly what: string;
  /** How long it may wait in the queue (0: `SESSION_BUSY` at once when the slot is taken). */
  readonly waitMs: number;
  /** A turn's abort state: it leaves the queue on an abort, and is `current` while it holds the slot. */
  readonly control?: TurnAbort | undefined;
  /** False for a call that runs without settling the ledger first (a checkpoint). */
  readonly settle?: boolean;
}

/**
 * @internal Runs `run` as the holder of the session's turn slot (`busy` meanwhile, drained
 * by `close()`), after settling the ledger when it is not settled. A free slot is taken at
 * once (synchronously); a taken one is `SESSION_BUSY` without `waitMs`, else the call
 * queues (first in, first out) for at most `waitMs`. When the slot is given up, the next
 * queued call gets it, or, with none, the session counts as idle from then on.
 */
export function runExclusive<T>(s: DurableState, kind: SlotKind, run: () => Promise<T>, options: ExclusiveOptions): Promise<T> {
  const ctl = options.control;
  const go = (): Promise<T> => {
    s.busy = kind;
    s.current = ctl;
    if (ctl !== undefined) ctl.phase = 'running';
    let p: Promise<T>;
    try {
      p = options.settle === false || s.ledger.kind === 'settled' ? run() : settleLedger(s, kind === 'rollback' ? 'rollback' : 'turn').then(run);
    } catch (err) {
      p = Promise.reject(err);
    }
    const done = p.then(noop, noop);
    s.busyDone = done;
    return p.finally(() => {
      s.busy = undefined;
      s.busyDone = undefined;
      s.current = undefined;
      ctl?.done();
      s.queue.release();
      if (!s.queue.busy) slotFreed(s, kind);
    });
  };
  if (s.queue.tryTake(s)) return go();
  if (options.waitMs <= 0) {
    ctl?.done();
    return Promise.reject(s.refuseBusy(options.what));
  }
  return new Promise<T>((resolve, reject) => {
    const w: SlotWaiter<DurableState> = {
      holder: s,
      what: options.what,
      start: () => {
        const refused = s.refuse(options.what);
        if (refused !== undefined) {
          ctl?.done();
          reject(refused);
          s.queue.release();
          return;
        }
        go().then(resolve, reject);
      },
      fail: (err) => {
        ctl?.done();
        reject(err);
      },
    };
    if (ctl !== undefined) ctl.leaveQueue = (reason) => void (s.queue.remove(w) && w.fail(reason));
    s.queue.enqueue(w, options.waitMs, (waited) => waitedTooLong(s, options.what, waited, options.waitMs));
  });
}

/** The `SESSION_BUSY` of a call whose `waitMs` passed in the queue. */
function waitedTooLong(s: DurableState, what: string, waited: number, waitMs: number): SessionError {
  return new SessionError(
    'SESSION_BUSY',
    `durableSession.${what} on session "${s.id}": waited ${waited} ms (waitMs: ${waitMs}) for ${s.holding()}, which is still running` +
      `${s.queue.length > 0 ? ` (${s.queue.length} more queued)` : ''}; it left the queue. Retry later, or pass a larger waitMs.`,
    { sessionId: s.id },
  );
}

/**
 * Before a turn or a rollback when the ledger is not settled: a pending commit is found
 * out first (`COMMIT_UNKNOWN` while it can not be); a rollback also aborts an attempt of
 * this lease a lost reply may have left open (a turn's `begin` supersedes it instead).
 */
async function settleLedger(s: DurableState, kind: 'turn' | 'rollback'): Promise<void> {
  const ledger = s.ledger;
  if (ledger.kind === 'commit-unknown' || ledger.kind === 'resolving') {
    const pending = ledger.kind === 'resolving' ? ledger.pending : ledger;
    const found = await resolve(s, pending);
    if (found.outcome === 'unknown') throw commitUnknown(s, pending, found.error);
  }
  if (kind === 'rollback' && s.ledger.kind === 'maybe-open') {
    try {
      await abortStale(s);
    } catch (err) {
      throw storeFailure(s, err);
    }
  }
}

/** @internal Aborts the attempt left open by this lease, if any (found with `load`: its number may be unknown). */
export async function abortStale(s: DurableState): Promise<void> {
  const { store } = s.rt;
  const lease = s.lease as Lease;
  const open = (await store.load(s.id)).open;
  if (open !== undefined && open.epoch === lease.epoch) {
    await store.abort(lease, { turn: open.turn, attempt: open.attempt, reason: 'begin outcome unknown' });
  }
  s.ledger = SETTLED;
}

/**
 * Writes the aborted record. True when it was written (or refused for a lost lease:
 * nothing of this lease can be written any more); false when it may not have been, so
 * the attempt may still be open. Never rejects.
 */
async function abortAttempt(s: DurableState, lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[], reason: string): Promise<boolean> {
  try {
    await s.rt.store.abort(lease, { turn: attempt.turn, attempt: attempt.attempt, events, reason });
    return true;
  } catch (err) {
    if (!isSessionError(err, 'LEASE_LOST')) return false;
    storeFailure(s, err);
    return true;
  }
}

/** @internal Writes the aborted record; when it may not have been written, the next `begin` supersedes the attempt. */
export async function abortOrSupersede(s: DurableState, lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[], reason: string): Promise<void> {
  if (!(await abortAttempt(s, lease, attempt, events, reason))) s.ledger = MAYBE_OPEN;
}

/**
 * @internal `durableSession.resolvePending()`: finds out how the pending commit ended, or
 * answers how the last one did.
 */
export function resolvePendingCommit(s: DurableState): Promise<'committed' | 'not-committed'> {
  const ledger = s.ledger;
  if (ledger.kind !== 'commit-unknown' && ledger.kind !== 'resolving') return Promise.resolve(s.lastFound.outcome);
  const pending = ledger.kind === 'resolving' ? ledger.pending : ledger;
  return resolve(s, pending).then((found) => {
    if (found.outcome === 'unknown') throw commitUnknown(s, pending, found.error);
    return found.outcome;
  });
}

/**
 * @internal Finds out how `pending` ended and makes the live session agree: committed →
 * it advances; not committed → an attempt still open is aborted and the history and
 * locals go back to the last committed turn. Still unknown → the ledger is `pending`
 * again. One resolution at a time, shared: while it runs the ledger is `resolving`, so a
 * turn or a rollback started meanwhile waits until the live session agrees with the store.
 */
export function resolve(s: DurableState, pending: PendingCommit): Promise<Found> {
  const current = s.ledger;
  if (current.kind === 'resolving') return current.pending === pending ? current.done : current.done.then(() => resolveAgain(s, pending));
  if (current !== pending) return Promise.resolve(s.lastFound);
  /** The ledger once the session agrees with the store (an attempt whose abort could not be written may be open). */
  let after: Ledger = SETTLED;
  const run = async (): Promise<Found> => {
    const found = await findOut(s, pending);
    if (found.outcome === 'unknown') return found;
    s.lastFound = found;
    if (found.outcome === 'committed') {
      s.advance(pending.attempt.turn, pending.input.locals);
      if (!s.tornDown) await s.emit('session/turn-committed').catch(noop);
      return found;
    }
    if (found.status === 'open') {
      const ended = await abortAttempt(s, s.lease as Lease, pending.attempt, pending.log, `commit outcome unknown, then found not applied: ${errorText(pending.cause)}`);
      if (!ended) after = MAYBE_OPEN;
    }
    if (!s.tornDown) await restoreCommitted(s, s.committedLocals);
    return found;
  };
  const end = (found: Found | undefined): void => {
    if (s.ledger === resolving) s.ledger = found?.outcome === 'unknown' ? pending : after;
    const lost = s.lost;
    // A lease lost meanwhile ends the session once the turn has settled.
    if (lost !== undefined && !s.tornDown) setImmediate(() => void (s.tornDown || endLost(s, lost)));
  };
  const done = run().then(
    (found) => {
      end(found);
      return found;
    },
    (err: unknown) => {
      end(undefined);
      throw err;
    },
  );
  const resolving: Ledger = { kind: 'resolving', pending, done };
  s.ledger = resolving;
  return done;
}

/** After another resolution ended: `pending`'s own, if it is still the one pending. */
function resolveAgain(s: DurableState, pending: PendingCommit): Promise<Found> {
  return s.ledger === pending ? resolve(s, pending) : Promise.resolve(s.lastFound);
}

/** Asks the store how `pending` ended: bounded retries for at most `storeTimeoutMs`. */
async function findOut(s: DurableState, pending: PendingCommit): Promise<Found> {
  const store = s.rt.store;
  const ms = store.timeoutMs;
  const call = store.readsAttempts ? 'attemptStatus' : 'commit';
  const deadline = performance.now() + ms;
  let delay = 10;
  for (;;) {
    let error: unknown;
    try {
      const left = Math.max(1, Math.ceil(deadline - performance.now()));
      const status = await bounded(() => readStatus(s, pending), left, () => storeTimeoutError(call, s.id, ms));
      return status === 'committed' ? { outcome: 'committed' } : { outcome: 'not-committed', status };
    } catch (err) {
      error = err;
    }
    // A refusal does not change by asking again (a lost lease, a store without the answer); a lock wait may.
    const retry = outcomeUnknown(error) || isSessionError(error, 'STORE_LOCKED');
    if (!retry || performance.now() + delay >= deadline) return { outcome: 'unknown', error };
    // A ref'd pause: the caller is waiting for this answer, and the store may hold nothing
    // that keeps the process alive meanwhile (its connections died).
    await new Promise<void>((wake) => setTimeout(wake, delay));
    delay = Math.min(delay * 2, 250);
  }
}

/** One try: `attemptStatus` when the store has it, else the idempotent commit repeated. */
async function readStatus(s: DurableState, pending: PendingCommit): Promise<AttemptStatus> {
  const store = s.rt.store;
  const at: TurnAttempt = { turn: pending.attempt.turn, attempt: pending.attempt.attempt };
  try {
    if (store.readsAttempts) return await store.attemptStatus(s.id, at);
    await store.commit(s.lease as Lease, pending.input);
    return 'committed';
  } catch (err) {
    if (isSessionError(err, 'SESSION_NOT_FOUND')) return 'absent';
    // A repeated commit refused as "not open": not open, and not committed by this lease.
    if (!store.readsAttempts && err instanceof TypeError) return 'aborted';
    if (isSessionError(err, 'LEASE_LOST')) storeFailure(s, err);
    throw err;
  }
}

/** @internal The `STORE_ERROR` of a commit found not applied after its outcome was unknown. */
export function notApplied(s: DurableState, pending: PendingCommit, status: AttemptStatus): SessionError {
  const { turn, attempt } = pending.attempt;
  const seen = status === 'open' ? 'still open (it was aborted now)' : status;
  return new SessionError(
    isSessionError(pending.cause, 'STORE_LOCKED') ? 'STORE_LOCKED' : 'STORE_ERROR',
    `turn ${turn} of session "${s.id}" was not committed: store.commit() failed (${errorText(pending.cause)}) and the store reports attempt ${attempt} ${seen}; ` +
      `the history and locals went back to turn ${s.committedTurn}. Retry the turn (it commits as turn ${turn}).`,
    { sessionId: s.id, cause: pending.cause },
  );
}

/** @internal The `COMMIT_UNKNOWN` of a pending commit whose outcome could not be found out. */
export function commitUnknown(s: DurableState, pending: PendingCommit, error: unknown): SessionError {
  const { turn, attempt } = pending.attempt;
  return new SessionError(
    'COMMIT_UNKNOWN',
    `turn ${turn} (attempt ${attempt}) of session "${s.id}": store.commit() failed (${errorText(pending.cause)}) and whether it was applied could not be found out ` +
      `(${errorText(error)}). The turn is pending: committedTurn stays ${s.committedTurn}, and turn() and rollback() reject with COMMIT_UNKNOWN until its outcome is found. ` +
      "Once the store is back, call durableSession.resolvePending() before running the turn again: 'committed' means it is stored (do not run it again), " +
      "'not-committed' means it is not (retry it). Check the store, or raise storeTimeoutMs if it is only slow.",
    { sessionId: s.id, cause: error, turn, attempt },
  );
}
