/**
 * `turn(fn, { signal })`: an abort before the turn writes nothing, while queued it leaves
 * the queue, while `fn` runs it disposes the turn context (its signal's reason a
 * `ContextDisposedError` whose `cause` is the abort reason; a tool execution in it aborted),
 * writes the aborted record and rejects with the reason; after `fn` returned it changes
 * nothing. The abort and cancel flow runs on the memory, SQLite and PostgreSQL stores.
 */
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentsPlugin,
  ContextDisposedError,
  MemorySessionStore,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  Tools,
  ToolsPlugin,
  TurnLog,
  type DurableSession,
  type SessionStore,
  type SystemContext,
  type ToolExecution,
} from '../../../src/index.js';
import { PostgresSessionStore } from '../../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../../src/sessions/sqlite.js';
import { probe } from '../../../src/testing/probe.js';
import { delegateStore } from '../harness.js';
import { createTestDatabase, describePg, pgTarget } from '../pg-target.js';
import { deferred, heldCall, opened, rejection, say, type Deferred } from './helpers.js';

interface World {
  readonly server: Server;
  readonly sessions: Sessions;
  readonly durable: DurableSession;
  /** Resolves when the `wait` tool's body started; re-armed by `arm()`. */
  started: Deferred;
  /** The reason the `wait` tool's execution signal aborted with, once it did. */
  toolAborted: unknown;
}

let n = 0;

/** A server with tools, agents and sessions on `store`, a `wait` tool that runs until aborted, and one session. */
async function world(store: SessionStore): Promise<World> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin(), new SessionsPlugin({ store }));
  await server.finish();
  const app = server.createContext();
  const w = { server, sessions: app.get(Sessions), started: deferred(), toolAborted: undefined as unknown } as World;
  app.get(Tools).register({
    name: 'wait',
    description: 'waits until aborted',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args: unknown, exe: ToolExecution) =>
      new Promise((_resolve, reject) => {
        exe.signal.addEventListener('abort', () => {
          w.toolAborted = exe.signal.reason;
          setTimeout(() => reject(new Error('tool stopped')), 10);
        });
        w.started.resolve();
      }),
  });
  (w as { durable: DurableSession }).durable = await w.sessions.create({ agentId: `signal-agent-${++n}`, sessionId: `signal-${n}-${Math.random().toString(36).slice(2, 8)}` });
  return w;
}

/** A turn that appends, records and flushes a TurnLog event, then calls the `wait` tool (which runs until aborted). */
function waitingTurn(seen: { signal?: AbortSignal; toolResult?: unknown }) {
  return async (turnCtx: SystemContext, session: DurableSession['session']) => {
    session.history.append(say('never committed'));
    const log = turnCtx.get(TurnLog);
    log.record('note', { step: 1 });
    await log.flush();
    seen.signal = turnCtx.signal;
    seen.toolResult = await turnCtx.get(Tools).execute({ callId: 'c1', name: 'wait', arguments: {} });
    return 'returned after the abort';
  };
}

async function eventsOf(w: World): Promise<{ kind: string; status: string; turn: number }[]> {
  const out: { kind: string; status: string; turn: number }[] = [];
  for await (const e of w.sessions.events(w.durable.id)) out.push({ kind: e.kind, status: e.status, turn: e.turn });
  return out;
}

/** The abort-while-running and cancel flow, on any store. */
function abortFlow(makeStore: () => SessionStore | Promise<SessionStore>): void {
  test('an abort while fn runs: turnCtx.signal aborts with a ContextDisposedError caused by the reason, the tool is aborted, the aborted record is written, turn() rejects with the reason', async () => {
    const store = await makeStore();
    const w = await world(store);
    const { durable } = w;
    const ac = new AbortController();
    const seen: { signal?: AbortSignal; toolResult?: unknown } = {};
    const p = durable.turn(waitingTurn(seen), { signal: ac.signal });
    await w.started.promise;
    expect(probe.openAttempt(durable)).toEqual({ turn: 1, attempt: expect.any(Number) });
    const reason = new Error('the user left');
    ac.abort(reason);
    expect(await rejection(p)).toBe(reason);
    const why = seen.signal?.reason;
    expect(why).toBeInstanceOf(ContextDisposedError);
    expect((why as Error).cause).toBe(reason);
    expect(w.toolAborted).toBeDefined();
    expect(seen.toolResult).toMatchObject({ isError: true });
    expect(durable.committedTurn).toBe(0);
    expect(durable.session.history.length).toBe(0);
    expect(probe.openAttempt(durable)).toBeUndefined();
    const events = await eventsOf(w);
    expect(events.filter((e) => e.kind === 'note')).toEqual([{ kind: 'note', status: 'aborted', turn: 1 }]);
    expect(events.some((e) => e.status === 'committed' || e.status === 'pending')).toBe(false);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // the session goes on: the next turn commits as turn 1
    await durable.turn((_c, s) => s.history.append(say('next')));
    expect(durable.committedTurn).toBe(1);
    expect((await store.load(durable.id)).info.committedTurn).toBe(1);
    await w.server.dispose();
  });

  test('cancelling the turn (probe.cancelTurn): the turn in flight rejects with TURN_CANCELLED carrying the reason; only the exact open attempt when one is given', async () => {
    const store = await makeStore();
    const w = await world(store);
    const { durable } = w;
    expect(probe.cancelTurn(durable, 'nothing to cancel')).toBe(false);
    const seen: { signal?: AbortSignal } = {};
    const p = durable.turn(waitingTurn(seen));
    await w.started.promise;
    const open = probe.openAttempt(durable);
    if (open === undefined) throw new Error('no open attempt while the turn runs');
    expect(probe.cancelTurn(durable, 'wrong attempt', { turn: open.turn, attempt: open.attempt + 1 })).toBe(false);
    expect(probe.cancelTurn(durable, 'wrong turn', { turn: open.turn + 1, attempt: open.attempt })).toBe(false);
    expect(probe.cancelTurn(durable, 'operator said so', open)).toBe(true);
    const err = await rejection(p);
    expect(err).toBeInstanceOf(SessionError);
    expect(err.code).toBe('TURN_CANCELLED');
    expect(err.reason).toBe('operator said so');
    expect(err.sessionId).toBe(durable.id);
    expect(err.message).toMatch(new RegExp(`turn 1 of session "${durable.id}" was cancelled \\(operator said so\\)`));
    expect((seen.signal?.reason as Error).cause).toBe(err);
    expect(w.toolAborted).toBeDefined();
    expect(durable.committedTurn).toBe(0);
    expect((await eventsOf(w)).filter((e) => e.kind === 'note')).toEqual([{ kind: 'note', status: 'aborted', turn: 1 }]);
    expect(probe.cancelTurn(durable, 'after the end')).toBe(false);
    await durable.turn((_c, s) => s.history.append(say('next')));
    expect(durable.committedTurn).toBe(1);
    await w.server.dispose();
  });
}

describe('turn(fn, { signal }) on the memory store', () => {
  abortFlow(() => new MemorySessionStore());

  test('already aborted: rejects with signal.reason, fn does not run, nothing is written', async () => {
    let begins = 0;
    const inner = new MemorySessionStore();
    const store = delegateStore(inner, {
      begin: (...args: Parameters<SessionStore['begin']>) => {
        begins += 1;
        return inner.begin(...args);
      },
    });
    const { server, durable } = await opened({}, store);
    const reason = new Error('too late');
    let ran = false;
    expect(
      await rejection(
        durable.turn(
          () => {
            ran = true;
          },
          { signal: AbortSignal.abort(reason) },
        ),
      ),
    ).toBe(reason);
    expect(ran).toBe(false);
    expect(begins).toBe(0);
    expect((await inner.load(durable.id)).open).toBeUndefined();
    await server.dispose();
  });

  test('aborted while queued: it leaves the queue with the reason, fn never runs, the next queued one runs', async () => {
    const { server, durable } = await opened();
    const gate = deferred();
    const first = durable.turn(() => gate.promise);
    const ac = new AbortController();
    let ran = false;
    const queued = durable.turn(
      () => {
        ran = true;
      },
      { waitMs: 10_000, signal: ac.signal },
    );
    const after = durable.turn(() => 'after', { waitMs: 10_000 });
    ac.abort('changed my mind');
    expect(await rejection(queued)).toBe('changed my mind');
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    gate.resolve();
    await first;
    expect(await after).toBe('after');
    expect(ran).toBe(false);
    expect(durable.committedTurn).toBe(2);
    await server.dispose();
  });

  test('an abort during begin: fn does not run and the attempt is aborted', async () => {
    const { inner, store, entered: begun, go } = heldCall('begin');
    const { server, durable } = await opened({}, store);
    const ac = new AbortController();
    let ran = false;
    const p = durable.turn(
      () => {
        ran = true;
      },
      { signal: ac.signal },
    );
    await begun.promise;
    ac.abort(new Error('during begin'));
    go.resolve();
    expect((await rejection(p)).message).toBe('during begin');
    expect(ran).toBe(false);
    expect((await inner.load(durable.id)).open).toBeUndefined();
    await durable.turn(() => undefined);
    expect(durable.committedTurn).toBe(1);
    await server.dispose();
  });

  test('an abort after fn returned changes nothing: the turn commits and resolves', async () => {
    const { store, entered: committing, go } = heldCall('commit');
    const { server, durable } = await opened({}, store);
    const ac = new AbortController();
    let ctxSignal: AbortSignal | undefined;
    const p = durable.turn(
      (turnCtx, s) => {
        ctxSignal = turnCtx.signal;
        s.history.append(say('kept'));
        return 'value';
      },
      { signal: ac.signal },
    );
    await committing.promise;
    ac.abort(new Error('too late to matter'));
    expect(probe.cancelTurn(durable, 'also too late')).toBe(true);
    go.resolve();
    expect(await p).toBe('value');
    expect(durable.committedTurn).toBe(1);
    expect(durable.session.history.length).toBe(1);
    expect((ctxSignal?.reason as Error).cause).toBeUndefined(); // disposed as any ended turn, not aborted
    await server.dispose();
  });

  test('a long-lived signal used for 10,000 turns keeps no listeners', async () => {
    const { server, durable } = await opened();
    const ac = new AbortController();
    const during: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      await durable.turn(
        () => {
          if (i % 2_500 === 0) during.push(getEventListeners(ac.signal, 'abort').length);
        },
        { signal: ac.signal },
      );
    }
    expect(during).toEqual([1, 1, 1, 1]);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // and one that fails or is refused leaves none either
    await rejection(durable.turn(() => Promise.reject(new Error('x')), { signal: ac.signal }));
    const gate = deferred();
    const held = durable.turn(() => gate.promise);
    await rejection(durable.turn(() => 1, { signal: ac.signal }));
    await rejection(durable.turn(() => 1, { signal: ac.signal, waitMs: 5 }));
    gate.resolve();
    await held;
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(durable.committedTurn).toBe(10_001);
    await server.dispose();
  }, 60_000);

  test('a signal that is not an AbortSignal is a TypeError naming the option', async () => {
    const { server, durable } = await opened();
    let runs = 0;
    for (const signal of [{}, 'abort', null, 5, { aborted: false, addEventListener() {} }]) {
      const err = await rejection(durable.turn(() => void runs++, { signal } as never));
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toMatch(/durableSession\.turn\(fn, options\) on session ".*": options\.signal must be an AbortSignal/);
    }
    expect(runs).toBe(0);
    await server.dispose();
  });
});

const dir = mkdtempSync(join(tmpdir(), 'polestar-turn-signal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('turn(fn, { signal }) and cancelTurn on the SQLite store', () => {
  const stores: SqliteSessionStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
  });
  let k = 0;
  abortFlow(() => {
    const s = new SqliteSessionStore({ path: join(dir, `signal-${++k}.db`) });
    stores.push(s);
    return s;
  });
});

const target = await pgTarget();

describePg(target)('turn(fn, { signal }) and cancelTurn on the PostgreSQL store', () => {
  let db: { url: string; drop(): Promise<void> } | undefined;
  const stores: PostgresSessionStore[] = [];
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'signal');
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
  });
  abortFlow(() => {
    const s = new PostgresSessionStore({ connectionString: (db as { url: string }).url, max: 3 });
    stores.push(s);
    return s;
  });
});
