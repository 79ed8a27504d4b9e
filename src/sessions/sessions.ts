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
import { Agents } from '../agents/agents.js';
import { createAgent } from '../agents/create-agent.js';
import type { ParentFilter } from '../context/parent-filter.js';
import { describeValue, errorText } from '../context/token.js';
import { ContextView } from '../scope/context-view.js';
import { snapshotJson, type JsonValue } from '../util/lossless-json.js';
import { DurableSession, eventRecord, type OpenSnapshot, type TurnFn } from './durable/index.js';
import { SessionError } from './errors.js';
import { liveRuntime, type LiveRuntime, type SessionEventRecord, type SessionsRuntime } from './runtime.js';

/** What {@link Sessions.create} takes. */
export interface CreateSessionOptions {
  /** The id of the session's own agent: unique among live agents (e.g. `support:${userId}`). */
  readonly agentId: string;
  /** The session id (a non-empty string of at most 1024 characters, no NUL). */
  readonly sessionId: string;
  /** Composes the agent (tools, prompts, listeners, default locals); awaited unpublished, after the load. */
  readonly setup?: AgentSetup;
  /** Makes the session's agent a subagent of `parent`. */
  readonly parent?: Agent;
  /** Gates `Res` walks from the agent's context to its owner. */
  readonly parentFilter?: ParentFilter;
  /** Application metadata stored with the session (lossless JSON; `null` by default). */
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
  /** Makes the session's agent a subagent of `parent`. */
  readonly parent?: Agent;
  /** Gates `Res` walks from the agent's context to its owner. */
  readonly parentFilter?: ParentFilter;
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
    return openDurable(this, 'resume', options);
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

  /** The published, live durable session of `sessionId` in this process (any view of the server), or `undefined`. */
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
async function openDurable(view: Sessions, mode: 'create' | 'resume', options: unknown): Promise<DurableSession> {
  const call = mode === 'create' ? 'Sessions.create' : 'Sessions.resume';
  const o = snapshotOptions(options, call, mode);
  const ctx = view.context;
  ctx._live(`${call}({ sessionId: "${o.sessionId}" })`);
  const rt = view._runtime;
  const reused = rt.owners.refusal(call, o.sessionId);
  if (reused !== undefined) throw reused;
  const held = rt.registry.liveHolder(o.sessionId) as DurableSession | undefined;
  if (held !== undefined) {
    throw new SessionError(
      'SESSION_BUSY',
      `${call}({ sessionId: "${o.sessionId}" }): session busy: it is ${held._published ? 'open' : 'being opened'} in this process (owner "${rt.owner}", agent "${held._published ? held.agent.id : '…'}"); use sessions.get("${o.sessionId}"), or close it first.`,
      { sessionId: o.sessionId, holder: { owner: rt.owner, epoch: held._lease?.epoch ?? 0, remainingMs: rt.leaseTtlMs } },
    );
  }
  const durable = new DurableSession(rt, mode, o);
  rt.registry.reserve(durable);
  try {
    await createAgent(
      ctx.get(Agents),
      { id: o.agentId, setup: o.setup, parent: o.parent, parentFilter: o.parentFilter },
      { call, beforeSetup: (_agentCtx, _signal, agent) => durable._beforeSetup(agent), prepare: () => durable._prepare() },
    );
  } catch (err) {
    rt.registry.leave(durable);
    throw err;
  }
  durable._settle();
  return durable;
}

interface Snapshot extends OpenSnapshot {
  readonly setup: AgentSetup | undefined;
  readonly parent: Agent | undefined;
  readonly parentFilter: ParentFilter | undefined;
}

/** Reads each option once and validates the session's own fields (the agent's are checked by the agent transaction). */
function snapshotOptions(options: unknown, call: string, mode: 'create' | 'resume'): Snapshot {
  const shape = mode === 'create' ? '{ agentId, sessionId, setup?, parent?, parentFilter?, meta? }' : '{ agentId, sessionId, setup?, parent?, parentFilter? }';
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}(options): options must be an object ${shape}, got ${describeValue(options)}.`);
  }
  const read = (field: string): unknown => {
    try {
      return (options as Record<string, unknown>)[field];
    } catch (err) {
      throw new TypeError(`${call}(options): reading options.${field} threw: ${errorText(err)}. Pass a plain object ${shape}.`, { cause: err });
    }
  };
  const sessionId = read('sessionId');
  checkId(sessionId, `${call}({ sessionId })`, 'sessionId');
  const agentId = read('agentId');
  checkId(agentId, `${call}({ sessionId: "${sessionId}", agentId })`, 'agentId');
  let meta: JsonValue = null;
  if (mode === 'create') {
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
    sessionId,
    agentId,
    meta,
    setup: read('setup') as AgentSetup | undefined,
    parent: read('parent') as Agent | undefined,
    parentFilter: read('parentFilter') as ParentFilter | undefined,
  };
}

function checkId(value: unknown, where: string, field: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024 || value.includes('\u0000')) {
    throw new TypeError(`${where}: ${field} must be a non-empty string of at most 1024 characters without NUL, got ${describeValue(value)}.`);
  }
}
