/**
 * `DurableSession`: an agent with one session whose turns are committed to a
 * `SessionStore`. Turns run one at a time; each writes a fenced *started* record, then one
 * transaction on commit (history changes, `TurnLog` events, the committed record and a
 * checkpoint of the persisted locals) or an *aborted* record on failure, after which the
 * history and the persisted locals in memory go back to the last committed turn.
 */
import type { Agent } from '../agents/agent.js';
import { ConversationHistory, type ChatMessage, type HistoryMark, type HistoryObserver } from '../agents/history.js';
import { openSession, type Session } from '../agents/session.js';
import type { SystemContext } from '../context/system-context.js';
import { describeValue, errorText, nameOf } from '../context/token.js';
import type { SessionEventInfo, SessionLeaseLostInfo } from '../events/event-map.js';
import { eventBusOf } from '../events/events.js';
import type { ownClass } from '../system/own-class.js';
import type { JsonValue } from '../tools/lossless-json.js';
import { SessionError, isSessionError } from './errors.js';
import { LeaseKeeper } from './lease-keeper.js';
import { bounded, isStoreTimeout, outcomeUnknown, storeTimeoutError } from './bounded-call.js';
import type { InterruptedTurn, LiveRuntime, SessionEventRecord } from './runtime.js';
import { deserializeLocals, insertLocals, restoreInPlace, serializeLocals, type LocalHomes, type RestoredLocal } from './serializers.js';
import { checkTurnKey } from './input.js';
import type { AttemptStatus, BeginOptions, BegunAttempt, CommitInput, Lease, LoadedSession, NewSessionEvent, PersistedLocal, StoredSessionEvent, TurnAttempt } from './store.js';
import { TurnLog, type TurnSink } from './turn-log.js';
import { trace, turnChannel, type Mutable, type TurnTraceContext } from '../observability/channels.js';

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
}

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

/** @internal The names of the events a durable session emits (scoped to its agent). */
export type SessionEventName =
  | 'session/created'
  | 'session/resumed'
  | 'session/turn-committed'
  | 'session/rolled-back'
  | 'session/lease-lost'
  | 'session/disposed';

/** @internal What `create` / `resume` read from their options. */
export interface OpenSnapshot {
  readonly agentId: string;
  readonly sessionId: string;
  readonly meta: JsonValue;
}

type State = 'loading' | 'open' | 'closing' | 'disposed';
type Outcome<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

/** A commit whose outcome is not known: the live history and locals are kept as the turn left them. */
interface PendingCommit {
  readonly kind: 'commit-unknown';
  /** The attempt whose commit was sent. */
  readonly attempt: BegunAttempt;
  /** What was sent (repeated, idempotently, by a store without `attemptStatus`). */
  readonly input: CommitInput;
  /** The `TurnLog` events to write with an aborted record, if the attempt is found open. */
  readonly log: readonly NewSessionEvent[];
  /** Why the outcome is unknown (the commit's error). */
  readonly cause: unknown;
}

/** What this process knows of the store's side of the session between turns. */
type Ledger =
  /** The store agrees with `committedTurn`, and no attempt of this lease is open. */
  | { readonly kind: 'settled' }
  /**
   * A `begin` or `abort` whose outcome is unknown may have left an attempt of this lease
   * open: the next turn's `begin` supersedes it (`replaceOpen`), a rollback aborts it
   * first (found with `load`, so its number need not be kept).
   */
  | { readonly kind: 'maybe-open' }
  | PendingCommit
  /**
   * The pending commit's outcome is being found out, and the live session made to agree
   * (advanced, or put back): a turn or a rollback waits for `done` (shared by `turn()`,
   * `rollback()` and `resolvePending()`).
   */
  | { readonly kind: 'resolving'; readonly pending: PendingCommit; readonly done: Promise<Found> };

/** How a pending commit was found to have ended. */
type Found =
  | { readonly outcome: 'committed' }
  | { readonly outcome: 'not-committed'; readonly status: AttemptStatus }
  /** Still not known (the store stays unreachable, or refused the question). */
  | { readonly outcome: 'unknown'; readonly error: unknown };

const SETTLED: Ledger = Object.freeze({ kind: 'settled' });
const MAYBE_OPEN: Ledger = Object.freeze({ kind: 'maybe-open' });

type KnownFound = Exclude<Found, { readonly outcome: 'unknown' }>;
/** What `resolvePending()` answers when no commit's outcome was ever unknown. */
const NEVER_PENDING: KnownFound = Object.freeze({ outcome: 'committed' });

interface BufferedEvent extends NewSessionEvent {
  /** True for a `TurnLog` event (written with an aborted record), false for a history change. */
  readonly log: boolean;
}

const noop = (): void => undefined;
const EMPTY: readonly never[] = Object.freeze([]);

/** @internal One turn in flight: its buffer and its `TurnLog`'s sink. */
class TurnState implements TurnSink {
  accepting = true;
  attempt: BegunAttempt | undefined;
  /** The error of a flush whose outcome is unknown (its events may be stored): the turn can not commit. */
  flushUnknown: unknown;
  readonly pending: BufferedEvent[] = [];
  #flushing: Promise<void> = Promise.resolve();
  readonly log: TurnLog;
  readonly #owner: DurableSession;
  readonly #flushWrite: (t: TurnState) => Promise<void>;

  constructor(owner: DurableSession, flushWrite: (t: TurnState) => Promise<void>) {
    this.#owner = owner;
    this.#flushWrite = flushWrite;
    this.log = new TurnLog(this);
  }

  get sessionId(): string {
    return this.#owner.id;
  }

  record(kind: string, body: JsonValue): void {
    this.pending.push({ kind, body, log: true });
  }

  flush(): Promise<void> {
    if (!this.accepting) {
      return Promise.reject(
        new SessionError('SESSION_CLOSED', `TurnLog.flush() in session "${this.sessionId}": the turn has ended; its events are written with it.`, {
          sessionId: this.sessionId,
        }),
      );
    }
    const p = this.#flushing.then(() => this.#flushWrite(this));
    this.#flushing = p.catch(noop);
    return p;
  }

  /** Settles when every flush started so far has. */
  settled(): Promise<void> {
    return this.#flushing;
  }
}

/**
 * A durable session: its own agent (`agent`, an agent in every sense), one
 * `Session` (`session`, whose history is durable), and the turns committed to the store.
 * Made by `ctx.get(Sessions).create(...)` / `.resume(...)`; owned by that `ctx`.
 *
 * - `turn(fn)` runs `fn(turnCtx, session)` (one turn at a time: a second concurrent turn
 *   rejects with `SESSION_BUSY`) and resolves only after the turn was committed: a
 *   resolved turn is durable. If `fn` throws (or a serializer does: `SERIALIZE_FAILED`),
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
  readonly #rt: LiveRuntime;
  readonly #mode: 'create' | 'resume';
  #agent: Agent | undefined;
  #session: Session | undefined;
  #meta: JsonValue;
  #state: State = 'loading';
  #published = false;
  #settled = false;
  /** `store.create` was called (its row may exist though its reply was lost). */
  #createSent = false;
  #tornDown = false;
  #lease: Lease | undefined;
  #keeper: LeaseKeeper | undefined;
  #lost: SessionError | undefined;
  #committedTurn = 0;
  /** The history replayed by `resume`, until `_prepare` hands it to the session. */
  #replayed: ConversationHistory | undefined;
  /** The history as of the last committed turn: an O(1) mark, not a copy (so a commit costs no O(n)). */
  #committedMark: HistoryMark | undefined;
  #committedLocals: readonly PersistedLocal[] = EMPTY;
  #interrupted: readonly InterruptedTurn[] = EMPTY;
  #loaded: LoadedSession | undefined;
  /** The session-scope locals `resume` deserialized before `setup`, inserted by `_prepare` once the session exists. */
  #sessionRestored: readonly RestoredLocal[] = EMPTY;
  #turn: TurnState | undefined;
  #busy: 'turn' | 'rollback' | undefined;
  #busyDone: Promise<void> | undefined;
  #restoring = false;
  #closing: Promise<void> | undefined;
  /** What is known of the store's side between turns: settled, an attempt maybe left open, a commit pending, or being resolved. */
  #ledger: Ledger = SETTLED;
  /** How the last commit whose outcome was unknown ended, once found out. */
  #lastFound: KnownFound = NEVER_PENDING;

  /** @internal Made by `Sessions.create` / `Sessions.resume`. */
  constructor(rt: LiveRuntime, mode: 'create' | 'resume', open: OpenSnapshot) {
    this.#rt = rt;
    this.#mode = mode;
    this.id = open.sessionId;
    this.#meta = open.meta;
  }

  /** The session's own agent (`agent.ctx` is its scope; `Res(Agent)` from any turn). */
  get agent(): Agent {
    return this.#agent as Agent;
  }

  /** The session: `session.ctx` is a child of `agent.ctx` holding the durable `ConversationHistory`. */
  get session(): Session {
    return this.#session as Session;
  }

  /** The application's metadata given at `create` (`null` when none). */
  get meta(): JsonValue {
    return this.#meta;
  }

  /** The last committed turn (0 after `create`; set back by `rollback`). */
  get committedTurn(): number {
    return this.#committedTurn;
  }

  /** The turns found interrupted (started, never ended) when this session was resumed; empty otherwise. */
  get interruptedTurns(): readonly InterruptedTurn[] {
    return this.#interrupted;
  }

  /** True once the session is disposed (or its disposal started). */
  get isDisposed(): boolean {
    return this.#state === 'disposed' || this.#tornDown || (this.#agent?.isDisposed ?? false);
  }

  /** @internal Published: `sessions.get(id)` returns it. */
  get _published(): boolean {
    return this.#published;
  }

  /** @internal The current lease (for `runOneshot`'s delete and tests). */
  get _lease(): Lease | undefined {
    return this.#lease;
  }

  /** @internal When the lease expires as this process knows it (ms since the epoch); `undefined` without a kept lease (for `inspect`). */
  get _leaseExpiresAt(): number | undefined {
    return this.#keeper?.expiresAt;
  }

  // ------------------------------------------------------------------ turns

  /**
   * Runs one durable turn: writes a fenced *started* record, runs `fn(turnCtx, session)`
   * in a child of the session context holding a fresh `Scratchpad` and this turn's
   * {@link TurnLog}, then commits the turn in one transaction and resolves to what `fn`
   * returned. Rejects with `SESSION_BUSY` while another turn (or a rollback) runs,
   * `SESSION_CLOSED` after `close()`/`dispose()`, `LEASE_LOST` once the lease was lost,
   * `fn`'s own error when it threw, `SERIALIZE_FAILED` when a serializer failed.
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
    if (turnChannel.hasSubscribers) {
      // one `polestar:turn` trace per durable turn (the session turn it runs publishes none)
      const agent = this.#agent;
      const context: Mutable<TurnTraceContext> = { agentId: agent?.id ?? '', sessionId: this.id, durable: true };
      return trace(turnChannel, context, agent?.ctx.server, () => this.#turnOf(fn, options, context));
    }
    return this.#turnOf(fn, options, undefined);
  }

  /** {@link DurableSession.turn}; `traced`: its `polestar:turn` context object, when traced. */
  #turnOf<R>(fn: TurnFn<R>, options: DurableTurnOptions | undefined, traced: Mutable<TurnTraceContext> | undefined): Promise<Awaited<R>> {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`durableSession.turn(fn) on session "${this.id}": fn must be a function (turnCtx, session) => result, got ${describeValue(fn)}.`));
    }
    let key: string | undefined;
    try {
      key = this.#turnKey(options);
    } catch (err) {
      return Promise.reject(err);
    }
    const refused = this.#refuse('turn()') ?? this.#refuseBusy('turn()');
    if (refused !== undefined) return Promise.reject(refused);
    return this.#runExclusive('turn', () => this.#runTurn(fn, traced, key));
  }

  /** The checked `key` of `turn(fn, options)` (read once); a `TypeError` naming the option otherwise. */
  #turnKey(options: unknown): string | undefined {
    if (options === undefined) return undefined;
    const what = `durableSession.turn(fn, options) on session "${this.id}"`;
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`${what}: options must be an object such as { key }, got ${describeValue(options)}.`);
    }
    let raw: unknown;
    try {
      raw = (options as { key?: unknown }).key;
    } catch (err) {
      throw new TypeError(`${what}: options.key could not be read: ${errorText(err)}.`, { cause: err });
    }
    const key = checkTurnKey(raw, `${what}: options.key`);
    if (key !== undefined && this.#rt.store.inner.turnKeys !== true) {
      throw new TypeError(
        `${what}: options.key needs a store that records turn keys, and this store's turnKeys is not true, so it could not tell whether a turn with that key was committed. ` +
          'Use MemorySessionStore, SqliteSessionStore or PostgresSessionStore (or a store that implements keys), or run the turn without a key.',
      );
    }
    return key;
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
    const ledger = this.#ledger;
    if (ledger.kind !== 'commit-unknown' && ledger.kind !== 'resolving') return Promise.resolve(this.#lastFound.outcome);
    const pending = ledger.kind === 'resolving' ? ledger.pending : ledger;
    return this.#resolve(pending).then((found) => {
      if (found.outcome === 'unknown') throw this.#commitUnknown(pending, found.error);
      return found.outcome;
    });
  }

  /**
   * Pins the last committed turn's checkpoint (kept regardless of `keepCheckpoints`), with
   * `label` if given, and resolves to its turn number.
   */
  checkpoint(label?: string): Promise<number> {
    if (label !== undefined && (typeof label !== 'string' || label.length === 0)) {
      return Promise.reject(new TypeError(`durableSession.checkpoint(label) on session "${this.id}": label must be a non-empty string, got ${describeValue(label)}.`));
    }
    const refused = this.#refuse('checkpoint()');
    if (refused !== undefined) return Promise.reject(refused);
    const turn = this.#committedTurn;
    return this.#rt.store.pin(this.#lease as Lease, turn, label).then(
      () => turn,
      (err: unknown) => {
        throw this.#storeFailure(err);
      },
    );
  }

  /** The kept checkpoints, by turn: checkpoint 0, the last `keepCheckpoints` turns' and the pinned ones. */
  async checkpoints(): Promise<readonly SessionCheckpoint[]> {
    const list = await this.#rt.store.checkpoints(this.id);
    return Object.freeze(
      list.map((c) => Object.freeze({ turn: c.turn, ...(c.label !== undefined ? { label: c.label } : {}), pinned: c.pinned, createdAt: c.createdAt })),
    );
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
   * resume the session to continue from what the store holds.
   */
  rollback(turn: number): Promise<void> {
    if (typeof turn !== 'number' || !Number.isSafeInteger(turn) || turn < 0) {
      return Promise.reject(new TypeError(`durableSession.rollback(turn) on session "${this.id}": turn must be an integer >= 0, got ${describeValue(turn)}.`));
    }
    const refused = this.#refuse('rollback()') ?? this.#refuseBusy('rollback()');
    if (refused !== undefined) return Promise.reject(refused);
    return this.#runExclusive('rollback', () => this.#rollback(turn));
  }

  /**
   * Closes the session: no new turns (`SESSION_CLOSED`); waits for the turn in flight for
   * at most the server's `disposeTimeoutMs`; then disposes (releasing the lease).
   * Memoized. Do not await it from inside one of the session's turns (start it with `void`).
   */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    if (this.#state === 'disposed' || this.#agent === undefined) return this.dispose();
    this.#state = 'closing';
    const drain = this.#busyDone;
    this.#closing = (async () => {
      if (drain !== undefined) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const bound = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.agent.ctx.server.options.disposeTimeoutMs);
          timer.unref();
        });
        await Promise.race([drain, bound]);
        clearTimeout(timer);
      }
      await this.dispose();
    })();
    return this.#closing;
  }

  /**
   * Disposes the session at once: its agent (and so its session, its turns, every
   * registration made through it) is disposed, a turn in flight can not commit, and the
   * lease is released. Memoized (the agent's disposal).
   */
  dispose(): Promise<void> {
    if (this.#state !== 'disposed') this.#state = 'disposed';
    const agent = this.#agent;
    return agent === undefined ? Promise.resolve() : agent._dispose();
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
  async _beforeSetup(agent: Agent): Promise<void> {
    this.#agent = agent;
    this.#installTeardown(agent);
    const { store } = this.#rt;
    if (this.#mode === 'create') {
      try {
        await store.checkpoints(this.id);
      } catch (err) {
        if (isSessionError(err, 'SESSION_NOT_FOUND')) return;
        throw err;
      }
      throw this.#alreadyExists();
    }
    const sent = performance.now();
    const lease = await store.acquire(this.id, { owner: this.#rt.owner, ttlMs: this.#rt.leaseTtlMs });
    if (!this.#adopt(lease, sent)) return;
    const loaded = await store.load(this.id);
    if (loaded.info.agentId !== agent.id) {
      throw new SessionError(
        'AGENT_MISMATCH',
        `Sessions.resume({ agentId: "${agent.id}", sessionId: "${this.id}" }): the session belongs to agent "${loaded.info.agentId}"; resume it with agentId "${loaded.info.agentId}".`,
        { sessionId: this.id },
      );
    }
    this.#meta = loaded.info.meta;
    this.#committedTurn = loaded.info.committedTurn;
    this.#replayed = replayHistory(loaded.history, this.id);
    const open = loaded.open;
    if (open !== undefined) {
      await store.abort(lease, { turn: open.turn, attempt: open.attempt, reason: 'interrupted: the turn was started and never ended (its process stopped or lost its lease)' });
      this.#interrupted = Object.freeze([
        Object.freeze({
          turn: open.turn,
          startedAt: open.startedAt,
          events: Object.freeze(open.events.map((e) => eventRecord(e, 'aborted'))),
        }),
      ]);
    }
    this.#loaded = loaded;
    await this.#restoreBeforeSetup(agent, loaded);
  }

  /**
   * Resume, before `setup`: deserializes every persisted local, inserts the agent-scope
   * ones (replacing the `per: 'agent'` instances, which are disposed) and keeps the
   * session-scope ones for `_prepare`; then guards the restored tokens while `setup` runs.
   */
  async #restoreBeforeSetup(agent: Agent, loaded: LoadedSession): Promise<void> {
    const rt = this.#rt;
    const restored = deserializeLocals(rt.serializers, loaded.checkpoint.locals, rt.unknownLocals, this.id);
    const agentScope = restored.filter((r) => r.serializer.scope === 'agent');
    this.#sessionRestored = restored.filter((r) => r.serializer.scope === 'session');
    if (agentScope.length === 0) return;
    const errors = await insertLocals(agentScope, { agent: agent.ctx, session: undefined }, this.id);
    if (errors.length > 0) throw errors.length === 1 ? errors[0] : new AggregateError(errors, `disposing the per-agent locals replaced by the persisted ones of session "${this.id}" failed`);
    if (this.#tornDown || agent.ctx.isDisposed) return;
    const guarded = new Map(agentScope.map((r) => [r.serializer.token, r] as const));
    agent.ctx._onInsert = (t, value) => {
      const r = guarded.get(t);
      if (r === undefined) return;
      const s = r.serializer;
      if (s.restore === undefined || value === null || (typeof value !== 'object' && typeof value !== 'function')) {
        const fix =
          s.restore === undefined
            ? `or give its serializer restore(target, data, version), which restores the inserted instance in place and keeps it`
            : `(its serializer's restore needs an object to restore in place, got ${describeValue(value)})`;
        throw new TypeError(
          `Sessions.resume({ sessionId: "${this.id}" }): setup inserted ${nameOf(t)}, but its persisted value ("${s.key}") was already restored before setup; ` +
            `read it with agentCtx.getMut(${nameOf(t)}) instead of inserting a new one, ${fix}.`,
        );
      }
      restoreInPlace(s, value, r.persisted, this.id);
    };
  }

  /**
   * @internal Last unpublished step (after `setup`): makes the session, restores (resume)
   * or writes (create) the locals and checkpoint 0, commits the interrupted-turn messages,
   * publishes the session and emits `session/created` / `session/resumed`.
   */
  async _prepare(): Promise<void> {
    const agent = this.agent;
    const rt = this.#rt;
    let session: Session;
    if (this.#mode === 'create') {
      session = openSession(agent);
      this.#session = session;
      const locals = serializeLocals(rt.serializers, this.#homes(), this.id);
      const sent = performance.now();
      // From here the row may exist even if the reply never comes: a create that does not
      // settle removes it (see the teardown) with the lease it would have been given.
      this.#createSent = true;
      const lease = await rt.store.create({
        sessionId: this.id,
        agentId: agent.id,
        owner: rt.owner,
        ttlMs: rt.leaseTtlMs,
        meta: this.#meta,
        locals,
      });
      if (!this.#adopt(lease, sent)) return;
      this.#committedLocals = locals;
    } else {
      const loaded = this.#loaded as LoadedSession;
      this.#loaded = undefined;
      agent.ctx._onInsert = undefined;
      const restored = this.#sessionRestored;
      this.#sessionRestored = EMPTY;
      session = openSession(agent, { history: this.#replayed });
      this.#replayed = undefined;
      this.#session = session;
      const errors = await insertLocals(restored, this.#homes(), this.id);
      if (errors.length > 0) throw errors.length === 1 ? errors[0] : new AggregateError(errors, `disposing the per-session locals replaced by the persisted ones of session "${this.id}" failed`);
      this.#committedLocals = loaded.checkpoint.locals;
    }
    session.history._observer = this.#observer;
    this.#committedMark = session.history._mark();
    const handler = rt.interrupted;
    if (handler !== undefined) {
      for (const it of this.#interrupted) {
        const messages = await handler(it, session);
        if (!Array.isArray(messages)) {
          throw new TypeError(`SessionsPlugin({ interrupted }): for session "${this.id}" turn ${it.turn} it must return an array of chat messages, got ${describeValue(messages)}.`);
        }
        await this.#runTurn(
          (_ctx, s) => {
            for (const m of messages as readonly ChatMessage[]) s.history.append(m);
          },
          undefined,
          undefined,
        );
      }
    }
    if (this.#tornDown) return;
    this.#state = 'open';
    this.#published = true;
    const errors = await this.#emit(this.#mode === 'create' ? 'session/created' : 'session/resumed');
    if (errors.length > 0) {
      throw errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} listeners of session events failed for session "${this.id}"`);
    }
  }

  /** @internal The create transaction resolved: the session is the caller's now. */
  _settle(): void {
    this.#settled = true;
  }

  // ------------------------------------------------------------------ internals

  readonly #observer: HistoryObserver = {
    check: () => {
      if (this.#restoring) return;
      const t = this.#turn;
      if (t === undefined || !t.accepting) {
        throw new TypeError(
          `session "${this.id}": a durable history changes only inside turn(); append or replace from the turn function: durableSession.turn((turnCtx, session) => session.history.append(message)).`,
        );
      }
    },
    changed: (c) => {
      if (this.#restoring) return;
      const t = this.#turn;
      if (t === undefined) return;
      if (c.kind === 'append') t.pending.push({ kind: 'history/append', body: c.message as unknown as JsonValue, log: false });
      else t.pending.push({ kind: 'history/replace', body: { start: c.start, end: c.end, messages: c.messages as unknown as JsonValue }, log: false });
    },
  };

  #homes(): LocalHomes {
    return { agent: this.agent.ctx, session: this.#session?.ctx };
  }

  #alreadyExists(): SessionError {
    return new SessionError(
      'SESSION_ALREADY_EXISTS',
      `Sessions.create({ sessionId: "${this.id}" }): session already exists: "${this.id}" is stored already; resume it with sessions.resume(), or pick another id.`,
      { sessionId: this.id },
    );
  }

  /**
   * Keeps a lease this transaction obtained (`sent`: `performance.now()` before the call
   * that obtained it, where the store started counting its TTL); if the session was torn
   * down meanwhile, gives it up at once.
   */
  #adopt(lease: Lease, sent: number): boolean {
    if (this.#tornDown) {
      const { store } = this.#rt;
      void (this.#mode === 'create' ? store.delete(this.id, { lease }) : store.release(lease)).catch(noop);
      return false;
    }
    this.#lease = lease;
    const keeper = new LeaseKeeper(this.#rt.store, lease, this.#rt.leaseTtlMs, (err) => this.#leaseLost(err), sent);
    this.#keeper = keeper;
    keeper.start();
    return true;
  }

  #installTeardown(agent: Agent): void {
    const ctx = agent.ctx;
    // Runs last (registered first): give the lease up (or, for a create that never
    // settled, remove the row it wrote) and free the session id.
    ctx.onDispose(async () => {
      this.#tornDown = true;
      this.#state = 'disposed';
      this.#keeper?.stop();
      this.#rt.registry.leave(this);
      const remove = this.#mode === 'create' && !this.#settled;
      // A create whose reply was lost wrote its row under the first lease it would have
      // returned (this owner and incarnation, epoch 1): remove it with that lease, so a
      // retry is not refused by a row leased to this very process.
      const lease =
        this.#lease ??
        (remove && this.#createSent ? { sessionId: this.id, owner: this.#rt.owner, epoch: 1, incarnation: this.#rt.incarnation } : undefined);
      if (lease === undefined) return;
      const { store } = this.#rt;
      const call = remove ? 'delete' : 'release';
      const ms = ctx.server.options.disposeTimeoutMs;
      // Bounded by storeTimeoutMs (the store's own bound) and by the server's
      // disposeTimeoutMs: a store that never answers does not keep the disposal waiting.
      const work = remove ? store.delete(this.id, { lease }) : store.release(lease);
      try {
        await bounded(work, ms, () => this.#disposeTimeout(call, ms));
      } catch (err) {
        // A refusal is nothing to report (the lease is gone either way); a call that did
        // not answer is: the lease may still be held until it expires.
        if (isStoreTimeout(err)) throw err;
      }
    });
    // Runs first, while the agent's listeners are still registered: announce the end.
    const agentPrelude = ctx._prelude;
    ctx._prelude = async () => {
      const was = this.#published;
      this.#state = 'disposed';
      this.#tornDown = true;
      this.#keeper?.stop();
      this.#rt.registry.leave(this);
      const errors = was ? await this.#emit('session/disposed') : [];
      try {
        await agentPrelude?.();
      } catch (err) {
        errors.push(err);
      }
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1) throw new AggregateError(errors, `disposing session "${this.id}" failed`);
    };
  }

  async #emit(name: SessionEventName, error?: SessionError): Promise<unknown[]> {
    const agent = this.agent;
    const bus = eventBusOf(agent.ctx.server);
    if (bus === undefined) return [];
    // The payload is EventMap's: one frozen object per event.
    const payload: SessionEventInfo | SessionLeaseLostInfo = Object.freeze({
      sessionId: this.id,
      agentId: agent.id,
      turn: this.#committedTurn,
      ...(error !== undefined ? { error } : {}),
    });
    return [...(await bus.emit(agent, name, [payload]))];
  }

  #leaseLost(err: SessionError): void {
    this.#rt.owners.observe(err);
    if (this.#lost !== undefined || this.#tornDown) return;
    this.#lost = err;
    this.#keeper?.stop();
    // While a commit's outcome is being found out, turn() settles first (a committed turn
    // resolves): the end of the session is announced right after (#resolve).
    if (this.#ledger.kind === 'resolving') return;
    this.#endLost(err);
  }

  /** Emits `session/lease-lost` and disposes the session. */
  #endLost(err: SessionError): void {
    void this.#emit('session/lease-lost', err).catch(noop);
    void this.dispose().catch(noop);
  }

  /** The rejection of a disposal whose `store.release()` (or `delete`) did not answer within `disposeTimeoutMs`. */
  #disposeTimeout(call: string, ms: number): SessionError {
    return new SessionError(
      'STORE_ERROR',
      `disposing session "${this.id}": store.${call}() did not answer within ${ms} ms (new Server({ disposeTimeoutMs })); the disposal went on without it, ` +
        `so the lease may stay held until it expires (leaseTtlMs). Check the store, or raise disposeTimeoutMs.`,
      { sessionId: this.id },
    );
  }

  /** Reports a store failure: a `LEASE_LOST` starts the lease-lost path. Returns the error to reject with. */
  #storeFailure(err: unknown): unknown {
    if (isSessionError(err, 'LEASE_LOST')) this.#leaseLost(err);
    return err;
  }

  #refuse(what: string): SessionError | undefined {
    if (this.#lost !== undefined) {
      return new SessionError('LEASE_LOST', `durableSession.${what} on session "${this.id}": the session lost its lease (${this.#lost.message}); resume it to continue.`, {
        sessionId: this.id,
        cause: this.#lost,
      });
    }
    if (this.#state === 'closing' || this.isDisposed) {
      return new SessionError(
        'SESSION_CLOSED',
        `durableSession.${what} on session "${this.id}": the session is ${this.#state === 'closing' ? 'closing' : 'disposed'}; resume it (sessions.resume) to run more turns.`,
        { sessionId: this.id },
      );
    }
    return undefined;
  }

  #refuseBusy(what: string): SessionError | undefined {
    if (this.#busy === undefined) return undefined;
    const doing = this.#busy === 'turn' ? `turn ${this.#committedTurn + 1} is running` : 'a rollback is running';
    return new SessionError('SESSION_BUSY', `durableSession.${what} on session "${this.id}": ${doing}; turns run one at a time, await it first.`, { sessionId: this.id });
  }

  #runExclusive<T>(kind: 'turn' | 'rollback', run: () => Promise<T>): Promise<T> {
    this.#busy = kind;
    const p = this.#ledger.kind === 'settled' ? run() : this.#settleLedger(kind).then(run);
    const done = p.then(noop, noop);
    this.#busyDone = done;
    return p.finally(() => {
      this.#busy = undefined;
      this.#busyDone = undefined;
    });
  }

  /**
   * Before a turn or a rollback when the ledger is not settled: a pending commit is found
   * out first (`COMMIT_UNKNOWN` while it can not be); a rollback also aborts an attempt of
   * this lease a lost reply may have left open (a turn's `begin` supersedes it instead).
   */
  async #settleLedger(kind: 'turn' | 'rollback'): Promise<void> {
    const ledger = this.#ledger;
    if (ledger.kind === 'commit-unknown' || ledger.kind === 'resolving') {
      const pending = ledger.kind === 'resolving' ? ledger.pending : ledger;
      const found = await this.#resolve(pending);
      if (found.outcome === 'unknown') throw this.#commitUnknown(pending, found.error);
    }
    if (kind === 'rollback' && this.#ledger.kind === 'maybe-open') {
      try {
        await this.#abortStale();
      } catch (err) {
        throw this.#storeFailure(err);
      }
    }
  }

  /** Aborts the attempt left open by this lease, if any (found with `load`: its number may be unknown). */
  async #abortStale(): Promise<void> {
    const { store } = this.#rt;
    const lease = this.#lease as Lease;
    const open = (await store.load(this.id)).open;
    if (open !== undefined && open.epoch === lease.epoch) {
      await store.abort(lease, { turn: open.turn, attempt: open.attempt, reason: 'begin outcome unknown' });
    }
    this.#ledger = SETTLED;
  }

  async #runTurn<R>(fn: TurnFn<R>, traced: Mutable<TurnTraceContext> | undefined, key: string | undefined): Promise<Awaited<R>> {
    const rt = this.#rt;
    const store = rt.store;
    const lease = this.#lease as Lease;
    // Settling the ledger may have awaited the store: the session may be over by now.
    const refused = this.#refuse('turn()');
    if (refused !== undefined && this.#state !== 'closing') throw refused;
    const t = new TurnState(this, (ts) => this.#flush(ts));
    let attempt: BegunAttempt;
    try {
      // With a key, the store refuses it (TURN_ALREADY_COMMITTED, writing nothing) when a recent committed turn has it.
      const keyed: BeginOptions | undefined = key === undefined ? undefined : { key, keyWindow: Math.max(1, rt.keepCheckpoints) };
      attempt = await (this.#ledger.kind === 'maybe-open' ? this.#beginSuperseding(lease, keyed) : keyed === undefined ? store.begin(lease) : store.begin(lease, keyed));
    } catch (err) {
      throw this.#beginFailed(err);
    }
    t.attempt = attempt;
    if (traced !== undefined) {
      traced.turn = attempt.turn;
      traced.attempt = attempt.attempt;
    }
    if (this.#tornDown) throw this.#notCommitted(attempt.turn, undefined);
    this.#turn = t;
    let outcome: Outcome<Awaited<R>>;
    try {
      const value = await this.session._turn((turnCtx, s) => {
        turnCtx.insert(TurnLog, t.log);
        return fn(turnCtx, s);
      }, traced);
      outcome = { ok: true, value };
    } catch (error) {
      outcome = { ok: false, error };
    }
    t.accepting = false;
    await t.settled();
    if (this.#turn === t) this.#turn = undefined;
    if (this.#tornDown) throw this.#notCommitted(attempt.turn, outcome.ok ? undefined : outcome.error);

    if (outcome.ok && t.flushUnknown !== undefined) {
      // The events of that flush may or may not be stored: committing could write them twice.
      outcome = {
        ok: false,
        error: new SessionError(
          'STORE_ERROR',
          `turn ${attempt.turn} of session "${this.id}" was not committed: a TurnLog.flush() of it had an unknown outcome (${errorText(t.flushUnknown)}), ` +
            'so committing could store its events twice; the history and locals went back to the last committed turn. Retry the turn.',
          { sessionId: this.id, cause: t.flushUnknown },
        ),
      };
    }
    if (outcome.ok) {
      const value = outcome.value;
      let locals: PersistedLocal[] | undefined;
      try {
        locals = serializeLocals(rt.serializers, this.#homes(), this.id);
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
            this.#ledger = pending;
            const found = await this.#resolve(pending);
            if (found.outcome === 'committed') return value;
            throw found.outcome === 'not-committed' ? this.#notApplied(pending, found.status) : this.#commitUnknown(pending, found.error);
          }
          const failure = this.#storeFailure(err);
          if (!this.#tornDown) {
            await this.#abortOrSupersede(lease, attempt, logEvents(t), `commit failed: ${errorText(err)}`);
            await this.#restore(this.#committedLocals);
          }
          throw failure;
        }
        this.#advance(attempt.turn, locals);
        // A listener's failure does not undo a committed turn.
        await this.#emit('session/turn-committed').catch(noop);
        return value;
      }
    }
    const error = (outcome as { error: unknown }).error;
    await this.#abortOrSupersede(lease, attempt, logEvents(t), errorText(error));
    if (!this.#tornDown) await this.#restore(this.#committedLocals);
    throw error;
  }

  /**
   * Writes the started record after a `begin` or `abort` whose outcome was unknown: it
   * supersedes the attempt that may have been left open (`replaceOpen`; on a store that
   * does not know the option, by aborting that attempt first). A turn with a settled ledger
   * calls `store.begin(lease)` directly (no extra step on the happy path).
   */
  async #beginSuperseding(lease: Lease, keyed: BeginOptions | undefined): Promise<BegunAttempt> {
    const store = this.#rt.store;
    let attempt: BegunAttempt;
    try {
      attempt = await store.begin(lease, { ...keyed, replaceOpen: true });
    } catch (err) {
      if (!isSessionError(err, 'SESSION_BUSY')) throw err;
      await this.#abortStale();
      attempt = await (keyed === undefined ? store.begin(lease) : store.begin(lease, keyed));
    }
    this.#ledger = SETTLED;
    return attempt;
  }

  /**
   * The error a turn whose started record failed rejects with. A `begin` whose outcome is
   * unknown (or a lock wait) may have left an attempt open: the next turn supersedes it, and
   * this turn rejects with `STORE_ERROR` (`fn` did not run, so nothing of it can commit).
   */
  #beginFailed(err: unknown): unknown {
    const locked = isSessionError(err, 'STORE_LOCKED');
    if (!locked && !outcomeUnknown(err)) return this.#storeFailure(err);
    // Superseding an attempt that is not there costs nothing: after a lock wait too.
    if (this.#ledger.kind === 'settled') this.#ledger = MAYBE_OPEN;
    if (locked) return err;
    return new SessionError(
      'STORE_ERROR',
      `turn ${this.#committedTurn + 1} of session "${this.id}" did not start: store.begin() failed (${errorText(err)}); fn did not run, so nothing of the turn was committed. ` +
        'Retry the turn (it supersedes the attempt that may have been left open)' +
        (isStoreTimeout(err) ? ', or raise storeTimeoutMs if the store is only slow.' : ', and check the store if it keeps failing.'),
      { sessionId: this.id, cause: err },
    );
  }

  /**
   * Writes the aborted record. True when it was written (or refused for a lost lease:
   * nothing of this lease can be written any more); false when it may not have been, so
   * the attempt may still be open. Never rejects.
   */
  async #abortAttempt(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[], reason: string): Promise<boolean> {
    try {
      await this.#rt.store.abort(lease, { turn: attempt.turn, attempt: attempt.attempt, events, reason });
      return true;
    } catch (err) {
      if (!isSessionError(err, 'LEASE_LOST')) return false;
      this.#storeFailure(err);
      return true;
    }
  }

  /** {@link DurableSession.#abortAttempt}; when the record may not have been written, the next `begin` supersedes the attempt. */
  async #abortOrSupersede(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[], reason: string): Promise<void> {
    if (!(await this.#abortAttempt(lease, attempt, events, reason))) this.#ledger = MAYBE_OPEN;
  }

  /** The live session takes `turn` as committed (history mark, locals, `committedTurn`). */
  #advance(turn: number, locals: readonly PersistedLocal[]): void {
    this.#committedTurn = turn;
    this.#committedMark = this.session.history._mark();
    this.#committedLocals = locals;
  }

  /**
   * Finds out how `pending` ended and makes the live session agree: committed → it
   * advances; not committed → an attempt still open is aborted and the history and locals
   * go back to the last committed turn. Still unknown → the ledger is `pending` again. One
   * resolution at a time, shared: while it runs the ledger is `resolving`, so a turn or a
   * rollback started meanwhile waits until the live session agrees with the store.
   */
  #resolve(pending: PendingCommit): Promise<Found> {
    const current = this.#ledger;
    if (current.kind === 'resolving') return current.pending === pending ? current.done : current.done.then(() => this.#resolveAgain(pending));
    if (current !== pending) return Promise.resolve(this.#lastFound);
    /** The ledger once the session agrees with the store (an attempt whose abort could not be written may be open). */
    let after: Ledger = SETTLED;
    const run = async (): Promise<Found> => {
      const found = await this.#findOut(pending);
      if (found.outcome === 'unknown') return found;
      this.#lastFound = found;
      if (found.outcome === 'committed') {
        this.#advance(pending.attempt.turn, pending.input.locals);
        if (!this.#tornDown) await this.#emit('session/turn-committed').catch(noop);
        return found;
      }
      if (found.status === 'open') {
        const ended = await this.#abortAttempt(this.#lease as Lease, pending.attempt, pending.log, `commit outcome unknown, then found not applied: ${errorText(pending.cause)}`);
        if (!ended) after = MAYBE_OPEN;
      }
      if (!this.#tornDown) await this.#restore(this.#committedLocals);
      return found;
    };
    const end = (found: Found | undefined): void => {
      if (this.#ledger === resolving) this.#ledger = found?.outcome === 'unknown' ? pending : after;
      const lost = this.#lost;
      // A lease lost meanwhile ends the session once the turn has settled.
      if (lost !== undefined && !this.#tornDown) setImmediate(() => void (this.#tornDown || this.#endLost(lost)));
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
    this.#ledger = resolving;
    return done;
  }

  /** After another resolution ended: `pending`'s own, if it is still the one pending. */
  #resolveAgain(pending: PendingCommit): Promise<Found> {
    return this.#ledger === pending ? this.#resolve(pending) : Promise.resolve(this.#lastFound);
  }

  /** Asks the store how `pending` ended: bounded retries for at most `storeTimeoutMs`. */
  async #findOut(pending: PendingCommit): Promise<Found> {
    const store = this.#rt.store;
    const ms = store.timeoutMs;
    const call = store.readsAttempts ? 'attemptStatus' : 'commit';
    const deadline = performance.now() + ms;
    let delay = 10;
    for (;;) {
      let error: unknown;
      try {
        const left = Math.max(1, Math.ceil(deadline - performance.now()));
        const status = await bounded(() => this.#readStatus(pending), left, () => storeTimeoutError(call, this.id, ms));
        return status === 'committed' ? { outcome: 'committed' } : { outcome: 'not-committed', status };
      } catch (err) {
        error = err;
      }
      // A refusal does not change by asking again (a lost lease, a store without the answer); a lock wait may.
      const retry = outcomeUnknown(error) || isSessionError(error, 'STORE_LOCKED');
      if (!retry || performance.now() + delay >= deadline) return { outcome: 'unknown', error };
      await new Promise<void>((resolve) => setTimeout(resolve, delay).unref());
      delay = Math.min(delay * 2, 250);
    }
  }

  /** One try: `attemptStatus` when the store has it, else the idempotent commit repeated. */
  async #readStatus(pending: PendingCommit): Promise<AttemptStatus> {
    const store = this.#rt.store;
    const at: TurnAttempt = { turn: pending.attempt.turn, attempt: pending.attempt.attempt };
    try {
      if (store.readsAttempts) return await store.attemptStatus(this.id, at);
      await store.commit(this.#lease as Lease, pending.input);
      return 'committed';
    } catch (err) {
      if (isSessionError(err, 'SESSION_NOT_FOUND')) return 'absent';
      // A repeated commit refused as "not open": not open, and not committed by this lease.
      if (!store.readsAttempts && err instanceof TypeError) return 'aborted';
      if (isSessionError(err, 'LEASE_LOST')) this.#storeFailure(err);
      throw err;
    }
  }

  /** The `STORE_ERROR` of a commit found not applied after its outcome was unknown. */
  #notApplied(pending: PendingCommit, status: AttemptStatus): SessionError {
    const { turn, attempt } = pending.attempt;
    const seen = status === 'open' ? 'still open (it was aborted now)' : status;
    return new SessionError(
      isSessionError(pending.cause, 'STORE_LOCKED') ? 'STORE_LOCKED' : 'STORE_ERROR',
      `turn ${turn} of session "${this.id}" was not committed: store.commit() failed (${errorText(pending.cause)}) and the store reports attempt ${attempt} ${seen}; ` +
        `the history and locals went back to turn ${this.#committedTurn}. Retry the turn (it commits as turn ${turn}).`,
      { sessionId: this.id, cause: pending.cause },
    );
  }

  /** The `COMMIT_UNKNOWN` of a pending commit whose outcome could not be found out. */
  #commitUnknown(pending: PendingCommit, error: unknown): SessionError {
    const { turn, attempt } = pending.attempt;
    return new SessionError(
      'COMMIT_UNKNOWN',
      `turn ${turn} (attempt ${attempt}) of session "${this.id}": store.commit() failed (${errorText(pending.cause)}) and whether it was applied could not be found out ` +
        `(${errorText(error)}). The turn is pending: committedTurn stays ${this.#committedTurn}, and turn() and rollback() reject with COMMIT_UNKNOWN until its outcome is found. ` +
        "Once the store is back, call durableSession.resolvePending() before running the turn again: 'committed' means it is stored (do not run it again), " +
        "'not-committed' means it is not (retry it). Check the store, or raise storeTimeoutMs if it is only slow.",
      { sessionId: this.id, cause: error, turn, attempt },
    );
  }

  async #flush(t: TurnState): Promise<void> {
    const batch = t.pending.splice(0);
    if (batch.length === 0) return;
    try {
      await this.#rt.store.append(this.#lease as Lease, t.attempt as BegunAttempt, batch.map(stripEvent));
    } catch (err) {
      if (outcomeUnknown(err)) {
        // The batch may be stored: it is not written again, and the turn can not commit.
        t.flushUnknown ??= err;
        throw new SessionError(
          'STORE_ERROR',
          `TurnLog.flush() in turn ${(t.attempt as BegunAttempt).turn} of session "${this.id}": store.append() failed (${errorText(err)}) and may or may not have written the events; ` +
            'this turn can no longer commit (it would risk storing them twice): let it fail and retry it.',
          { sessionId: this.id, cause: err },
        );
      }
      // Put the batch back in front (no spread into a call: a turn may hold any number of events).
      const rest = t.pending.splice(0);
      for (const e of batch) t.pending.push(e);
      for (const e of rest) t.pending.push(e);
      throw this.#storeFailure(err);
    }
  }

  #notCommitted(turn: number, error: unknown): unknown {
    if (this.#lost !== undefined) {
      return new SessionError('LEASE_LOST', `turn ${turn} of session "${this.id}" was not committed: the session lost its lease (${this.#lost.message}); resume it (sessions.resume) and retry the turn.`, {
        sessionId: this.id,
        cause: this.#lost,
      });
    }
    if (error !== undefined) return error;
    return new SessionError('SESSION_CLOSED', `turn ${turn} of session "${this.id}" was not committed: the session was disposed while it ran; resume it (sessions.resume) and retry the turn.`, {
      sessionId: this.id,
    });
  }

  /**
   * Puts the history back to the last committed turn (O(messages the failed turn added)
   * when it only appended) and the persisted locals to `locals`: in place through
   * `restore` where the serializer has one, replaced otherwise. When a deserializer or a
   * `restore` throws, memory can not be brought back to the store's state: the session is
   * disposed (so nothing uncommitted can ever be committed) and this rejects with
   * `DESERIALIZE_FAILED`.
   */
  async #restore(locals: readonly PersistedLocal[]): Promise<void> {
    this.session.history._restore(this.#committedMark as HistoryMark);
    const homes = this.#homes();
    try {
      const restored = deserializeLocals(this.#rt.serializers, locals, 'drop', this.id, homes);
      // Disposing a replaced instance that throws does not make memory disagree with the store.
      await insertLocals(restored, homes, this.id);
    } catch (err) {
      void this.dispose().catch(noop);
      throw new SessionError(
        'DESERIALIZE_FAILED',
        `session "${this.id}": putting the persisted locals back to turn ${this.#committedTurn} failed (${errorText(err)}); ` +
          `the session was disposed so that nothing uncommitted is committed; fix the serializer, then resume it (sessions.resume) to continue from turn ${this.#committedTurn}.`,
        { sessionId: this.id, cause: err },
      );
    }
  }

  /**
   * All or nothing: reads the target checkpoint and deserializes everything it needs, then
   * restores in place the locals whose serializer has `restore` (undone if one throws or
   * the store refuses), and only then rolls the store back and puts the history and the
   * replaced locals in. A failing deserializer or `restore` leaves the store and the live
   * session as they were (`DESERIALIZE_FAILED`).
   */
  async #rollback(turn: number): Promise<void> {
    const rt = this.#rt;
    const { store } = rt;
    const lease = this.#lease as Lease;
    let target: LoadedSession;
    try {
      target = await store.load(this.id, { turn });
    } catch (err) {
      throw this.#storeFailure(err);
    }
    const refused = this.#refuse('rollback()');
    if (refused !== undefined) throw refused;
    const messages = replayHistory(target.history, this.id).messages;
    const homes = this.#homes();
    const restored = deserializeLocals(rt.serializers, target.checkpoint.locals, rt.unknownLocals, this.id, homes);
    const undo = this.#restoreUndoably(restored, turn);
    try {
      await store.rollback(lease, turn);
    } catch (err) {
      this.#undoRestores(undo);
      if (outcomeUnknown(err)) throw await this.#rollbackUnknown(turn, err);
      throw this.#storeFailure(err);
    }
    this.#restoring = true;
    try {
      const history = this.session.history;
      history.replace(0, history.length, messages);
    } finally {
      this.#restoring = false;
    }
    // Disposing a replaced instance that throws does not undo a rollback the store made.
    await insertLocals(
      restored.filter((r) => r.target === undefined),
      homes,
      this.id,
    );
    this.#committedTurn = turn;
    this.#committedMark = this.session.history._mark();
    this.#committedLocals = target.checkpoint.locals;
    await this.#emit('session/rolled-back').catch(noop);
  }

  /**
   * A rollback whose outcome is unknown (a timeout, a connection lost after it was sent):
   * the store may be at `turn` or where it was, and this session can not tell which, so it
   * must not run another turn on either timeline. It is disposed (its lease released: a
   * resume right after works) and the rollback rejects with `STORE_ERROR`.
   */
  async #rollbackUnknown(turn: number, err: unknown): Promise<SessionError> {
    const was = this.#committedTurn;
    await this.dispose().catch(noop);
    return new SessionError(
      'STORE_ERROR',
      `durableSession.rollback(${turn}) on session "${this.id}": store.rollback() failed (${errorText(err)}) and may or may not have been applied, ` +
        `so the store is at turn ${turn} or still at turn ${was}. The session was disposed so that no turn runs on the wrong one: ` +
        `resume it (sessions.resume) to continue from what the store holds (its committedTurn tells which), then roll back again if needed` +
        (isStoreTimeout(err) ? ', or raise storeTimeoutMs if the store is only slow.' : '.'),
      { sessionId: this.id, cause: err },
    );
  }

  /**
   * Restores in place every local of `restored` that has a live target, each after a
   * snapshot of its current state (`serialize`), and returns the snapshots. When a
   * snapshot or a `restore` fails, the ones already restored are put back and this throws
   * (`SERIALIZE_FAILED` / `DESERIALIZE_FAILED`): nothing changed.
   */
  #restoreUndoably(restored: readonly RestoredLocal[], turn: number): { r: RestoredLocal; before: PersistedLocal }[] {
    const undo: { r: RestoredLocal; before: PersistedLocal }[] = [];
    const inPlace = restored.filter((r) => r.target !== undefined);
    if (inPlace.length === 0) return undo;
    let before: PersistedLocal[];
    try {
      before = serializeLocals({ list: inPlace.map((r) => r.serializer), byKey: new Map(inPlace.map((r) => [r.serializer.key, r.serializer])) }, this.#homes(), this.id);
    } catch (err) {
      throw new SessionError(
        'SERIALIZE_FAILED',
        `durableSession.rollback(${turn}) on session "${this.id}": taking a snapshot of the live locals before restoring them in place failed (${errorText(err)}). ` +
          `Nothing was rolled back: the store and the session are at turn ${this.#committedTurn}; make serialize(value) return lossless JSON, then retry.`,
        { sessionId: this.id, cause: err },
      );
    }
    const byKey = new Map(before.map((p) => [p.key, p]));
    for (const r of inPlace) {
      const b = byKey.get(r.serializer.key) as PersistedLocal;
      try {
        undo.push({ r, before: b });
        restoreInPlace(r.serializer, r.target as object, r.persisted, this.id);
      } catch (err) {
        const undone = this.#undoRestores(undo);
        throw new SessionError(
          'DESERIALIZE_FAILED',
          `durableSession.rollback(${turn}) on session "${this.id}": ${errorText(err)} Nothing was rolled back: the store is at turn ${this.#committedTurn}` +
            (undone
              ? `, and so is the session. Fix the serializer's restore, then retry.`
              : `; putting the live locals back failed too, so the session was disposed: fix the serializer's restore, then resume it (sessions.resume).`),
          { sessionId: this.id, cause: err },
        );
      }
    }
    return undo;
  }

  /**
   * Puts locals restored in place back to their snapshots; false when that failed too
   * (memory can not be trusted then: the session is disposed, so none of it is committed).
   */
  #undoRestores(undo: readonly { r: RestoredLocal; before: PersistedLocal }[]): boolean {
    for (let i = undo.length - 1; i >= 0; i--) {
      const { r, before } = undo[i] as { r: RestoredLocal; before: PersistedLocal };
      try {
        restoreInPlace(r.serializer, r.target as object, before, this.id);
      } catch {
        void this.dispose().catch(noop);
        return false;
      }
    }
    return true;
  }
}

function stripEvent(e: BufferedEvent): NewSessionEvent {
  return { kind: e.kind, body: e.body };
}

function logEvents(t: TurnState): NewSessionEvent[] {
  return t.pending.filter((e) => e.log).map(stripEvent);
}

/** @internal A stored event as the public API shows it (frozen). */
export function eventRecord(e: StoredSessionEvent, status = e.status): SessionEventRecord {
  return Object.freeze({ seq: e.seq, turn: e.turn, kind: e.kind, body: e.body, status });
}

/** Replays committed history changes into the history they make; a malformed one is `CORRUPT_ROW`. */
function replayHistory(events: readonly StoredSessionEvent[], sessionId: string): ConversationHistory {
  const messages: ChatMessage[] = [];
  for (const e of events) {
    const bad = (why: string): SessionError =>
      new SessionError('CORRUPT_ROW', `corrupt row: event ${e.seq} (${e.kind}) of session "${sessionId}" can not be replayed: ${why}.`, { sessionId });
    if (e.kind === 'history/append') {
      messages.push(e.body as unknown as ChatMessage);
    } else if (e.kind === 'history/replace') {
      const b = e.body as { start?: unknown; end?: unknown; messages?: unknown } | null;
      if (b === null || typeof b !== 'object' || !Array.isArray(b.messages)) throw bad('the body is not { start, end, messages }');
      const { start, end } = b;
      if (typeof start !== 'number' || typeof end !== 'number' || !Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end > messages.length) {
        throw bad(`start ${describeValue(start)} and end ${describeValue(end)} do not fit a history of ${messages.length} messages`);
      }
      // splice without spreading into a call: a compaction may hold any number of messages.
      const tail = messages.slice(end);
      messages.length = start;
      for (const m of b.messages as ChatMessage[]) messages.push(m);
      for (const m of tail) messages.push(m);
    } else {
      throw bad('it is not a history change');
    }
  }
  try {
    return new ConversationHistory(messages);
  } catch (err) {
    throw new SessionError('CORRUPT_ROW', `corrupt row: the history of session "${sessionId}" holds an invalid message: ${errorText(err)}.`, { sessionId, cause: err });
  }
}
