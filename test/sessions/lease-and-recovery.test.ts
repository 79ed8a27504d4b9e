/**
 * Leases and crash recovery on the memory store (SPEC §12.2): renewal, LEASE_LOST with
 * session/lease-lost and disposal, fenced turns, interrupted turns and the `interrupted`
 * handler.
 */
import { MemorySessionStore, Sessions, TurnLog, type ChatMessage, type InterruptedTurn } from '../../src/index.js';
import type { Lease } from '../../src/sessions.js';
import { delegateStore, recordEvents, serverOn, sleep } from './harness.js';

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('leases', () => {
  test('an idle session keeps its lease by renewal well past the TTL', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store, { leaseTtlMs: 90 });
    const b = await serverOn(store, { leaseTtlMs: 90 });
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await sleep(300);
    await expect(b.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    await expect(s.turn(() => 1)).resolves.toBe(1);
    await a.server.dispose();
    await b.server.dispose();
  });

  test('a lost lease emits session/lease-lost with the error, disposes the session, and its turn in flight can not commit', async () => {
    let now = 1_000_000;
    const store = new MemorySessionStore({ now: () => now });
    const a = await serverOn(store, { leaseTtlMs: 60 });
    const heard = recordEvents(a.ctx);
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const turn = s.turn(async (turnCtx, session) => {
      session.history.append({ role: 'user', content: 'lost' });
      started();
      await new Promise<void>((resolve) => turnCtx.signal.addEventListener('abort', () => ((aborted = true), resolve())));
    });
    const outcome = turn.catch((e: unknown) => e);
    await running;
    now += 1000; // the lease expires on the store's clock; another owner takes it
    const b = await serverOn(store, { leaseTtlMs: 60 });
    const taken = await b.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(taken.interruptedTurns.map((t) => t.turn)).toEqual([1]);
    await sleep(60); // a renewal tick of the first owner
    expect(await outcome).toMatchObject({ code: 'LEASE_LOST' });
    expect(aborted).toBe(true);
    expect(s.isDisposed).toBe(true);
    const lost = heard.find((e) => e.name === 'session/lease-lost');
    expect(lost?.payload).toMatchObject({ sessionId: 's', agentId: 'a', turn: 0, error: { code: 'LEASE_LOST' } });
    expect(Object.isFrozen(lost?.payload)).toBe(true);
    expect(heard.map((e) => e.name)).toContain('session/disposed');
    await expect(s.turn(() => 1)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(taken.session.history.length).toBe(0);
    await a.server.dispose();
    await b.server.dispose();
  });

  test('close() refuses new turns, drains the one in flight, then releases the lease', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    let release!: () => void;
    const turn = s.turn(async (_c, session) => {
      await new Promise<void>((r) => (release = r));
      session.history.append({ role: 'user', content: 'drained' });
    });
    await sleep(5);
    const closing = s.close();
    await expect(s.turn(() => 1)).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    release();
    await turn;
    await closing;
    expect((await store.load('s')).info).toMatchObject({ committedTurn: 1, lease: undefined });
    await server.dispose();
  });

  test('dispose() with a turn in flight: the turn is not committed and the lease is released', async () => {
    const store = new MemorySessionStore();
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    let release!: () => void;
    const turn = s.turn(async (_c, session) => {
      session.history.append({ role: 'user', content: 'x' });
      await new Promise<void>((r) => (release = r));
    });
    await sleep(5);
    await s.dispose();
    release();
    await expect(turn).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    expect((await store.load('s')).info).toMatchObject({ committedTurn: 0, lease: undefined });
    await server.dispose();
  });
});

describe('crash recovery', () => {
  test('a started turn without an end is reported as interrupted, its flushed events kept as aborted, the state is the last commit', async () => {
    const store = new MemorySessionStore();
    // the first server's lease, as its store handed it out
    let taken: Lease | undefined;
    const a = await serverOn(
      delegateStore(store, {
        create: async (input) => (taken = await store.create(input)),
        acquire: async (id, options) => (taken = await store.acquire(id, options)),
      }),
    );
    const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await s.turn((_c, session) => void session.history.append({ role: 'user', content: 'one' }));
    // A "crash": the turn flushed its events and never ended; its process stops renewing.
    let flushed!: () => void;
    const done = new Promise<void>((r) => (flushed = r));
    void s.turn(async (turnCtx, session) => {
      session.history.append({ role: 'user', content: 'two' });
      turnCtx.get(TurnLog).record('tool/call', { name: 'search' });
      await turnCtx.get(TurnLog).flush();
      flushed();
      await new Promise(() => undefined);
    });
    await done;
    const lease = taken;
    if (lease === undefined) throw new Error('no lease');
    // Simulate the process dying: its lease is released without ending the attempt.
    await store.release(lease);
    const pending = await collect(a.ctx.get(Sessions).events('s'));
    expect(pending.filter((e) => e.turn === 2).map((e) => e.status)).toEqual(['pending', 'pending']);

    const seen: InterruptedTurn[] = [];
    const b = await serverOn(store, {
      interrupted: (turn, session): ChatMessage[] => {
        seen.push(turn);
        expect(session.history.length).toBe(1);
        return [{ role: 'system', content: `turn ${turn.turn} was interrupted; its tool calls may have run` }];
      },
    });
    const again = await b.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(again.interruptedTurns).toHaveLength(1);
    expect(again.interruptedTurns[0]).toMatchObject({ turn: 2 });
    expect(again.interruptedTurns[0].events.map((e) => [e.kind, e.status])).toEqual([
      ['history/append', 'aborted'],
      ['tool/call', 'aborted'],
    ]);
    expect(seen).toHaveLength(1);
    expect(again.committedTurn).toBe(2);
    expect(again.session.history.messages).toEqual([
      { role: 'user', content: 'one' },
      { role: 'system', content: 'turn 2 was interrupted; its tool calls may have run' },
    ]);
    await again.turn((_c, session) => void session.history.append({ role: 'user', content: 'three' }));
    expect(again.committedTurn).toBe(3);
    await a.server.dispose().catch(() => undefined);
    await b.server.dispose();
  });
});
