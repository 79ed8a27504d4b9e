/**
 * `DurableSession` (SPEC §12): an agent with one session whose turns are committed to a
 * `SessionStore`. Turns run one at a time; each writes a fenced *started* record, then one
 * transaction on commit (history changes, `TurnLog` events, the committed record and a
 * checkpoint of the persisted locals) or an *aborted* record on failure, after which the
 * history and the persisted locals in memory go back to the last committed turn.
 */
import type { Agent } from '../agents/agent.js';
import { ConversationHistory, type ChatMessage, type HistoryMark, type HistoryObserver } from '../agents/history.js';
import { openSession, type Session } from '../agents/session.js';
import type { SystemContext } from '../context/system-context.js';
import { describeValue, errorText } from '../context/token.js';
import type { SessionEventInfo, SessionLeaseLostInfo } from '../events/event-map.js';
import { eventBusOf } from '../events/events.js';
import type { ownClass } from '../system/own-class.js';
import type { JsonValue } from '../tools/lossless-json.js';
import { SessionError, isSessionError } from './errors.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { InterruptedTurn, SessionEventRecord, SessionsRuntime } from './runtime.js';
import { deserializeLocals, insertLocals, serializeLocals, type LocalHomes } from './serializers.js';
import type { BegunAttempt, Lease, LoadedSession, NewSessionEvent, PersistedLocal, StoredSessionEvent } from './store.js';
import { TurnLog, type TurnSink } from './turn-log.js';

/** A turn's function: runs in the turn context (which holds a `Scratchpad` and the `TurnLog`). */
export type TurnFn<R> = (turnCtx: SystemContext, session: Session) => R | Promise<R>;

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
 *   to the last committed turn; re-read locals from the context after a failed turn.
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
  readonly #rt: SessionsRuntime;
  readonly #mode: 'create' | 'resume';
  #agent: Agent | undefined;
  #session: Session | undefined;
  #meta: JsonValue;
  #state: State = 'loading';
  #published = false;
  #settled = false;
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
  #turn: TurnState | undefined;
  #busy: 'turn' | 'rollback' | undefined;
  #busyDone: Promise<void> | undefined;
  #restoring = false;
  #closing: Promise<void> | undefined;

  /** @internal Made by `Sessions.create` / `Sessions.resume`. */
  constructor(rt: SessionsRuntime, mode: 'create' | 'resume', open: OpenSnapshot) {
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

  // ------------------------------------------------------------------ turns

  /**
   * Runs one durable turn: writes a fenced *started* record, runs `fn(turnCtx, session)`
   * in a child of the session context holding a fresh `Scratchpad` and this turn's
   * {@link TurnLog}, then commits the turn in one transaction and resolves to what `fn`
   * returned. Rejects with `SESSION_BUSY` while another turn (or a rollback) runs,
   * `SESSION_CLOSED` after `close()`/`dispose()`, `LEASE_LOST` once the lease was lost,
   * `fn`'s own error when it threw, `SERIALIZE_FAILED` when a serializer failed.
   */
  turn<R>(fn: TurnFn<R>): Promise<Awaited<R>> {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`durableSession.turn(fn) on session "${this.id}": fn must be a function (turnCtx, session) => result, got ${describeValue(fn)}.`));
    }
    const refused = this.#refuse('turn()') ?? this.#refuseBusy('turn()');
    if (refused !== undefined) return Promise.reject(refused);
    return this.#runExclusive('turn', () => this.#runTurn(fn));
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
   * checkpoint. Re-read locals from the context afterwards.
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
   * teardown, then for `resume` takes the lease, loads, checks the agent id and ends an
   * interrupted attempt; for `create` checks the id is free.
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
    const lease = await store.acquire(this.id, { owner: this.#rt.owner, ttlMs: this.#rt.leaseTtlMs });
    if (!this.#adopt(lease)) return;
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
      const lease = await rt.store.create({
        sessionId: this.id,
        agentId: agent.id,
        owner: rt.owner,
        ttlMs: rt.leaseTtlMs,
        meta: this.#meta,
        locals,
      });
      if (!this.#adopt(lease)) return;
      this.#committedLocals = locals;
    } else {
      const loaded = this.#loaded as LoadedSession;
      this.#loaded = undefined;
      const restored = deserializeLocals(rt.serializers, loaded.checkpoint.locals, rt.unknownLocals, this.id);
      session = openSession(agent, { history: this.#replayed });
      this.#replayed = undefined;
      this.#session = session;
      await insertLocals(restored, this.#homes());
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
        await this.#runTurn((_ctx, s) => {
          for (const m of messages as readonly ChatMessage[]) s.history.append(m);
        });
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

  /** Keeps a lease this transaction obtained; if the session was torn down meanwhile, gives it up at once. */
  #adopt(lease: Lease): boolean {
    if (this.#tornDown) {
      const { store } = this.#rt;
      void (this.#mode === 'create' ? store.delete(this.id, { lease }) : store.release(lease)).catch(noop);
      return false;
    }
    this.#lease = lease;
    const keeper = new LeaseKeeper(this.#rt.store, lease, this.#rt.leaseTtlMs, (err) => this.#leaseLost(err));
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
      const lease = this.#lease;
      if (lease === undefined) return;
      const { store } = this.#rt;
      if (this.#mode === 'create' && !this.#settled) await store.delete(this.id, { lease }).catch(noop);
      else await store.release(lease).catch(noop);
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
    // The payload is EventMap's: one frozen object per event (events room contract).
    const payload: SessionEventInfo | SessionLeaseLostInfo = Object.freeze({
      sessionId: this.id,
      agentId: agent.id,
      turn: this.#committedTurn,
      ...(error !== undefined ? { error } : {}),
    });
    return [...(await bus.emit(agent, name, [payload]))];
  }

  #leaseLost(err: SessionError): void {
    if (this.#lost !== undefined || this.#tornDown) return;
    this.#lost = err;
    this.#keeper?.stop();
    void this.#emit('session/lease-lost', err).catch(noop);
    void this.dispose().catch(noop);
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
    const p = run();
    const done = p.then(noop, noop);
    this.#busyDone = done;
    return p.finally(() => {
      this.#busy = undefined;
      this.#busyDone = undefined;
    });
  }

  async #runTurn<R>(fn: TurnFn<R>): Promise<Awaited<R>> {
    const rt = this.#rt;
    const store = rt.store;
    const lease = this.#lease as Lease;
    const t = new TurnState(this, (ts) => this.#flush(ts));
    let attempt: BegunAttempt;
    try {
      attempt = await store.begin(lease);
    } catch (err) {
      throw this.#storeFailure(err);
    }
    t.attempt = attempt;
    if (this.#tornDown) throw this.#notCommitted(attempt.turn, undefined);
    this.#turn = t;
    let outcome: Outcome<Awaited<R>>;
    try {
      const value = await this.session.turn((turnCtx, s) => {
        turnCtx.insert(TurnLog, t.log);
        return fn(turnCtx, s);
      });
      outcome = { ok: true, value };
    } catch (error) {
      outcome = { ok: false, error };
    }
    t.accepting = false;
    await t.settled();
    if (this.#turn === t) this.#turn = undefined;
    if (this.#tornDown) throw this.#notCommitted(attempt.turn, outcome.ok ? undefined : outcome.error);

    if (outcome.ok) {
      const value = outcome.value;
      let locals: PersistedLocal[] | undefined;
      try {
        locals = serializeLocals(rt.serializers, this.#homes(), this.id);
      } catch (error) {
        outcome = { ok: false, error };
      }
      if (locals !== undefined) {
        try {
          await store.commit(lease, {
            turn: attempt.turn,
            attempt: attempt.attempt,
            events: t.pending.map(stripEvent),
            locals,
            keepCheckpoints: rt.keepCheckpoints,
          });
        } catch (err) {
          const failure = this.#storeFailure(err);
          if (!this.#tornDown) {
            await store.abort(lease, { turn: attempt.turn, attempt: attempt.attempt, events: logEvents(t), reason: `commit failed: ${errorText(err)}` }).catch(noop);
            await this.#restore(this.#committedLocals);
          }
          throw failure;
        }
        this.#committedTurn = attempt.turn;
        this.#committedMark = this.session.history._mark();
        this.#committedLocals = locals;
        // A listener's failure does not undo a committed turn.
        await this.#emit('session/turn-committed').catch(noop);
        return value;
      }
    }
    const error = (outcome as { error: unknown }).error;
    try {
      await store.abort(lease, { turn: attempt.turn, attempt: attempt.attempt, events: logEvents(t), reason: errorText(error) });
    } catch (err) {
      this.#storeFailure(err);
    }
    if (!this.#tornDown) await this.#restore(this.#committedLocals);
    throw error;
  }

  async #flush(t: TurnState): Promise<void> {
    const batch = t.pending.splice(0);
    if (batch.length === 0) return;
    try {
      await this.#rt.store.append(this.#lease as Lease, t.attempt as BegunAttempt, batch.map(stripEvent));
    } catch (err) {
      // Put the batch back in front (no spread into a call: a turn may hold any number of events).
      const rest = t.pending.splice(0);
      for (const e of batch) t.pending.push(e);
      for (const e of rest) t.pending.push(e);
      throw this.#storeFailure(err);
    }
  }

  #notCommitted(turn: number, error: unknown): unknown {
    if (this.#lost !== undefined) {
      return new SessionError('LEASE_LOST', `turn ${turn} of session "${this.id}" was not committed: the session lost its lease (${this.#lost.message}).`, {
        sessionId: this.id,
        cause: this.#lost,
      });
    }
    if (error !== undefined) return error;
    return new SessionError('SESSION_CLOSED', `turn ${turn} of session "${this.id}" was not committed: the session was disposed while it ran.`, { sessionId: this.id });
  }

  /**
   * Puts the history back to the last committed turn (O(messages the failed turn added)
   * when it only appended) and the persisted locals to `locals`.
   */
  async #restore(locals: readonly PersistedLocal[]): Promise<void> {
    this.session.history._restore(this.#committedMark as HistoryMark);
    const restored = deserializeLocals(this.#rt.serializers, locals, 'drop', this.id);
    await insertLocals(restored, this.#homes());
  }

  async #rollback(turn: number): Promise<void> {
    const { store } = this.#rt;
    const lease = this.#lease as Lease;
    let loaded: LoadedSession;
    try {
      await store.rollback(lease, turn);
      loaded = await store.load(this.id);
    } catch (err) {
      throw this.#storeFailure(err);
    }
    const messages = replayHistory(loaded.history, this.id).messages;
    const restored = deserializeLocals(this.#rt.serializers, loaded.checkpoint.locals, this.#rt.unknownLocals, this.id);
    this.#restoring = true;
    try {
      const history = this.session.history;
      history.replace(0, history.length, messages);
    } finally {
      this.#restoring = false;
    }
    await insertLocals(restored, this.#homes());
    this.#committedTurn = loaded.info.committedTurn;
    this.#committedMark = this.session.history._mark();
    this.#committedLocals = loaded.checkpoint.locals;
    await this.#emit('session/rolled-back').catch(noop);
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
