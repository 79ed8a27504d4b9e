/**
 * `Sessions`: the view `ctx.get(Sessions)` returns, bound to `ctx`, which owns
 * the agents and durable sessions it opens. `create` and `resume` are one owned
 * transaction each, built on the agent create transaction: the session id and the agent id
 * are reserved before any await, and acquiring the lease, loading, `setup` and restoring
 * the locals happen while the agent is unpublished; any failure releases the lease and
 * both ids, leaves no row behind and publishes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Agent } from '../agents/agent.js';
import type { AgentSetup } from '../agents/agents.js';
import type { AgentKind } from '../agents/kind.js';
import { Agents } from '../agents/agents.js';
import { createAgent } from '../agents/create-agent.js';
import type { ParentFilter } from '../context/parent-filter.js';
import type { SystemContext } from '../context/system-context.js';
import { describeValue, errorText } from '../context/token.js';
import { ContextView } from '../scope/context-view.js';
import { snapshotJson, type JsonValue } from '../util/lossless-json.js';
import { DurableSession, eventRecord, type OpenSnapshot, type TurnFn } from './durable/index.js';
import { SessionError, isSessionError } from './errors.js';
import { checkMs } from '../util/check-ms.js';
import { readField } from '../util/read-field.js';
import { cancelSession } from './routing/cancel.js';
import { routerOf } from './routing/router.js';
import { localBusyError, withWait } from './routing/wait.js';
import { TurnLog } from './turn-log.js';
import { liveRuntime, type LiveRuntime, type SessionEventRecord, type SessionsRuntime } from './runtime.js';

/** What {@link Sessions.create} takes. */
export interface CreateSessionOptions {
  /** The id of the session's own agent: unique among live agents (e.g. `support:${userId}`). */
  readonly agentId: string;
  /** The session id (a non-empty string of at most 1024 characters, no NUL). */
  readonly sessionId: string;
  /** Composes the agent (tools, prompts, listeners, default locals); awaited unpublished, after the load. Not together with `kind`. */
  readonly setup?: AgentSetup;
  /**
   * Makes the session's agent from a kind defined with `agents.define` (the `AgentKind` or
   * its name), instead of `setup`: the kind's `setup` composes it, and the kind's name is
   * in the agent's errors, traces and `inspect`. An unknown name is a `TypeError` naming the
   * kinds that exist.
   */
  readonly kind?: AgentKind | string;
  /** Makes the session's agent a subagent of `parent`. */
  readonly parent?: Agent;
  /** Gates `Res` walks from the agent's context to its owner. */
  readonly parentFilter?: ParentFilter;
  /** Application metadata stored with the session (lossless JSON; `null` by default). */
  readonly meta?: JsonValue;
}

/** What {@link Sessions.open} takes: the options of `create`, plus how long to wait for another holder. */
export interface OpenSessionOptions extends CreateSessionOptions {
  /**
   * How long to wait, in milliseconds, while another process holds the session (default 0:
   * `SESSION_BUSY` at once). With the plugin's `handoff: 'idle'` the holder is asked to
   * release it, and does at once when it has no turn in flight. A finite number from 0 to
   * 2^31 - 1.
   */
  readonly waitMs?: number;
  /**
   * This session's handoff policy, overriding `SessionsPlugin({ handoff })`: whether this
   * open asks a holder to release it while it waits, and whether this process, once it
   * holds the session, releases it when another one asks.
   */
  readonly handoff?: 'idle' | 'never';
  /** Ignored when the session exists (the stored metadata is kept); stored when `open` creates it. */
  readonly meta?: JsonValue;
}

/** What {@link Sessions.resume} takes. */
export interface ResumeSessionOptions {
  /** The id of the agent the session was created with (`AGENT_MISMATCH` otherwise). */
  readonly agentId: string;
  /** The stored session's id. */
  readonly sessionId: string;
  /**
   * Composes the agent again (registrations are not persisted: `setup` runs at every
   * resume). The persisted agent-scope locals are restored before it runs, so
   * `agentCtx.getMut(token)` in `setup` is the persisted instance; inserting a restored
   * token is refused with a `TypeError` unless its serializer has `restore` (then the
   * inserted instance is restored in place and kept).
   */
  readonly setup?: AgentSetup;
  /** Makes the session's agent from a kind defined with `agents.define`, instead of `setup`; see {@link CreateSessionOptions.kind}. */
  readonly kind?: AgentKind | string;
  /** Makes the session's agent a subagent of `parent`. */
  readonly parent?: Agent;
  /** Gates `Res` walks from the agent's context to its owner. */
  readonly parentFilter?: ParentFilter;
  /** How long to wait, in milliseconds, while another process holds the session (default 0); see {@link OpenSessionOptions.waitMs}. */
  readonly waitMs?: number;
  /** This session's handoff policy; see {@link OpenSessionOptions.handoff}. */
  readonly handoff?: 'idle' | 'never';
}

/** What {@link Sessions.runOneshot} takes. */
export interface OneshotOptions<R> {
  /** Composes the one-shot agent. */
  readonly setup?: AgentSetup;
  /** The one turn. */
  readonly fn: TurnFn<R>;
  /** Keep the stored session (closed) instead of deleting it. */
  readonly preserve?: boolean;
}

/** What {@link Sessions.runOneshot} resolves to. */
export interface OneshotResult<R> {
  /** What the turn returned. */
  readonly result: R;
  /** The fresh session id (deleted from the store unless `preserve`). */
  readonly sessionId: string;
}

/** One item of {@link Sessions.list}. */
export interface SessionListItem {
  /** The session id. */
  readonly sessionId: string;
  /** Its agent's id. */
  readonly agentId: string;
  /** Its last committed turn. */
  readonly committedTurn: number;
  /** When it was last written, on the store's clock. */
  readonly updatedAt: Date;
  /** The metadata given at `create`. */
  readonly meta: JsonValue;
}

/** A page of {@link Sessions.list}. */
export interface SessionListPage {
  /** The sessions of the page, ordered by session id. */
  readonly items: readonly SessionListItem[];
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  readonly cursor?: string;
}

/**
 * Durable sessions, installed by `SessionsPlugin`. `ctx.get(Sessions)` is a view bound to
 * `ctx`: the agents and sessions it opens are owned by `ctx` (disposing `ctx` disposes
 * them and releases their leases). Every method returns a promise and reports every
 * failure by rejecting.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, Server, Sessions, SessionsPlugin } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin());
 * await server.finish();
 * const sessions = server.createContext().get(Sessions);
 * const durable = await sessions.create({ agentId: 'support:42', sessionId: 'ticket-42', meta: { user: 42 } });
 * await durable.turn((_turnCtx, session) => void session.history.append({ role: 'user', content: 'hi' }));
 * await durable.close();
 * const again = await sessions.resume({ agentId: 'support:42', sessionId: 'ticket-42' });
 * assert.equal(again.session.history.length, 1);
 * assert.deepEqual(again.meta, { user: 42 });
 * await server.dispose();
 * ```
 */
export class Sessions extends ContextView<SessionsRuntime> {
  /**
   * Creates a session and its agent as one owned transaction: checkpoint 0
   * (the persisted locals after `setup`) is written and the first lease taken; the agent
   * is published and `session/created` emitted. Rejects with `SESSION_ALREADY_EXISTS`,
   * `SESSION_BUSY` (the id is live in this process), the `AgentError` of a failing
   * `setup` or a taken agent id, or `SERIALIZE_FAILED`; nothing is left behind.
   */
  create(options: CreateSessionOptions): Promise<DurableSession> {
    return openDurable(this, 'create', options);
  }

  /**
   * Resumes a stored session in this process: takes its lease, loads it,
   * marks an interrupted turn aborted (reported in `interruptedTurns`, and given to the
   * plugin's `interrupted` handler), restores the persisted locals (all deserialized
   * before any is inserted; the agent-scope ones before `setup`, so `setup` sees them),
   * runs `setup`, restores the history and the session-scope locals, publishes the agent
   * and emits `session/resumed`. Rejects with `SESSION_NOT_FOUND`, `SESSION_BUSY` (naming the
   * holder and the time left), `AGENT_MISMATCH`, `CORRUPT_ROW`, `UNSUPPORTED_FORMAT`,
   * `DESERIALIZE_FAILED`, `UNKNOWN_LOCAL`, or the `AgentError` of a failing `setup`; any
   * failure releases the lease and both ids and publishes nothing.
   */
  resume(options: ResumeSessionOptions): Promise<DurableSession> {
    return waitAndOpen(this, 'resume', options);
  }

  /**
   * Opens a session wherever its request landed: resumes it when it is stored, creates it
   * otherwise (of processes racing to open a new id, exactly one creates it; a loser that
   * does not wait gets `SESSION_BUSY`, never `SESSION_ALREADY_EXISTS`), and resolves to the
   * live session when it is already open in this process. `durable.opened` says which:
   * `'created'` or `'resumed'`. With `waitMs`, a session held by another process is waited
   * for (and, by default, asked for: see `SessionsPlugin({ handoff })`), as is a session of
   * this process that is being opened or closed. When the agent is live already, `setup`,
   * `parent` and `parentFilter` are ignored. Rejects like `create` and `resume`.
   */
  open(options: OpenSessionOptions): Promise<DurableSession> {
    return waitAndOpen(this, 'open', options);
  }

  /**
   * Aborts the turn in flight of `sessionId` wherever it runs: in this process at once;
   * in another through the store (it is woken by a notification on PostgreSQL, or finds the
   * request at its next poll). The turn rejects with `SESSION_ERROR` code `TURN_CANCELLED`
   * carrying `reason` (default `'cancelled'`), unless its function had already returned
   * (then it commits). Resolves `true` once the abort was delivered (this process) or
   * recorded for the open attempt (another process), `false` when no turn was open or the
   * session is unknown. Never waits for the turn to settle.
   */
  async cancel(sessionId: string, reason?: string): Promise<boolean> {
    if (typeof sessionId !== 'string' || sessionId.length === 0) {
      throw new TypeError(`Sessions.cancel(sessionId): sessionId must be a non-empty string, got ${describeValue(sessionId)}.`);
    }
    if (reason !== undefined && typeof reason !== 'string') {
      throw new TypeError(`Sessions.cancel("${sessionId}", reason): reason must be a string, got ${describeValue(reason)}.`);
    }
    this.context._live(`Sessions.cancel("${sessionId}")`);
    return cancelSession(this._runtime, sessionId, reason ?? 'cancelled');
  }

  /**
   * Runs one turn in a fresh session with a fresh agent (ids `oneshot-<uuid>`), then
   * deletes the session (unless `preserve`: then it is closed) and disposes the agent,
   * also when `fn` throws (the promise then rejects with `fn`'s error).
   */
  async runOneshot<R>(options: OneshotOptions<R>): Promise<OneshotResult<Awaited<R>>> {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`Sessions.runOneshot(options): options must be an object { fn, setup?, preserve? }, got ${describeValue(options)}.`);
    }
    const { setup, fn, preserve } = options;
    if (typeof fn !== 'function') throw new TypeError(`Sessions.runOneshot({ fn }): fn must be a function (turnCtx, session) => result, got ${describeValue(fn)}.`);
    const id = `oneshot-${randomUUID()}`;
    const durable = await this.create({ agentId: id, sessionId: id, ...(setup !== undefined ? { setup } : {}) });
    let outcome: { ok: true; value: Awaited<R> } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await durable.turn(fn) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (preserve === true) {
      await durable.close();
    } else {
      await durable.dispose();
      await this._runtime.store.delete(id);
    }
    if (!outcome.ok) throw outcome.error;
    return Object.freeze({ result: outcome.value, sessionId: id });
  }

  /** @internal The plugin's shared state, with the store bounded by `storeTimeoutMs`. */
  get _runtime(): LiveRuntime {
    return liveRuntime(this.registry);
  }

  /**
   * The published durable session of `sessionId` in this process (any view of the server),
   * also while it is closing (its `turn()` then rejects with `SESSION_CLOSED`: open it again
   * with `sessions.open({ …, waitMs })`, which waits for the close), or `undefined`.
   */
  get(sessionId: string): DurableSession | undefined {
    return this.registry.registry.get(sessionId) as DurableSession | undefined;
  }

  /** A page of stored sessions, ordered by id, optionally of one agent (the store's view: every process's sessions). */
  async list(query?: { readonly agentId?: string; readonly limit?: number; readonly cursor?: string }): Promise<SessionListPage> {
    this.context._live('Sessions.list()');
    const page = await this._runtime.store.list(query);
    const items = page.items.map((s) =>
      Object.freeze({ sessionId: s.sessionId, agentId: s.agentId, committedTurn: s.committedTurn, updatedAt: s.updatedAt, meta: s.meta }),
    );
    return Object.freeze({ items: Object.freeze(items), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
  }

  /**
   * Deletes a stored session and all its rows, disposing it first when it is live in this
   * process. Resolves `false` when there was none. Rejects with `SESSION_BUSY` while
   * another owner (another process) holds a live lease, unless `force` (its next write
   * then gets `LEASE_LOST`).
   */
  async delete(sessionId: string, options?: { readonly force?: boolean }): Promise<boolean> {
    if (typeof sessionId !== 'string' || sessionId.length === 0) {
      throw new TypeError(`Sessions.delete(sessionId): sessionId must be a non-empty string, got ${describeValue(sessionId)}.`);
    }
    this.context._live(`Sessions.delete("${sessionId}")`);
    const force = options?.force === true;
    const live = this.registry.registry.holder(sessionId) as DurableSession | undefined;
    if (live !== undefined) await live.dispose().catch(() => undefined);
    return this._runtime.store.delete(sessionId, { force });
  }

  /**
   * Every stored event of a session in `seq` order, `{ seq, turn, kind, body, status }`,
   * status one of `committed`, `aborted`, `superseded` (after a rollback) or `pending`
   * (flushed, turn not ended). The iteration rejects with `SESSION_NOT_FOUND` for an
   * unknown session.
   */
  async *events(sessionId: string, query?: { readonly afterSeq?: number; readonly limit?: number }): AsyncIterable<SessionEventRecord> {
    this.context._live(`Sessions.events("${String(sessionId)}")`);
    for await (const e of this._runtime.store.events(sessionId, query)) yield eventRecord(e);
  }
}

/** The create/resume transaction. Everything up to the reservations runs before any await. */
async function openDurable(view: Sessions, mode: 'create' | 'resume', options: unknown, read?: Snapshot): Promise<DurableSession> {
  // `open` and the waits read their options once, and hand the snapshot over (naming their call).
  const o = read ?? snapshotOptions(options, mode === 'create' ? 'Sessions.create' : 'Sessions.resume', mode);
  const call = o.call ?? (mode === 'create' ? 'Sessions.create' : 'Sessions.resume');
  const ctx = view.context;
  ctx._live(`${call}({ sessionId: "${o.sessionId}" })`);
  const rt = view._runtime;
  const reused = rt.owners.refusal(call, o.sessionId);
  if (reused !== undefined) throw reused;
  const held = rt.registry.liveHolder(o.sessionId) as DurableSession | undefined;
  if (held !== undefined) {
    const closing = held._published && held._closing;
    const where = !held._published ? 'being opened' : closing ? 'closing' : 'open';
    const fix = !held._published || closing ? 'pass waitMs to wait for it' : `use sessions.get("${o.sessionId}") or sessions.open(...), or close it first`;
    const busy = new SessionError(
      'SESSION_BUSY',
      `${call}({ sessionId: "${o.sessionId}" }): session busy: it is ${where} in this process (owner "${rt.owner}", agent "${held._published ? held.agent.id : '…'}"); ${fix}.`,
      { sessionId: o.sessionId, holder: { owner: rt.owner, epoch: held._lease?.epoch ?? 0, remainingMs: rt.leaseTtlMs } },
    );
    // Being opened or closing: a wait (waitMs) waits for it; an open session is the caller's to find.
    throw !held._published || closing ? localBusyError(busy) : busy;
  }
  const durable = new DurableSession(rt, mode, o);
  rt.registry.reserve(durable);
  try {
    await createAgent(
      ctx.get(Agents),
      { id: o.agentId, setup: o.setup, ...(o.kind !== undefined ? { kind: o.kind } : {}), parent: o.parent, parentFilter: o.parentFilter },
      { call, beforeSetup: (_agentCtx, _signal, agent) => durable._beforeSetup(agent), prepare: () => durable._prepare() },
    );
  } catch (err) {
    rt.registry.leave(durable);
    throw err;
  }
  durable._settle();
  routerOf(rt).held(durable);
  return durable;
}

/** `open` and `resume`: the open transaction, retried while another holder is waited for (`waitMs`). */
async function waitAndOpen(view: Sessions, mode: 'open' | 'resume', options: unknown): Promise<DurableSession> {
  const call = mode === 'open' ? 'Sessions.open' : 'Sessions.resume';
  const o = snapshotOptions(options, call, mode);
  const ctx = view.context;
  ctx._live(`${call}({ sessionId: "${o.sessionId}" })`);
  const rt = view._runtime;
  const plan = {
    call,
    sessionId: o.sessionId,
    waitMs: o.waitMs,
    handoff: o.handoff ?? rt.handoff,
    inTurn: ctx.tryGet(TurnLog) !== undefined,
    disposeTimeoutMs: ctx.server.options.disposeTimeoutMs,
  };
  return withWait(rt, plan, mode === 'resume' ? () => openDurable(view, 'resume', undefined, o) : () => openOrCreate(view, o));
}

/** How many times `open` goes from resume to create and back when a delete or another creator races it. */
const OPEN_ROUNDS = 4;

/** One try of `open`: the live session of this process, else resume, else create (a lost create race resumes). */
async function openOrCreate(view: Sessions, o: Snapshot): Promise<DurableSession> {
  const rt = view._runtime;
  for (let round = 1; ; round++) {
    const live = rt.registry.get(o.sessionId) as DurableSession | undefined;
    if (live !== undefined && !live._closing) {
      if (live.agent.id !== o.agentId) {
        throw new SessionError(
          'AGENT_MISMATCH',
          `Sessions.open({ agentId: "${o.agentId}", sessionId: "${o.sessionId}" }): the session belongs to agent "${live.agent.id}"; open it with agentId "${live.agent.id}".`,
          { sessionId: o.sessionId },
        );
      }
      checkSharedThrough(view.context, live, o.sessionId);
      live._reopened();
      return live;
    }
    try {
      return await openDurable(view, 'resume', undefined, o);
    } catch (err) {
      if (!isSessionError(err, 'SESSION_NOT_FOUND') || round >= OPEN_ROUNDS) throw err;
    }
    try {
      return await openDurable(view, 'create', undefined, o);
    } catch (err) {
      if (!isSessionError(err, 'SESSION_ALREADY_EXISTS')) throw err;
      // Another process created it meanwhile: resume it (SESSION_BUSY while its creator holds it).
      if (round >= OPEN_ROUNDS) {
        throw new SessionError('SESSION_BUSY', `Sessions.open({ sessionId: "${o.sessionId}" }): session busy: it was created and deleted by others ${round} times while this open ran; retry.`, {
          sessionId: o.sessionId,
          cause: err,
        });
      }
    }
  }
}

/**
 * A live session is shared only through a view whose context is the one that owns its
 * agent, one of that context's ancestors, or inside the agent (a turn's own context): a
 * per-request view would let one request's locals reach another request's turns, and one
 * request's end abort another's turn.
 */
function checkSharedThrough(viewCtx: SystemContext, live: DurableSession, sessionId: string): void {
  const agentCtx = live.agent.ctx;
  const owner = agentCtx.parent;
  for (let c: SystemContext | undefined = owner; c !== undefined; c = c.parent) if (c === viewCtx) return;
  for (let c: SystemContext | undefined = viewCtx; c !== undefined; c = c.parent) if (c === agentCtx) return;
  throw new TypeError(
    `Sessions.open({ sessionId: "${sessionId}" }): the session is live in this process and its agent "${live.agent.id}" is owned by ${owner?.describe() ?? 'the server'}, ` +
      `but this view's context (${viewCtx.describe()}) is neither that context, one of its ancestors, nor inside the agent. ` +
      'Share durable sessions through a long-lived view, such as the application\'s context (app.get(Sessions)), never a per-request one, and pass request data as locals of the turn.',
  );
}

interface Snapshot extends OpenSnapshot {
  readonly waitMs: number;
  readonly setup: AgentSetup | undefined;
  readonly kind: AgentKind | string | undefined;
  readonly parent: Agent | undefined;
  readonly parentFilter: ParentFilter | undefined;
}

/** Reads each option once and validates the session's own fields (the agent's are checked by the agent transaction). */
function snapshotOptions(options: unknown, call: string, mode: 'create' | 'resume' | 'open'): Snapshot {
  const shape =
    mode === 'create'
      ? '{ agentId, sessionId, setup? | kind?, parent?, parentFilter?, meta? }'
      : mode === 'open'
        ? '{ agentId, sessionId, setup? | kind?, parent?, parentFilter?, meta?, waitMs?, handoff? }'
        : '{ agentId, sessionId, setup? | kind?, parent?, parentFilter?, waitMs?, handoff? }';
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}(options): options must be an object ${shape}, got ${describeValue(options)}.`);
  }
  const read = (field: string): unknown => readField(options, field, `${call}(options)`, 'options');
  const sessionId = read('sessionId');
  checkId(sessionId, `${call}({ sessionId })`, 'sessionId');
  const agentId = read('agentId');
  checkId(agentId, `${call}({ sessionId: "${sessionId}", agentId })`, 'agentId');
  let meta: JsonValue = null;
  let waitMs = 0;
  let handoff: 'idle' | 'never' | undefined;
  if (mode !== 'create') {
    const w = read('waitMs');
    if (w !== undefined) waitMs = checkMs(w, `${call}({ sessionId: "${sessionId}", waitMs })`);
    const h = read('handoff');
    if (h !== undefined && h !== 'idle' && h !== 'never') {
      throw new TypeError(`${call}({ sessionId: "${sessionId}", handoff }): handoff must be 'idle' or 'never', got ${describeValue(h)}.`);
    }
    handoff = h;
  }
  if (mode !== 'resume') {
    const m = read('meta');
    if (m !== undefined) {
      try {
        meta = snapshotJson(m, `${call}({ sessionId: "${sessionId}", meta })`, 'meta');
      } catch (err) {
        throw new TypeError(errorText(err), { cause: err });
      }
    }
  }
  return {
    call,
    sessionId,
    agentId,
    meta,
    waitMs,
    ...(handoff !== undefined ? { handoff } : {}),
    setup: read('setup') as AgentSetup | undefined,
    kind: read('kind') as AgentKind | string | undefined,
    parent: read('parent') as Agent | undefined,
    parentFilter: read('parentFilter') as ParentFilter | undefined,
  };
}

function checkId(value: unknown, where: string, field: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024 || value.includes('\u0000')) {
    throw new TypeError(`${where}: ${field} must be a non-empty string of at most 1024 characters without NUL, got ${describeValue(value)}.`);
  }
}
