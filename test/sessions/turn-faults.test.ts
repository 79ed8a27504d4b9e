/**
 * The turn path under store faults (SPEC 13.1, "Outcomes that are unknown"): bounded store
 * calls, a commit whose outcome is unknown (found out, or pending as COMMIT_UNKNOWN), a
 * flush whose outcome is unknown, and a lease lost while a commit's outcome is found out.
 */
import { MemorySessionStore, SessionError, Sessions, TurnLog, type SessionStore } from '../../src/index.js';
import { Memory, recordEvents, serverOn, sleep } from './harness.js';
import { faultyStore, lostReply, never } from './faulty-store.js';

const say = (content: string) => ({ role: 'user' as const, content });
const contents = (s: { session: { history: { messages: readonly { content?: unknown }[] } } }) => s.session.history.messages.map((m) => m.content);

/** A store whose commits and status reads can be made to fail, switched by the test. */
function switchable(inner: SessionStore, options: { attemptStatus?: boolean } = {}) {
  const mode = { commit: 'ok' as 'ok' | 'lose-reply' | 'lose-request' | 'hang', down: false };
  const faults: Parameters<typeof faultyStore>[1] = {
    commit: async (real, ...args) => {
      const m = mode.commit;
      mode.commit = 'ok';
      if (m === 'hang') return never();
      if (m === 'lose-request' || (m === 'ok' && mode.down)) throw lostReply('commit');
      const result = await real(...args);
      if (m === 'lose-reply') throw lostReply('commit');
      return result;
    },
  };
  if (options.attemptStatus !== false) {
    faults.attemptStatus = async (real, ...args) => {
      if (mode.down) throw new SessionError('STORE_ERROR', 'store error: connection refused (the test took the store down)');
      return real(...args);
    };
  }
  let store = faultyStore(inner, faults);
  if (options.attemptStatus === false) {
    // A store written before attemptStatus existed.
    const without = store;
    store = new Proxy(without, { get: (t, k) => (k === 'attemptStatus' ? undefined : Reflect.get(t, k)) });
  }
  return { store, mode };
}

describe('bounded store calls', () => {
  test('a call that never answers rejects after storeTimeoutMs with STORE_ERROR naming the call and what to do', async () => {
    const inner = new MemorySessionStore();
    const { server, ctx } = await serverOn(faultyStore(inner, { list: () => never() }), { storeTimeoutMs: 40 });
    const err = await ctx.get(Sessions).list().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORE_ERROR', message: /store\.list\(\) did not answer within 40 ms.*Raise storeTimeoutMs or check the store/ });
    await server.dispose();
  });

  test('calls of one store share the bound: each call that never answers times out a full storeTimeoutMs after it was made, while the others go on', async () => {
    const inner = new MemorySessionStore();
    let hang = false;
    const { server, ctx } = await serverOn(faultyStore(inner, { list: (real, ...args) => (hang ? never() : real(...args)) }), { storeTimeoutMs: 150 });
    const sessions = ctx.get(Sessions);
    const s = await sessions.create({ agentId: 'a', sessionId: 's' });
    await s.turn((_c, session) => void session.history.append(say('before')));
    await sleep(80); // the bound of the calls above has not passed yet
    hang = true;
    const started = performance.now();
    const first = sessions.list().catch((e: unknown) => e);
    await sleep(50);
    const second = sessions.list().catch((e: unknown) => e);
    for (let i = 0; i < 5; i++) await s.turn((_c, session) => void session.history.append(say(`during ${i}`)));
    const [a, b] = await Promise.all([first.then((e) => [e, performance.now() - started] as const), second.then((e) => [e, performance.now() - started] as const)]);
    expect(a[0]).toMatchObject({ code: 'STORE_ERROR', message: /store\.list\(\) did not answer within 150 ms/ });
    expect(b[0]).toMatchObject({ code: 'STORE_ERROR', message: /store\.list\(\) did not answer within 150 ms/ });
    expect(a[1]).toBeGreaterThanOrEqual(145);
    expect(b[1]).toBeGreaterThanOrEqual(195);
    expect(s.committedTurn).toBe(6);
    await server.dispose();
  });

  test('a commit that never answers and was not applied: the turn rejects STORE_ERROR, the session is restored, the next commit reuses the number', async () => {
    const inner = new MemorySessionStore();
    const { store, mode } = switchable(inner);
    const { server, ctx } = await serverOn(store, { storeTimeoutMs: 50 });
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    mode.commit = 'hang';
    const err = await s
      .turn((turnCtx, session) => {
        session.history.append(say('lost'));
        turnCtx.get(Memory).count += 1;
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORE_ERROR', sessionId: 's', message: /turn 1 of session "s" was not committed.*still open.*Retry the turn/ });
    expect(s.committedTurn).toBe(0);
    expect(contents(s)).toEqual([]);
    expect(s.agent.ctx.get(Memory).count).toBe(0);
    await s.turn((_c, session) => void session.history.append(say('kept')));
    expect(s.committedTurn).toBe(1);
    const loaded = await inner.load('s');
    expect(loaded.info.committedTurn).toBe(1);
    expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['kept']);
    await server.dispose();
  });
});

describe('a commit whose outcome stays unknown: COMMIT_UNKNOWN and resolvePending()', () => {
  test('committed: COMMIT_UNKNOWN while the store is down, nothing runs meanwhile, resolvePending() then advances the session', async () => {
    const inner = new MemorySessionStore();
    const { store, mode } = switchable(inner);
    const { server, ctx } = await serverOn(store, { storeTimeoutMs: 60 });
    const events = recordEvents(ctx);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    mode.commit = 'lose-reply';
    const turn = s.turn((turnCtx, session) => {
      session.history.append(say('applied'));
      turnCtx.get(Memory).count = 7;
      mode.down = true; // the store goes away with the commit's reply
    });
    const err = (await turn.catch((e: unknown) => e)) as SessionError;
    expect(err).toMatchObject({ code: 'COMMIT_UNKNOWN', sessionId: 's', turn: 1, attempt: 1 });
    expect(err.message).toMatch(/resolvePending\(\)/);
    expect(s.committedTurn).toBe(0);
    // Kept as the turn left them while pending.
    expect(contents(s)).toEqual(['applied']);
    let ran = false;
    await expect(s.turn(() => void (ran = true))).rejects.toMatchObject({ code: 'COMMIT_UNKNOWN', turn: 1 });
    await expect(s.rollback(0)).rejects.toMatchObject({ code: 'COMMIT_UNKNOWN' });
    await expect(s.resolvePending()).rejects.toMatchObject({ code: 'COMMIT_UNKNOWN' });
    expect(ran).toBe(false);
    mode.down = false;
    await expect(s.resolvePending()).resolves.toBe('committed');
    expect(s.committedTurn).toBe(1);
    expect(s.agent.ctx.get(Memory).count).toBe(7);
    expect(events.filter((e) => e.name === 'session/turn-committed').map((e) => e.payload.turn)).toEqual([1]);
    await expect(s.resolvePending()).resolves.toBe('committed');
    await s.turn((_c, session) => void session.history.append(say('next')));
    expect(s.committedTurn).toBe(2);
    await s.close();
    const again = await ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(contents(again)).toEqual(['applied', 'next']);
    expect(again.agent.ctx.get(Memory).count).toBe(7);
    await server.dispose();
  });

  test('not committed: the next turn finds it out, restores the session as after a failed turn, then runs', async () => {
    const inner = new MemorySessionStore();
    const { store, mode } = switchable(inner);
    const { server, ctx } = await serverOn(store, { storeTimeoutMs: 60 });
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await s.turn((_c, session) => void session.history.append(say('one')));
    mode.commit = 'lose-request';
    mode.down = true;
    await expect(s.turn((_c, session) => void session.history.append(say('never stored')))).rejects.toMatchObject({ code: 'COMMIT_UNKNOWN', turn: 2 });
    expect(contents(s)).toEqual(['one', 'never stored']);
    mode.down = false;
    await expect(s.turn((_c, session) => void session.history.append(say('two')))).resolves.toBeUndefined();
    expect(s.committedTurn).toBe(2);
    expect(contents(s)).toEqual(['one', 'two']);
    await expect(s.resolvePending()).resolves.toBe('not-committed');
    const loaded = await inner.load('s');
    expect(loaded.open).toBeUndefined();
    expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['one', 'two']);
    await server.dispose();
  });

  test('resolvePending() on a not-committed turn restores the history and locals', async () => {
    const inner = new MemorySessionStore();
    const { store, mode } = switchable(inner);
    const { server, ctx } = await serverOn(store, { storeTimeoutMs: 60 });
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    mode.commit = 'lose-request';
    mode.down = true;
    await expect(
      s.turn((turnCtx, session) => {
        session.history.append(say('x'));
        turnCtx.get(Memory).count = 3;
      }),
    ).rejects.toMatchObject({ code: 'COMMIT_UNKNOWN' });
    mode.down = false;
    await expect(s.resolvePending()).resolves.toBe('not-committed');
    expect(contents(s)).toEqual([]);
    expect(s.agent.ctx.get(Memory).count).toBe(0);
    expect(s.committedTurn).toBe(0);
    await server.dispose();
  });
});

describe('other unknown outcomes', () => {
  test('a rollback after a begin whose reply was lost aborts the attempt left open instead of SESSION_BUSY', async () => {
    const inner = new MemorySessionStore();
    let lose = false;
    const store = faultyStore(inner, {
      begin: async (real, ...args) => {
        const result = await real(...args);
        if (!lose) return result;
        lose = false;
        throw lostReply('begin');
      },
    });
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await s.turn((_c, session) => void session.history.append(say('one')));
    lose = true;
    await expect(s.turn(() => undefined)).rejects.toMatchObject({ code: 'STORE_ERROR', message: /did not start/ });
    expect((await inner.load('s')).open).toBeDefined();
    await s.rollback(0);
    expect(s.committedTurn).toBe(0);
    expect(contents(s)).toEqual([]);
    expect((await inner.load('s')).open).toBeUndefined();
    await s.turn((_c, session) => void session.history.append(say('again')));
    expect(s.committedTurn).toBe(1);
    await server.dispose();
  });


  test('a store without attemptStatus: the commit is repeated (idempotent) and the turn resolves once', async () => {
    const inner = new MemorySessionStore();
    const { store, mode } = switchable(inner, { attemptStatus: false });
    expect(store.attemptStatus).toBeUndefined();
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    mode.commit = 'lose-reply';
    await expect(s.turn((_c, session) => void session.history.append(say('once')))).resolves.toBeUndefined();
    expect(s.committedTurn).toBe(1);
    expect((await inner.load('s')).history.map((e) => (e.body as { content: string }).content)).toEqual(['once']);
    mode.commit = 'lose-request';
    await expect(s.turn((_c, session) => void session.history.append(say('twice')))).resolves.toBeUndefined();
    expect((await inner.load('s')).history.map((e) => (e.body as { content: string }).content)).toEqual(['once', 'twice']);
    await server.dispose();
  });

  test('a flush whose reply was lost: the turn can not commit (its events would be stored twice) and rejects STORE_ERROR', async () => {
    const inner = new MemorySessionStore();
    let lose = true;
    const store = faultyStore(inner, {
      append: async (real, ...args) => {
        await real(...args);
        if (lose) {
          lose = false;
          throw lostReply('append');
        }
      },
    });
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    let flushError: unknown;
    const err = await s
      .turn(async (turnCtx, session) => {
        session.history.append(say('flushed'));
        turnCtx.get(TurnLog).record('tool/result', 1);
        await turnCtx.get(TurnLog).flush().catch((e: unknown) => (flushError = e));
      })
      .catch((e: unknown) => e);
    expect(flushError).toMatchObject({ code: 'STORE_ERROR', message: /TurnLog\.flush\(\).*store\.append\(\)/ });
    expect(err).toMatchObject({ code: 'STORE_ERROR', message: /turn 1 of session "s" was not committed: a TurnLog\.flush\(\)/ });
    expect(s.committedTurn).toBe(0);
    await s.turn((_c, session) => void session.history.append(say('after')));
    const loaded = await inner.load('s');
    expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['after']);
    await server.dispose();
  });

  test('a lease lost while the outcome is found out: the committed turn resolves, then session/lease-lost and disposal follow', async () => {
    let clock = 1_000_000;
    const inner = new MemorySessionStore({ now: () => clock });
    const order: string[] = [];
    let loseReply = false;
    const store = faultyStore(inner, {
      commit: async (real, ...args) => {
        const result = await real(...args);
        if (!loseReply) return result;
        loseReply = false;
        throw lostReply('commit');
      },
      attemptStatus: async (real, ...args) => {
        clock += 60_000; // the lease expires on the store's clock...
        await sleep(40); // ...and the renewal timer sees it while the status is read
        return real(...args);
      },
    });
    const { server, ctx } = await serverOn(store, { leaseTtlMs: 30, storeTimeoutMs: 2_000 });
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    const events = recordEvents(ctx);
    loseReply = true;
    const value = await s.turn((_c, session) => {
      session.history.append(say('kept'));
      return 'done';
    });
    order.push(`resolved:${String(s.isDisposed)}`);
    expect(value).toBe('done');
    expect(s.committedTurn).toBe(1);
    for (let i = 0; i < 50 && !s.isDisposed; i++) await sleep(5);
    expect(s.isDisposed).toBe(true);
    expect(order).toEqual(['resolved:false']);
    expect(events.map((e) => e.name)).toEqual(expect.arrayContaining(['session/turn-committed', 'session/lease-lost', 'session/disposed']));
    expect(events.findIndex((e) => e.name === 'session/turn-committed')).toBeLessThan(events.findIndex((e) => e.name === 'session/lease-lost'));
    expect((await inner.load('s')).info.committedTurn).toBe(1);
    await server.dispose();
  });
});

describe('a resolution in progress', () => {
  test('a turn started while resolvePending() is still putting the session back waits for it, then commits as the same turn', async () => {
    const inner = new MemorySessionStore();
    const armed = { loseCommit: false, down: false, slowAbort: false };
    let abortReached!: () => void;
    const aborting = new Promise<void>((r) => (abortReached = r));
    let openAbort!: () => void;
    const abortGate = new Promise<void>((r) => (openAbort = r));
    const store = faultyStore(inner, {
      commit: async (real, ...args) => {
        if (!armed.loseCommit) return real(...args);
        armed.loseCommit = false;
        throw lostReply('commit'); // the request was lost: not applied
      },
      attemptStatus: async (real, ...args) => {
        if (armed.down) throw new SessionError('STORE_ERROR', 'store error: connection refused (the test took the store down)');
        return real(...args);
      },
      abort: async (real, ...args) => {
        if (armed.slowAbort) {
          armed.slowAbort = false;
          abortReached();
          await abortGate;
        }
        return real(...args);
      },
    });
    const { server, ctx } = await serverOn(store, { storeTimeoutMs: 60 });
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    armed.loseCommit = true;
    armed.down = true;
    await expect(
      s.turn((turnCtx, session) => {
        session.history.append(say('lost'));
        turnCtx.get(Memory).count = 5;
      }),
    ).rejects.toMatchObject({ code: 'COMMIT_UNKNOWN', turn: 1 });
    armed.down = false;
    armed.slowAbort = true;
    const resolving = s.resolvePending();
    await aborting; // found not applied; the attempt it left open is being aborted
    const next = s.turn((turnCtx, session) => {
      session.history.append(say('next'));
      turnCtx.get(Memory).count += 1;
    });
    openAbort();
    await expect(resolving).resolves.toBe('not-committed');
    await expect(next).resolves.toBeUndefined();
    expect(s.committedTurn).toBe(1);
    expect(contents(s)).toEqual(['next']);
    expect(s.agent.ctx.get(Memory).count).toBe(1);
    const loaded = await inner.load('s');
    expect(loaded.info.committedTurn).toBe(1);
    expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['next']);
    await server.dispose();
  });
});
