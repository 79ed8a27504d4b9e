/**
 * Durable sessions on the memory store (SPEC §12.1–12.2): the plugin, the create/resume
 * transaction, turns, the durable history, serializers, events, runOneshot, list, delete.
 */
import {
  AgentError,
  Events,
  Agents,
  AgentsPlugin,
  MemorySessionStore,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  TurnLog,
  inspect,
} from '../../src/index.js';
import { delegateStore, Draft, Memory, recordEvents, serverOn, sleep } from './harness.js';

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('SessionsPlugin', () => {
  test('finish() rejects naming AgentsPlugin when it is missing', async () => {
    const server = new Server().addPlugins(new SessionsPlugin());
    await expect(server.finish()).rejects.toThrow(/SessionsPlugin needs AgentsPlugin/);
  });

  test('bad options are TypeErrors at construction', () => {
    expect(() => new SessionsPlugin({ leaseTtlMs: 0 })).toThrow(TypeError);
    expect(() => new SessionsPlugin({ unknownLocals: 'keep' as never })).toThrow(TypeError);
    expect(() => new SessionsPlugin({ serializers: [[Memory, { key: '', version: 1, scope: 'agent', serialize: () => 1, deserialize: () => 1 }]] as never })).toThrow(/key/);
    expect(() => new SessionsPlugin({ keepCheckpoints: -1 })).toThrow(TypeError);
  });

  test('ctx.get(Sessions) is a view bound to ctx; what it opens is owned by ctx', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore());
    const child = ctx.child();
    const sessions = child.get(Sessions);
    expect(sessions.context).toBe(child);
    const s = await sessions.create({ agentId: 'a1', sessionId: 's1' });
    expect(ctx.get(Sessions).get('s1')).toBe(s);
    expect(ctx.get(Agents).get('a1')).toBe(s.agent);
    await child.dispose();
    expect(s.isDisposed).toBe(true);
    expect(ctx.get(Sessions).get('s1')).toBeUndefined();
    expect(ctx.get(Agents).get('a1')).toBeUndefined();
    await server.dispose();
  });
});

describe('create, turn, resume', () => {
  test('a session created, used and resumed by another server keeps its history, locals and turn number', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    const s = await a.ctx.get(Sessions).create({ agentId: 'support:1', sessionId: 'ticket-1', meta: { user: 1 } });
    expect(s.committedTurn).toBe(0);
    expect(s.meta).toEqual({ user: 1 });
    expect(s.agent.id).toBe('support:1');
    const r = await s.turn(async (turnCtx, session) => {
      session.history.append({ role: 'user', content: 'hello' });
      turnCtx.get(Memory).count = 5;
      session.ctx.get(Draft).text = 'draft';
      turnCtx.get(TurnLog).record('usage', { tokens: 3 });
      return 'ok';
    });
    expect(r).toBe('ok');
    expect(s.committedTurn).toBe(1);
    await s.close();
    expect(s.isDisposed).toBe(true);

    const b = await serverOn(store);
    const again = await b.ctx.get(Sessions).resume({ agentId: 'support:1', sessionId: 'ticket-1' });
    expect(again.committedTurn).toBe(1);
    expect(again.meta).toEqual({ user: 1 });
    expect(again.session.history.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(again.agent.ctx.get(Memory).count).toBe(5);
    expect(again.session.ctx.get(Draft).text).toBe('draft');
    expect(again.interruptedTurns).toEqual([]);
    const events = await collect(b.ctx.get(Sessions).events('ticket-1'));
    expect(events.map((e) => [e.turn, e.kind, e.status])).toEqual([
      [1, 'history/append', 'committed'],
      [1, 'usage', 'committed'],
    ]);
    await a.server.dispose();
    await b.server.dispose();
  });

  test('replace (compaction) is replayed in order by resume', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await s.turn((_c, session) => {
      session.history.append({ role: 'user', content: '1' });
      session.history.append({ role: 'assistant', content: '2' });
      session.history.append({ role: 'user', content: '3' });
    });
    await s.turn((_c, session) => {
      session.history.replace(0, 2, [{ role: 'system', content: 'summary' }]);
    });
    const expected = s.session.history.messages;
    await s.close();
    const again = await a.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(again.session.history.messages).toEqual(expected);
    expect(expected).toEqual([{ role: 'system', content: 'summary' }, { role: 'user', content: '3' }]);
    await a.server.dispose();
  });

  test('the history changes only inside turn(): outside it append/replace throw a TypeError and change nothing', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore());
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    expect(() => s.session.history.append({ role: 'user', content: 'x' })).toThrow(TypeError);
    expect(() => s.session.history.append({ role: 'user', content: 'x' })).toThrow('a durable history changes only inside turn()');
    expect(() => s.session.history.replace(0, 0, [])).toThrow('a durable history changes only inside turn()');
    let late: (() => void) | undefined;
    await s.turn((_c, session) => {
      late = () => session.history.append({ role: 'user', content: 'late' });
    });
    expect(late).toThrow('a durable history changes only inside turn()');
    expect(s.session.history.length).toBe(0);
    await server.dispose();
  });

  test('one turn at a time: a concurrent turn is SESSION_BUSY; the next one after it works', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore());
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    let release: (() => void) | undefined;
    const first = s.turn(() => new Promise<void>((r) => (release = r)));
    await expect(s.turn(() => 1)).rejects.toMatchObject({ code: 'SESSION_BUSY', sessionId: 's' });
    while (release === undefined) await new Promise((r) => setImmediate(r));
    release();
    await first;
    await expect(s.turn(() => 2)).resolves.toBe(2);
    expect(s.committedTurn).toBe(2);
    await server.dispose();
  });

  test('a failing turn writes an aborted record, restores history and locals, and the next turn reuses its number', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await s.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: 'one' });
      turnCtx.get(Memory).count = 1;
    });
    const boom = new Error('boom');
    await expect(
      s.turn((turnCtx, session) => {
        session.history.append({ role: 'user', content: 'two' });
        turnCtx.get(Memory).count = 99;
        turnCtx.get(TurnLog).record('note', 'before the failure');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(s.committedTurn).toBe(1);
    expect(s.session.history.messages).toEqual([{ role: 'user', content: 'one' }]);
    expect(s.agent.ctx.get(Memory).count).toBe(1);
    await s.turn((_c, session) => void session.history.append({ role: 'user', content: 'three' }));
    expect(s.committedTurn).toBe(2);
    const events = await collect(ctx.get(Sessions).events('s'));
    expect(events.map((e) => [e.turn, e.kind, e.status])).toEqual([
      [1, 'history/append', 'committed'],
      [2, 'note', 'aborted'],
      [2, 'history/append', 'committed'],
    ]);
    await server.dispose();
  });

  test('a failed turn that compacted and appended, or whose commit failed, puts back exactly the committed messages; arrays read earlier never change', async () => {
    const inner = new MemorySessionStore();
    let failCommit = false;
    const store = delegateStore(inner, {
      commit: (lease, input) => (failCommit ? Promise.reject(new SessionError('STORE_ERROR', 'store error: commit refused by the test')) : inner.commit(lease, input)),
    });
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    const say = (content: string) => ({ role: 'user' as const, content });
    await s.turn((_c, session) => {
      for (const c of ['one', 'two', 'three']) session.history.append(say(c));
    });
    const committed = s.session.history.messages;
    let during: readonly unknown[] = [];
    const boom = new Error('boom');
    await expect(
      s.turn((_c, session) => {
        session.history.replace(0, 2, [say('summary')]); // below the committed point
        session.history.append(say('four'));
        during = session.history.messages;
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(s.session.history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three']);
    expect(committed.map((m) => m.content)).toEqual(['one', 'two', 'three']);
    expect(during.map((m) => (m as { content: string }).content)).toEqual(['summary', 'three', 'four']);
    await expect(s.turn((_c, session) => void session.history.append(say('four')))).resolves.toBeUndefined();
    expect(s.session.history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three', 'four']);
    failCommit = true;
    await expect(
      s.turn((_c, session) => {
        session.history.append(say('five'));
        session.history.append(say('six'));
      }),
    ).rejects.toMatchObject({ code: 'STORE_ERROR' });
    failCommit = false;
    expect(s.committedTurn).toBe(2);
    expect(s.session.history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three', 'four']);
    await s.turn((_c, session) => void session.history.append(say('five')));
    await s.close();
    const again = await ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three', 'four', 'five']);
    expect(Object.isFrozen(again.session.history.messages)).toBe(true);
    expect(committed.map((m) => m.content)).toEqual(['one', 'two', 'three']);
    await server.dispose();
  });

  test('a compaction holding 150,000 messages commits and is replayed by resume (no spread into a call)', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    const many = Array.from({ length: 150_000 }, (_, i) => ({ role: 'user' as const, content: `m${i}` }));
    await s.turn((_c, session) => {
      session.history.append({ role: 'user', content: 'first' });
      session.history.append({ role: 'user', content: 'last' });
      session.history.replace(1, 1, many);
    });
    await s.close();
    const again = await ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    const h = again.session.history;
    expect(h.length).toBe(150_002);
    expect([h.messages[0].content, h.messages[1].content, h.messages[150_000].content, h.messages[150_001].content]).toEqual(['first', 'm0', 'm149999', 'last']);
    await server.dispose();
  });

  test('a throwing serializer is SERIALIZE_FAILED: nothing committed, memory restored, the next turn works', async () => {
    let fail = false;
    const store = new MemorySessionStore();
    const server = new Server();
    server.registerLocal(Memory, { per: 'agent' });
    server.addPlugins(
      new AgentsPlugin(),
      new SessionsPlugin({
        store,
        serializers: [[Memory, { key: 'm', version: 1, scope: 'agent', serialize: (m: Memory) => { if (fail) throw new Error('nope'); return m.count; }, deserialize: (d) => Object.assign(new Memory(), { count: d as number }) }]],
      }),
    );
    await server.finish();
    const s = await server.createContext().get(Sessions).create({ agentId: 'a', sessionId: 's' });
    fail = true;
    const err = await s.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: 'x' });
      turnCtx.get(Memory).count = 7;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionError);
    expect(err).toMatchObject({ code: 'SERIALIZE_FAILED', sessionId: 's' });
    expect((err as Error).message).toMatch(/"m"/);
    expect(s.session.history.length).toBe(0);
    expect(s.agent.ctx.get(Memory).count).toBe(0);
    expect((await store.load('s')).info.committedTurn).toBe(0);
    fail = false;
    await s.turn((turnCtx) => void (turnCtx.get(Memory).count = 2));
    expect((await store.load('s')).checkpoint.locals).toEqual([{ key: 'm', scope: 'agent', version: 1, data: 2 }]);
    await server.dispose();
  });

  test('a restored local replaces the per instance before setup runs, so setup sees the restored one', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await s.turn((c) => void (c.get(Memory).count = 3));
    await s.close();
    let made: Memory | undefined;
    const again = await a.ctx.get(Sessions).resume({
      agentId: 'a',
      sessionId: 's',
      setup: (agentCtx) => {
        made = agentCtx.get(Memory);
      },
    });
    expect(made).toBeInstanceOf(Memory);
    expect(made?.disposed).toBe(false);
    expect(again.agent.ctx.get(Memory)).toBe(made);
    expect(again.agent.ctx.get(Memory).count).toBe(3);
    await a.server.dispose();
  });
});

describe('the create/resume transaction', () => {
  test('create of a stored id is SESSION_ALREADY_EXISTS; a live id in this process is SESSION_BUSY, before any await', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore());
    const sessions = ctx.get(Sessions);
    const first = sessions.create({ agentId: 'a', sessionId: 's' });
    const second = sessions.create({ agentId: 'b', sessionId: 's' });
    await expect(second).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    const s = await first;
    await s.close();
    await expect(sessions.create({ agentId: 'a', sessionId: 's' })).rejects.toMatchObject({ code: 'SESSION_ALREADY_EXISTS' });
    expect(ctx.get(Agents).get('a')).toBeUndefined();
    await server.dispose();
  });

  test('a failing setup rejects with the AgentError, leaves no row, frees both ids', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const sessions = ctx.get(Sessions);
    const err = await sessions.create({ agentId: 'a', sessionId: 's', setup: () => { throw new Error('setup broke'); } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    await expect(store.load('s')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    const s = await sessions.create({ agentId: 'a', sessionId: 's' });
    expect(s.committedTurn).toBe(0);
    await server.dispose();
  });

  test('a throwing session/created listener rolls the create back: no row, nothing published', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const sessions = ctx.get(Sessions);
    await expect(
      sessions.create({ agentId: 'a', sessionId: 's', setup: (agentCtx) => void agentCtx.get(Events).on('session/created', () => { throw new Error('no'); }) }),
    ).rejects.toThrow('no');
    await expect(store.load('s')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(sessions.get('s')).toBeUndefined();
    expect(ctx.get(Agents).get('a')).toBeUndefined();
    await server.dispose();
  });

  test('resume with another agent id is AGENT_MISMATCH; the lease and both ids are free again', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const sessions = ctx.get(Sessions);
    await (await sessions.create({ agentId: 'a', sessionId: 's' })).close();
    const err = await sessions.resume({ agentId: 'b', sessionId: 's' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_MISMATCH', sessionId: 's' });
    expect((err as Error).message).toMatch(/agent "a"/);
    expect(ctx.get(Agents).get('b')).toBeUndefined();
    expect((await store.load('s')).info.lease).toBeUndefined();
    await expect(sessions.resume({ agentId: 'a', sessionId: 's' })).resolves.toBeDefined();
    await server.dispose();
  });

  test('resume of a session leased by another server is SESSION_BUSY naming the holder and the time left', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    const b = await serverOn(store);
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    const err = (await b.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' }).catch((e: unknown) => e)) as SessionError;
    expect(err).toMatchObject({ code: 'SESSION_BUSY' });
    expect(err.holder?.owner).toBe(inspect(s.agent.ctx).agent?.lease?.owner);
    expect(err.message).toMatch(/left/);
    expect(b.ctx.get(Agents).get('a')).toBeUndefined();
    await a.server.dispose();
    await expect(b.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' })).resolves.toBeDefined();
    await b.server.dispose();
  });

  test('a throwing deserializer is DESERIALIZE_FAILED; an unknown local is UNKNOWN_LOCAL unless dropped', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    await (await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' })).close();
    await a.server.dispose();

    const broken = new Server();
    broken.addPlugins(
      new AgentsPlugin(),
      new SessionsPlugin({ store, serializers: [[Memory, { key: 'test.memory', version: 1, scope: 'agent', serialize: () => 0, deserialize: () => { throw new Error('garbage'); } }]], unknownLocals: 'drop' }),
    );
    await broken.finish();
    const bctx = broken.createContext();
    await expect(bctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' })).rejects.toMatchObject({ code: 'DESERIALIZE_FAILED' });
    expect((await store.load('s')).info.lease).toBeUndefined();

    const bare = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store }));
    await bare.finish();
    await expect(bare.createContext().get(Sessions).resume({ agentId: 'a', sessionId: 's' })).rejects.toMatchObject({ code: 'UNKNOWN_LOCAL' });
    const dropping = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, unknownLocals: 'drop' }));
    await dropping.finish();
    await expect(dropping.createContext().get(Sessions).resume({ agentId: 'a', sessionId: 's' })).resolves.toBeDefined();
    await Promise.all([broken.dispose(), bare.dispose(), dropping.dispose()]);
  });

  test('owner disposed while the lease is being acquired: rejects, and the late lease is released at once', async () => {
    const inner = new MemorySessionStore();
    let gate: (() => void) | undefined;
    let gated = true;
    const store = delegateStore(inner, {
      acquire: async (id, o) => {
        if (gated) await new Promise<void>((r) => (gate = r));
        return inner.acquire(id, o);
      },
    });
    const a = await serverOn(inner);
    await (await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' })).close();
    const b = await serverOn(store);
    const owner = b.ctx.child();
    const p = owner.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    await sleep(5);
    await owner.dispose();
    await expect(p).rejects.toBeInstanceOf(AgentError);
    gated = false;
    gate?.();
    await sleep(10);
    expect((await inner.load('s')).info.lease).toBeUndefined();
    await expect(b.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' })).resolves.toBeDefined();
    await a.server.dispose();
    await b.server.dispose();
  });

  test('every method rejects, never throws synchronously', async () => {
    const { server, ctx } = await serverOn(new MemorySessionStore());
    const sessions = ctx.get(Sessions);
    const calls = [
      () => sessions.create(null as never),
      () => sessions.resume({ agentId: '', sessionId: 's' }),
      () => sessions.runOneshot({ fn: 5 as never }),
      () => sessions.delete(7 as never),
      () => sessions.list({ limit: -1 }),
    ];
    for (const call of calls) {
      let p: Promise<unknown> | undefined;
      expect(() => (p = call())).not.toThrow();
      await expect(p).rejects.toBeInstanceOf(TypeError);
    }
    const s = await sessions.create({ agentId: 'a', sessionId: 's' });
    let p: Promise<unknown> | undefined;
    expect(() => (p = s.turn(5 as never))).not.toThrow();
    await expect(p).rejects.toBeInstanceOf(TypeError);
    await server.dispose();
  });
});

describe('events', () => {
  test('session/* events carry one frozen { sessionId, agentId, turn } and are scoped to the agent', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const heard = recordEvents(ctx);
    const scoped: string[] = [];
    const s = await ctx.get(Sessions).create({
      agentId: 'a',
      sessionId: 's',
      setup: (agentCtx) => void agentCtx.get(Events).on('session/turn-committed', () => void scoped.push('a')),
    });
    const other = await ctx.get(Sessions).create({ agentId: 'b', sessionId: 't' });
    await s.turn(() => undefined);
    await other.turn(() => undefined);
    await s.close();
    const again = await ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    await again.dispose();
    expect(scoped).toEqual(['a']);
    const forS = heard.filter((e) => e.payload.sessionId === 's');
    expect(forS.map((e) => [e.name, e.payload.turn])).toEqual([
      ['session/created', 0],
      ['session/turn-committed', 1],
      ['session/disposed', 1],
      ['session/resumed', 1],
      ['session/disposed', 1],
    ]);
    for (const e of forS) {
      expect(Object.isFrozen(e.payload)).toBe(true);
      expect(Object.keys(e.payload).sort()).toEqual(['agentId', 'sessionId', 'turn']);
      expect(e.payload.agentId).toBe('a');
    }
    await server.dispose();
  });
});

describe('runOneshot, list, delete', () => {
  test('runOneshot runs one turn, deletes the session and disposes the agent, also when fn throws', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const sessions = ctx.get(Sessions);
    const { result, sessionId } = await sessions.runOneshot({ fn: (_c, session) => { session.history.append({ role: 'user', content: 'q' }); return 42; } });
    expect(result).toBe(42);
    await expect(store.load(sessionId)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    expect(ctx.get(Agents).list()).toEqual([]);
    const boom = new Error('boom');
    await expect(sessions.runOneshot({ fn: () => { throw boom; } })).rejects.toBe(boom);
    expect((await sessions.list()).items).toEqual([]);
    expect(ctx.get(Agents).list()).toEqual([]);
    const kept = await sessions.runOneshot({ fn: () => 'x', preserve: true });
    expect((await store.load(kept.sessionId)).info.committedTurn).toBe(1);
    expect(sessions.get(kept.sessionId)).toBeUndefined();
    await server.dispose();
  });

  test('list pages by id and filters by agent; delete refuses another owner\'s live lease unless force', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store);
    const b = await serverOn(store);
    for (const [agentId, sessionId] of [['x', 's1'], ['y', 's2'], ['x2', 's3']]) {
      await (await a.ctx.get(Sessions).create({ agentId, sessionId, meta: { agentId } })).close();
    }
    const page = await a.ctx.get(Sessions).list({ limit: 2 });
    expect(page.items.map((i) => i.sessionId)).toEqual(['s1', 's2']);
    const next = await a.ctx.get(Sessions).list({ limit: 2, cursor: page.cursor });
    expect(next.items.map((i) => [i.sessionId, i.agentId, i.committedTurn, i.meta])).toEqual([['s3', 'x2', 0, { agentId: 'x2' }]]);
    expect((await a.ctx.get(Sessions).list({ agentId: 'y' })).items.map((i) => i.sessionId)).toEqual(['s2']);

    const live = await a.ctx.get(Sessions).resume({ agentId: 'x', sessionId: 's1' });
    await expect(b.ctx.get(Sessions).delete('s1')).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    await expect(a.ctx.get(Sessions).delete('s1')).resolves.toBe(true); // live here: disposed first
    expect(live.isDisposed).toBe(true);
    const other = await a.ctx.get(Sessions).resume({ agentId: 'y', sessionId: 's2' });
    await expect(b.ctx.get(Sessions).delete('s2', { force: true })).resolves.toBe(true);
    await expect(other.turn(() => undefined)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    await expect(b.ctx.get(Sessions).delete('nope')).resolves.toBe(false);
    await a.server.dispose();
    await b.server.dispose();
  });
});
