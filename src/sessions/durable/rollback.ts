/**
 * @internal Checkpoints of a durable session: pinning the last committed turn's, listing
 * the kept ones, and rolling back to one, all or nothing (everything is deserialized, and
 * locals restored in place are undone on a failure, before the store changes).
 */
import type { Session } from '../../conversation/session.js';
import { describeValue, errorText } from '../../context/token.js';
import { isStoreTimeout, outcomeUnknown } from '../store/bounded-call.js';
import { SessionError } from '../errors.js';
import { deserializeLocals, insertLocals, restoreInPlace, serializeLocals, type RestoredLocal } from '../serializers.js';
import type { Lease, LoadedSession, PersistedLocal } from '../store/contract.js';
import { storeFailure } from './lease.js';
import { runExclusive } from './pending.js';
import { replayHistory } from './replay.js';
import { noop, type DurableState } from './state.js';
import { checkMs } from '../../util/check-ms.js';

/** A kept checkpoint of a durable session. */
export interface SessionCheckpoint {
  /** The committed turn it belongs to (0: the one `create` wrote). */
  readonly turn: number;
  /** Its label, when it was pinned with one by `checkpoint(label)`. */
  readonly label?: string;
  /** True when pinned by `checkpoint()` (kept regardless of `keepCheckpoints`). */
  readonly pinned: boolean;
  /** When it was written, on the store's clock. */
  readonly createdAt: Date;
}

/** A local restored in place, with its state before (to undo it). */
interface Undo {
  readonly r: RestoredLocal;
  readonly before: PersistedLocal;
}

/** Options of {@link DurableSession.rollback} and {@link DurableSession.checkpoint}. */
export interface TurnSlotOptions {
  /**
   * How long the call may wait for the turn in flight (or a queued one) instead of rejecting
   * with `SESSION_BUSY`, in milliseconds (a finite number from 0 to 2^31 - 1; default 0: no
   * wait). It queues behind the turns called before it and runs in call order.
   */
  readonly waitMs?: number;
}

/** The checked `waitMs` of `options` (read once); a `TypeError` naming the option otherwise. */
function waitMsOf(s: DurableState, options: unknown, call: string): number {
  if (options === undefined) return 0;
  const what = `durableSession.${call} on session "${s.id}"`;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object such as { waitMs }, got ${describeValue(options)}.`);
  }
  let raw: unknown;
  try {
    raw = (options as { waitMs?: unknown }).waitMs;
  } catch (err) {
    throw new TypeError(`${what}: options.waitMs could not be read: ${errorText(err)}.`, { cause: err });
  }
  return raw === undefined ? 0 : checkMs(raw, `${what}: options.waitMs`);
}

/** @internal `durableSession.checkpoint(label, options)`: pins the last committed turn's checkpoint, holding the turn slot. */
export function pinCheckpoint(s: DurableState, label: string | undefined, options?: TurnSlotOptions): Promise<number> {
  if (label !== undefined && (typeof label !== 'string' || label.length === 0)) {
    return Promise.reject(new TypeError(`durableSession.checkpoint(label) on session "${s.id}": label must be a non-empty string, got ${describeValue(label)}.`));
  }
  let waitMs: number;
  try {
    waitMs = waitMsOf(s, options, 'checkpoint(label, options)');
  } catch (err) {
    return Promise.reject(err);
  }
  const refused = s.refuse('checkpoint()') ?? (waitMs > 0 ? undefined : s.refuseBusy('checkpoint()'));
  if (refused !== undefined) return Promise.reject(refused);
  return runExclusive(
    s,
    'checkpoint',
    () => {
      const turn = s.committedTurn;
      return s.rt.store.pin(s.lease as Lease, turn, label).then(
        () => turn,
        (err: unknown) => {
          throw storeFailure(s, err);
        },
      );
    },
    { what: 'checkpoint()', waitMs, settle: false },
  );
}

/** @internal `durableSession.checkpoints()`: the kept checkpoints, by turn. */
export async function listCheckpoints(s: DurableState): Promise<readonly SessionCheckpoint[]> {
  const list = await s.rt.store.checkpoints(s.id);
  return Object.freeze(
    list.map((c) => Object.freeze({ turn: c.turn, ...(c.label !== undefined ? { label: c.label } : {}), pinned: c.pinned, createdAt: c.createdAt })),
  );
}

/** @internal `durableSession.rollback(turn, options)`: checks `turn`, then rolls back holding the turn slot. */
export function rollbackTo(s: DurableState, turn: number, options?: TurnSlotOptions): Promise<void> {
  if (typeof turn !== 'number' || !Number.isSafeInteger(turn) || turn < 0) {
    return Promise.reject(new TypeError(`durableSession.rollback(turn) on session "${s.id}": turn must be an integer >= 0, got ${describeValue(turn)}.`));
  }
  let waitMs: number;
  try {
    waitMs = waitMsOf(s, options, 'rollback(turn, options)');
  } catch (err) {
    return Promise.reject(err);
  }
  const refused = s.refuse('rollback()') ?? (waitMs > 0 ? undefined : s.refuseBusy('rollback()'));
  if (refused !== undefined) return Promise.reject(refused);
  return runExclusive(s, 'rollback', () => runRollback(s, turn), { what: 'rollback()', waitMs });
}

/**
 * All or nothing: reads the target checkpoint and deserializes everything it needs, then
 * restores in place the locals whose serializer has `restore` (undone if one throws or
 * the store refuses), and only then rolls the store back and puts the history and the
 * replaced locals in. A failing deserializer or `restore` leaves the store and the live
 * session as they were (`DESERIALIZE_FAILED`).
 */
async function runRollback(s: DurableState, turn: number): Promise<void> {
  const rt = s.rt;
  const { store } = rt;
  const lease = s.lease as Lease;
  let target: LoadedSession;
  try {
    target = await store.load(s.id, { turn });
  } catch (err) {
    throw storeFailure(s, err);
  }
  const refused = s.refuse('rollback()');
  if (refused !== undefined) throw refused;
  const messages = replayHistory(target.history, s.id).messages;
  const homes = s.homes();
  const restored = deserializeLocals(rt.serializers, target.checkpoint.locals, rt.unknownLocals, s.id, homes);
  const undo = restoreUndoably(s, restored, turn);
  try {
    await store.rollback(lease, turn);
  } catch (err) {
    undoRestores(s, undo);
    if (outcomeUnknown(err)) throw await rollbackUnknown(s, turn, err);
    throw storeFailure(s, err);
  }
  const session = s.session as Session;
  s.restoring = true;
  try {
    const history = session.history;
    history.replace(0, history.length, messages);
  } finally {
    s.restoring = false;
  }
  // Disposing a replaced instance that throws does not undo a rollback the store made.
  await insertLocals(
    restored.filter((r) => r.target === undefined),
    homes,
    s.id,
  );
  s.committedTurn = turn;
  s.committedMark = session.history._mark();
  s.committedLocals = target.checkpoint.locals;
  await s.emit('session/rolled-back').catch(noop);
}

/**
 * A rollback whose outcome is unknown (a timeout, a connection lost after it was sent):
 * the store may be at `turn` or where it was, and this session can not tell which, so it
 * must not run another turn on either timeline. It is disposed (its lease released: a
 * resume right after works) and the rollback rejects with `STORE_ERROR`.
 */
async function rollbackUnknown(s: DurableState, turn: number, err: unknown): Promise<SessionError> {
  const was = s.committedTurn;
  await s.dispose().catch(noop);
  return new SessionError(
    'STORE_ERROR',
    `durableSession.rollback(${turn}) on session "${s.id}": store.rollback() failed (${errorText(err)}) and may or may not have been applied, ` +
      `so the store is at turn ${turn} or still at turn ${was}. The session was disposed so that no turn runs on the wrong one: ` +
      `resume it (sessions.resume) to continue from what the store holds (its committedTurn tells which), then roll back again if needed` +
      (isStoreTimeout(err) ? ', or raise storeTimeoutMs if the store is only slow.' : '.'),
    { sessionId: s.id, cause: err },
  );
}

/**
 * Restores in place every local of `restored` that has a live target, each after a
 * snapshot of its current state (`serialize`), and returns the snapshots. When a
 * snapshot or a `restore` fails, the ones already restored are put back and this throws
 * (`SERIALIZE_FAILED` / `DESERIALIZE_FAILED`): nothing changed.
 */
function restoreUndoably(s: DurableState, restored: readonly RestoredLocal[], turn: number): Undo[] {
  const undo: Undo[] = [];
  const inPlace = restored.filter((r) => r.target !== undefined);
  if (inPlace.length === 0) return undo;
  let before: PersistedLocal[];
  try {
    before = serializeLocals({ list: inPlace.map((r) => r.serializer), byKey: new Map(inPlace.map((r) => [r.serializer.key, r.serializer])) }, s.homes(), s.id);
  } catch (err) {
    throw new SessionError(
      'SERIALIZE_FAILED',
      `durableSession.rollback(${turn}) on session "${s.id}": taking a snapshot of the live locals before restoring them in place failed (${errorText(err)}). ` +
        `Nothing was rolled back: the store and the session are at turn ${s.committedTurn}; make serialize(value) return lossless JSON, then retry.`,
      { sessionId: s.id, cause: err },
    );
  }
  const byKey = new Map(before.map((p) => [p.key, p]));
  for (const r of inPlace) {
    const b = byKey.get(r.serializer.key) as PersistedLocal;
    try {
      undo.push({ r, before: b });
      restoreInPlace(r.serializer, r.target as object, r.persisted, s.id);
    } catch (err) {
      const undone = undoRestores(s, undo);
      throw new SessionError(
        'DESERIALIZE_FAILED',
        `durableSession.rollback(${turn}) on session "${s.id}": ${errorText(err)} Nothing was rolled back: the store is at turn ${s.committedTurn}` +
          (undone
            ? `, and so is the session. Fix the serializer's restore, then retry.`
            : `; putting the live locals back failed too, so the session was disposed: fix the serializer's restore, then resume it (sessions.resume).`),
        { sessionId: s.id, cause: err },
      );
    }
  }
  return undo;
}

/**
 * Puts locals restored in place back to their snapshots; false when that failed too
 * (memory can not be trusted then: the session is disposed, so none of it is committed).
 */
function undoRestores(s: DurableState, undo: readonly Undo[]): boolean {
  for (let i = undo.length - 1; i >= 0; i--) {
    const { r, before } = undo[i] as Undo;
    try {
      restoreInPlace(r.serializer, r.target as object, before, s.id);
    } catch {
      void s.dispose().catch(noop);
      return false;
    }
  }
  return true;
}
