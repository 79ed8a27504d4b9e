/**
 * `DurableSession`: an agent with one session whose turns are committed to a
 * `SessionStore`. Turns run one at a time; each writes a fenced *started* record, then one
 * transaction on commit (history changes, `TurnLog` events, the committed record and a
 * checkpoint of the persisted locals) or an *aborted* record on failure, after which the
 * history and the persisted locals in memory go back to the last committed turn.
 *
 * This class is the public face; its state is a `DurableState` and each phase (open,
 * turn, pending outcomes, rollback and checkpoints, lease, close) is a module of this
 * folder.
 */
import type { Agent } from '../../agents/agent.js';
import type { Session } from '../../conversation/session.js';
import { trace, turnChannel, type Mutable, type TurnTraceContext } from '../../observability/channels.js';
import type { ownClass } from '../../system/own-class.js';
import type { JsonValue } from '../../util/lossless-json.js';
import type { InterruptedTurn, LiveRuntime } from '../runtime.js';
import type { Lease } from '../store/contract.js';
import { closeSession } from './close.js';
import { reopened } from './idle.js';
import { requestHandoff } from './handoff.js';
import { beforeSetup, prepare } from './open.js';
import { resolvePendingCommit } from './pending.js';
import { listCheckpoints, pinCheckpoint, rollbackTo, type SessionCheckpoint, type TurnSlotOptions } from './rollback.js';
import { DurableState, type ClosedBy, type OpenSnapshot } from './state.js';
import { SessionError } from '../errors.js';
import { turnOf, type DurableTurnOptions, type TurnFn } from './turn.js';

export type { SessionCheckpoint, TurnSlotOptions } from './rollback.js';
export type { OpenSnapshot, SessionEventName } from './state.js';
export type { DurableTurnOptions, TurnFn } from './turn.js';

/**
 * A durable session: its own agent (`agent`, an agent in every sense), one
 * `Session` (`session`, whose history is durable), and the turns committed to the store.
 * Made by `ctx.get(Sessions).create(...)` / `.resume(...)`; owned by that `ctx`.
 *
 * - `turn(fn)` runs `fn(turnCtx, session)` (one turn at a time: a second concurrent turn
 *   rejects with `SESSION_BUSY`, or waits in a first-in, first-out queue with
 *   `{ waitMs }`) and resolves only after the turn was committed: a resolved turn is
 *   durable. `{ signal }` aborts it. If `fn` throws (or a serializer does: `SERIALIZE_FAILED`),
 *   an aborted record is written and the history and persisted locals in memory go back
 *   to the last committed turn: in place for a local whose serializer has `restore`
 *   (so a reference captured in `setup` stays the persisted one), replaced otherwise
 *   (re-read such a local from the context after a failed turn).
 * - The history changes only inside `turn()`; outside, `append`/`replace` throw a
 *   `TypeError` (`a durable history changes only inside turn()`).
 * - `checkpoint(label?)` pins the last committed turn's checkpoint; `rollback(turn)`
 *   goes back to a kept one.
 * - `close()` drains the turn in flight (at most the server's `disposeTimeoutMs`), then
 *   disposes; `dispose()` disposes at once (a turn in flight can not commit). Both release
 *   the lease. Disposing the owner context, or the agent, does the same.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, Server, Sessions, SessionsPlugin } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin());
 * await server.finish();
 * const durable = await server.createContext().get(Sessions).create({ agentId: 'support:42', sessionId: 'ticket-42' });
 * await durable.turn(async (_turnCtx, session) => {
 *   session.history.append({ role: 'user', content: 'hello' });
 * });
 * assert.equal(durable.committedTurn, 1);
 * assert.throws(() => durable.session.history.append({ role: 'user', content: 'outside' }), TypeError);
 * await durable.close();
 * await server.dispose();
 * ```
 */
export class DurableSession implements AsyncDisposable {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** The session id. */
  readonly id: string;
  readonly #s: DurableState;

  /** @internal Made by `Sessions.create` / `Sessions.resume`. */
  constructor(rt: LiveRuntime, mode: 'create' | 'resume', open: OpenSnapshot) {
    this.id = open.sessionId;
    this.#s = new DurableState(this, rt, mode, open);
  }

  /** The session's own agent (`agent.ctx` is its scope; `Res(Agent)` from any turn). */
  get agent(): Agent {
    return this.#s.agent as Agent;
  }

  /** The session: `session.ctx` is a child of `agent.ctx` holding the durable `ConversationHistory`. */
  get session(): Session {
    return this.#s.session as Session;
  }

  /** The application's metadata given at `create` (`null` when none). */
  get meta(): JsonValue {
    return this.#s.meta;
  }

  /** The last committed turn (0 after `create`; set back by `rollback`). */
  get committedTurn(): number {
    return this.#s.committedTurn;
  }

  /** The turns found interrupted (started, never ended) when this session was resumed; empty otherwise. */
  get interruptedTurns(): readonly InterruptedTurn[] {
    return this.#s.interrupted;
  }

  /** True once the session is disposed (or its disposal started). */
  get isDisposed(): boolean {
    return this.#s.isDisposed;
  }

  /** `'created'` when this open made the session, `'resumed'` when it was stored already. */
  get opened(): 'created' | 'resumed' {
    return this.#s.mode === 'create' ? 'created' : 'resumed';
  }

  /** @internal Published: `sessions.get(id)` returns it. */
  get _published(): boolean {
    return this.#s.published;
  }

  /**
   * @internal `sessions.open` returned this live session again: its idle clock and its
   * handoff grace restart, as at its first open.
   */
  _reopened(): void {
    reopened(this.#s);
  }

  /** @internal The current lease (for `runOneshot`'s delete and tests). */
  get _lease(): Lease | undefined {
    return this.#s.lease;
  }

  /** @internal Why the session closed: `close()`, a handoff request, or `idleCloseMs`; `undefined` while open, or when it was disposed otherwise. */
  get _closedBy(): ClosedBy | undefined {
    return this.#s.closedBy;
  }

  /** @internal True from the start of its close (by `close()`, a handoff, `idleCloseMs`, or a disposal) until it has ended. */
  get _closing(): boolean {
    const s = this.#s;
    return !s.ended && (s.closing !== undefined || s.state === 'disposed' || s.tornDown);
  }

  /** @internal Settles (never rejects) once the session is disposed, its lease given up and its id free in the registry. */
  _whenEnded(): Promise<void> {
    return this.#s.whenEnded;
  }

  /** @internal The begun attempt of the turn in flight (`undefined` when none, or before its started record was written). */
  _openAttempt(): { readonly turn: number; readonly attempt: number } | undefined {
    const s = this.#s;
    const a = s.busy === 'turn' ? s.current?.attempt : undefined;
    return a === undefined ? undefined : { turn: a.turn, attempt: a.attempt };
  }

  /**
   * @internal Cancels the turn in flight (with `attempt`, only if it is exactly that begun
   * attempt), as its abort signal would: it rejects with `TURN_CANCELLED` carrying `reason`.
   * True when delivered (also to a turn whose `fn` had returned: that one commits); false
   * when no turn (or not that attempt) is in flight.
   */
  _cancel(reason: string, attempt?: { readonly turn: number; readonly attempt: number }): boolean {
    const s = this.#s;
    const c = s.busy === 'turn' ? s.current : undefined;
    if (c === undefined || c.phase !== 'running') return false;
    const open = c.attempt;
    const cancelled = (turn: number, at: number | undefined): SessionError =>
      new SessionError(
        'TURN_CANCELLED',
        `turn ${turn} of session "${this.id}" was cancelled (${reason}): its attempt was aborted and not committed; the history and locals are back at turn ${s.committedTurn}.`,
        { sessionId: this.id, reason, turn, ...(at !== undefined ? { attempt: at } : {}) },
      );
    if (attempt !== undefined && open === undefined) {
      // The store opened that attempt and its begin reply is still on its way here: the
      // cancel is applied once begin resolves, if it opened that very attempt.
      c.early = { turn: attempt.turn, attempt: attempt.attempt, error: cancelled(attempt.turn, attempt.attempt) };
      return true;
    }
    if (attempt !== undefined && open !== undefined && (open.turn !== attempt.turn || open.attempt !== attempt.attempt)) return false;
    return c.abort(cancelled(open?.turn ?? s.committedTurn + 1, open?.attempt));
  }

  /**
   * @internal A handoff request from a process waiting for this session, with its deadline
   * (`Date.now()`-based): closes the session now, or once it is no longer pinned; ignored
   * with the policy `'never'` or once the deadline passed.
   */
  _requestHandoff(until: number): void {
    requestHandoff(this.#s, until);
  }

  /** @internal When the lease expires as this process knows it (ms since the epoch); `undefined` without a kept lease (for `inspect`). */
  get _leaseExpiresAt(): number | undefined {
    return this.#s.keeper?.expiresAt;
  }

  // ------------------------------------------------------------------ turns

  /**
   * Runs one durable turn: writes a fenced *started* record, runs `fn(turnCtx, session)`
   * in a child of the session context holding a fresh `Scratchpad` and this turn's
   * {@link TurnLog}, then commits the turn in one transaction and resolves to what `fn`
   * returned. Rejects with `SESSION_BUSY` while another turn (or a rollback or checkpoint)
   * runs or waits, unless `options.waitMs` lets it queue (turns then run in call order);
   * `SESSION_CLOSED` after `close()`/`dispose()` (naming the reason when the session closed
   * by itself: a handoff to another process, or `idleCloseMs`), `LEASE_LOST` once the lease
   * was lost, `fn`'s own error when it threw, `SERIALIZE_FAILED` when a serializer failed,
   * `options.signal`'s reason when it aborted the turn before `fn` returned, and
   * `TURN_CANCELLED` when `sessions.cancel()` did.
   *
   * Faults of the store: when the started record can not be written, the turn rejects
   * with `STORE_ERROR` without running `fn` (the next turn supersedes the attempt). When the
   * commit's reply is lost, the outcome is found out before `turn()` settles: it resolves
   * when the turn committed, and rejects with `STORE_ERROR` (history and locals back to the
   * last committed turn; retry the turn) when it did not. While the store stays unreachable
   * it rejects with `COMMIT_UNKNOWN` (`turn`, `attempt`): the turn is then pending, and every
   * later `turn()`/`rollback()` first finds out its outcome, rejecting with `COMMIT_UNKNOWN`
   * without running anything until it can. Call {@link DurableSession.resolvePending} before
   * running that turn again: a later `turn()` that finds the pending one committed still
   * runs its own `fn`, so retrying the same message blindly would store it twice.
   *
   * `options.key` makes a retry safe without that call: give each message its own key
   * (e.g. the id the client sent it with), and a `turn()` with the key of a turn already
   * committed rejects with `TURN_ALREADY_COMMITTED` without running `fn` (see
   * {@link DurableTurnOptions.key}); the check costs no extra store round trip. A malformed
   * `options` rejects with a `TypeError` naming the option.
   */
  turn<R>(fn: TurnFn<R>, options?: DurableTurnOptions): Promise<Awaited<R>> {
    const s = this.#s;
    if (turnChannel.hasSubscribers) {
      // one `polestar:turn` trace per durable turn (the session turn it runs publishes none)
      const agent = s.agent;
      const context: Mutable<TurnTraceContext> = { agentId: agent?.id ?? '', sessionId: this.id, durable: true };
      return trace(turnChannel, context, agent?.ctx.server, () => turnOf(s, fn, options, context));
    }
    return turnOf(s, fn, options, undefined);
  }

  /**
   * Finds out whether the turn whose commit outcome was unknown (`COMMIT_UNKNOWN`) was
   * committed, retrying for at most the plugin's `storeTimeoutMs`. `'committed'`: the
   * session advances as after a normal commit (`committedTurn`, and
   * `session/turn-committed` is emitted). `'not-committed'`: the history and locals go back
   * to the last committed turn, as after a failed turn (re-read locals from the context).
   * Rejects with `COMMIT_UNKNOWN` while the store stays unreachable; call it again later.
   * When nothing is pending it resolves to the outcome of the last unknown commit found
   * out, or `'committed'` when there never was one.
   */
  resolvePending(): Promise<'committed' | 'not-committed'> {
    return resolvePendingCommit(this.#s);
  }

  /**
   * Pins the last committed turn's checkpoint (kept regardless of `keepCheckpoints`), with
   * `label` if given, and resolves to its turn number. It takes the turn slot: while a turn
   * runs it rejects with `SESSION_BUSY`, unless `options.waitMs` lets it wait in the queue.
   */
  checkpoint(label?: string, options?: TurnSlotOptions): Promise<number> {
    return pinCheckpoint(this.#s, label, options);
  }

  /** The kept checkpoints, by turn: checkpoint 0, the last `keepCheckpoints` turns' and the pinned ones. */
  checkpoints(): Promise<readonly SessionCheckpoint[]> {
    return listCheckpoints(this.#s);
  }

  /**
   * Goes back to the kept checkpoint of `turn`: a rollback record is appended (later
   * turns stay in the log, shown as `superseded` by `events()`), the history and the
   * persisted locals are restored, and `committedTurn` becomes `turn`. Rejects with
   * `SESSION_BUSY` while a turn runs and `CHECKPOINT_NOT_FOUND` for a turn without a kept
   * checkpoint. All or nothing: everything is deserialized before the store changes, so a
   * failing deserializer or `restore` rejects with `DESERIALIZE_FAILED` and leaves the
   * store and this session as they were. A local whose serializer has `restore` is
   * restored in place; any other is replaced (re-read it from the context afterwards).
   * When the store's answer is lost (a timeout, a dropped connection), the rollback may or
   * may not have been applied: the session is disposed and this rejects with `STORE_ERROR`;
   * resume the session to continue from what the store holds. It takes the turn slot:
   * `options.waitMs` lets it wait in the queue behind the turns called before it.
   */
  rollback(turn: number, options?: TurnSlotOptions): Promise<void> {
    return rollbackTo(this.#s, turn, options);
  }

  /**
   * Closes the session: no new turns (`SESSION_CLOSED`), and the turns waiting in the queue
   * reject with `SESSION_CLOSED`; waits for the turn in flight for at most the server's
   * `disposeTimeoutMs`; then disposes (releasing the lease).
   * Memoized. Do not await it from inside one of the session's turns (start it with `void`).
   */
  close(): Promise<void> {
    return closeSession(this.#s);
  }

  /**
   * Disposes the session at once: its agent (and so its session, its turns, every
   * registration made through it) is disposed, a turn in flight can not commit, and the
   * lease is released. Memoized (the agent's disposal).
   */
  dispose(): Promise<void> {
    return this.#s.dispose();
  }

  /** Same as {@link DurableSession.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** `durable session "<id>"`. */
  toString(): string {
    return `durable session "${this.id}"`;
  }

  // ------------------------------------------------------------------ the open transaction (internal)

  /**
   * @internal First unpublished step of `create`/`resume` (before `setup`): installs the
   * teardown, then for `resume` takes the lease, loads, checks the agent id, ends an
   * interrupted attempt, deserializes every persisted local (all before any is inserted)
   * and inserts the agent-scope ones into the agent's context, so `setup` sees the
   * restored instances (the session-scope ones wait for the session, made after `setup`);
   * for `create` checks the id is free.
   */
  _beforeSetup(agent: Agent): Promise<void> {
    return beforeSetup(this.#s, agent);
  }

  /**
   * @internal Last unpublished step (after `setup`): makes the session, restores (resume)
   * or writes (create) the locals and checkpoint 0, commits the interrupted-turn messages,
   * publishes the session and emits `session/created` / `session/resumed`.
   */
  _prepare(): Promise<void> {
    return prepare(this.#s);
  }

  /** @internal The create transaction resolved: the session is the caller's now. */
  _settle(): void {
    this.#s.settled = true;
  }
}
