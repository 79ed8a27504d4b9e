/**
 * @internal The open transaction of a durable session (`create` / `resume`), in two
 * unpublished steps around the agent's `setup`: before it, the lease, the load and the
 * restored agent-scope locals (resume) or the check that the id is free (create); after
 * it, the session, its locals and checkpoint 0 (create), the interrupted-turn messages,
 * and the session published.
 */
import type { Agent } from '../../agents/agent.js';
import type { ChatMessage } from '../../conversation/chat-message.js';
import { openSession, type Session } from '../../conversation/session.js';
import { describeValue, nameOf } from '../../context/token.js';
import { SessionError, isSessionError } from '../errors.js';
import { deserializeLocals, insertLocals, restoreInPlace, serializeLocals } from '../serializers.js';
import type { LoadedSession } from '../store/contract.js';
import { installTeardown } from './close.js';
import { opened } from './idle.js';
import { adoptLease } from './lease.js';
import { eventRecord, replayHistory } from './replay.js';
import { EMPTY, type DurableState } from './state.js';
import { runTurn } from './turn.js';

/**
 * @internal First unpublished step of `create`/`resume` (before `setup`): installs the
 * teardown, then for `resume` takes the lease, loads, checks the agent id, ends an
 * interrupted attempt, deserializes every persisted local (all before any is inserted)
 * and inserts the agent-scope ones into the agent's context, so `setup` sees the
 * restored instances (the session-scope ones wait for the session, made after `setup`);
 * for `create` checks the id is free.
 */
export async function beforeSetup(s: DurableState, agent: Agent): Promise<void> {
  s.agent = agent;
  installTeardown(s, agent);
  const { store } = s.rt;
  if (s.mode === 'create') {
    try {
      await store.checkpoints(s.id);
    } catch (err) {
      if (isSessionError(err, 'SESSION_NOT_FOUND')) return;
      throw err;
    }
    throw alreadyExists(s);
  }
  const sent = performance.now();
  const lease = await store.acquire(s.id, { owner: s.rt.owner, ttlMs: s.rt.leaseTtlMs });
  if (!adoptLease(s, lease, sent)) return;
  const loaded = await store.load(s.id);
  if (loaded.info.agentId !== agent.id) {
    throw new SessionError(
      'AGENT_MISMATCH',
      `${s.call}({ agentId: "${agent.id}", sessionId: "${s.id}" }): the session belongs to agent "${loaded.info.agentId}"; resume it with agentId "${loaded.info.agentId}".`,
      { sessionId: s.id },
    );
  }
  s.meta = loaded.info.meta;
  s.committedTurn = loaded.info.committedTurn;
  s.replayed = replayHistory(loaded.history, s.id);
  const open = loaded.open;
  if (open !== undefined) {
    await store.abort(lease, { turn: open.turn, attempt: open.attempt, reason: 'interrupted: the turn was started and never ended (its process stopped or lost its lease)' });
    s.interrupted = Object.freeze([
      Object.freeze({
        turn: open.turn,
        startedAt: open.startedAt,
        events: Object.freeze(open.events.map((e) => eventRecord(e, 'aborted'))),
      }),
    ]);
  }
  s.loaded = loaded;
  await restoreBeforeSetup(s, agent, loaded);
}

/**
 * Resume, before `setup`: deserializes every persisted local, inserts the agent-scope
 * ones (replacing the `per: 'agent'` instances, which are disposed) and keeps the
 * session-scope ones for `prepare`; then guards the restored tokens while `setup` runs.
 */
async function restoreBeforeSetup(s: DurableState, agent: Agent, loaded: LoadedSession): Promise<void> {
  const rt = s.rt;
  const restored = deserializeLocals(rt.serializers, loaded.checkpoint.locals, rt.unknownLocals, s.id);
  const agentScope = restored.filter((r) => r.serializer.scope === 'agent');
  s.sessionRestored = restored.filter((r) => r.serializer.scope === 'session');
  if (agentScope.length === 0) return;
  const errors = await insertLocals(agentScope, { agent: agent.ctx, session: undefined }, s.id);
  if (errors.length > 0) throw errors.length === 1 ? errors[0] : new AggregateError(errors, `disposing the per-agent locals replaced by the persisted ones of session "${s.id}" failed`);
  if (s.tornDown || agent.ctx.isDisposed) return;
  const guarded = new Map(agentScope.map((r) => [r.serializer.token, r] as const));
  agent.ctx._onInsert = (t, value) => {
    const r = guarded.get(t);
    if (r === undefined) return;
    const serializer = r.serializer;
    if (serializer.restore === undefined || value === null || (typeof value !== 'object' && typeof value !== 'function')) {
      const fix =
        serializer.restore === undefined
          ? `or give its serializer restore(target, data, version), which restores the inserted instance in place and keeps it`
          : `(its serializer's restore needs an object to restore in place, got ${describeValue(value)})`;
      throw new TypeError(
        `${s.call}({ sessionId: "${s.id}" }): setup inserted ${nameOf(t)}, but its persisted value ("${serializer.key}") was already restored before setup; ` +
          `read it with agentCtx.getMut(${nameOf(t)}) instead of inserting a new one, ${fix}.`,
      );
    }
    restoreInPlace(serializer, value, r.persisted, s.id);
  };
}

/**
 * @internal Last unpublished step (after `setup`): makes the session, restores (resume)
 * or writes (create) the locals and checkpoint 0, commits the interrupted-turn messages,
 * publishes the session and emits `session/created` / `session/resumed`.
 */
export async function prepare(s: DurableState): Promise<void> {
  const agent = s.agent as Agent;
  const rt = s.rt;
  let session: Session;
  if (s.mode === 'create') {
    session = openSession(agent);
    s.session = session;
    const locals = serializeLocals(rt.serializers, s.homes(), s.id);
    const sent = performance.now();
    // From here the row may exist even if the reply never comes: a create that does not
    // settle removes it (see the teardown) with the lease it would have been given.
    s.createSent = true;
    const lease = await rt.store.create({
      sessionId: s.id,
      agentId: agent.id,
      owner: rt.owner,
      ttlMs: rt.leaseTtlMs,
      meta: s.meta,
      locals,
    });
    if (!adoptLease(s, lease, sent)) return;
    s.committedLocals = locals;
  } else {
    const loaded = s.loaded as LoadedSession;
    s.loaded = undefined;
    agent.ctx._onInsert = undefined;
    const restored = s.sessionRestored;
    s.sessionRestored = EMPTY;
    session = openSession(agent, { history: s.replayed });
    s.replayed = undefined;
    s.session = session;
    const errors = await insertLocals(restored, s.homes(), s.id);
    if (errors.length > 0) throw errors.length === 1 ? errors[0] : new AggregateError(errors, `disposing the per-session locals replaced by the persisted ones of session "${s.id}" failed`);
    s.committedLocals = loaded.checkpoint.locals;
  }
  session.history._observer = s.observer;
  s.committedMark = session.history._mark();
  const handler = rt.interrupted;
  if (handler !== undefined) {
    for (const it of s.interrupted) {
      const messages = await handler(it, session);
      if (!Array.isArray(messages)) {
        throw new TypeError(`SessionsPlugin({ interrupted }): for session "${s.id}" turn ${it.turn} it must return an array of chat messages, got ${describeValue(messages)}.`);
      }
      await runTurn(
        s,
        (_ctx, turnSession) => {
          for (const m of messages as readonly ChatMessage[]) turnSession.history.append(m);
        },
        undefined,
        undefined,
      );
    }
  }
  if (s.tornDown) return;
  s.state = 'open';
  s.published = true;
  opened(s);
  const errors = await s.emit(s.mode === 'create' ? 'session/created' : 'session/resumed');
  if (errors.length > 0) {
    throw errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} listeners of session events failed for session "${s.id}"`);
  }
}

/** The `SESSION_ALREADY_EXISTS` of a `create` whose id is stored already. */
function alreadyExists(s: DurableState): SessionError {
  return new SessionError(
    'SESSION_ALREADY_EXISTS',
    `Sessions.create({ sessionId: "${s.id}" }): session already exists: "${s.id}" is stored already; resume it with sessions.resume(), or pick another id.`,
    { sessionId: s.id },
  );
}
