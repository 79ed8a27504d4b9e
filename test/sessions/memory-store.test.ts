/**
 * The in-memory store: the conformance suite, plus what only an injectable clock and
 * in-process objects can show.
 */
import { MemorySessionStore } from '../../src/index.js';
import { runSessionStoreConformance } from '../../src/testing/index.js';

describe('MemorySessionStore conformance', () => {
  runSessionStoreConformance(() => new MemorySessionStore(), { test, leaseTtlMs: 400 });
});

describe('MemorySessionStore', () => {
  test("a lease is live while expiresAt > now on the store's clock, to the millisecond", async () => {
    let now = 1_000_000;
    const store = new MemorySessionStore({ now: () => now });
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o1', ttlMs: 100, locals: [] });
    now += 99;
    const a = await store.begin(lease);
    await expect(store.acquire('s', { owner: 'o2', ttlMs: 100 })).rejects.toMatchObject({ code: 'SESSION_BUSY', holder: { owner: 'o1', epoch: 1, remainingMs: 1 } });
    now += 1;
    await expect(store.commit(lease, { ...a, events: [], locals: [] })).rejects.toMatchObject({ code: 'LEASE_LOST' });
    const taken = await store.acquire('s', { owner: 'o2', ttlMs: 100 });
    expect(taken.epoch).toBe(2);
    now += 50;
    await store.renew(taken);
    now += 99;
    await expect(store.renew(taken)).resolves.toBeUndefined();
    expect((await store.load('s')).info.lease).toMatchObject({ owner: 'o2', epoch: 2, remainingMs: 100 });
  });

  test('a clock that returns no number is a STORE_ERROR, not a silent expiry', async () => {
    const store = new MemorySessionStore({ now: () => NaN });
    await expect(store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 100, locals: [] })).rejects.toMatchObject({ code: 'STORE_ERROR' });
    expect(() => new MemorySessionStore({ now: 5 as never })).toThrow(TypeError);
  });

  test('stored values are detached, deep-frozen snapshots: changing the input afterwards changes nothing', async () => {
    const store = new MemorySessionStore();
    const body = { role: 'user', content: 'hi', list: [1, 2] };
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 10_000, locals: [] });
    const a = await store.begin(lease);
    await store.commit(lease, { ...a, events: [{ kind: 'history/append', body }], locals: [{ key: 'k', scope: 'agent', version: 1, data: body }] });
    body.content = 'changed';
    body.list.push(3);
    const loaded = await store.load('s');
    expect(loaded.history[0].body).toEqual({ role: 'user', content: 'hi', list: [1, 2] });
    expect(Object.isFrozen(loaded.history[0].body)).toBe(true);
    expect(Object.isFrozen(loaded.checkpoint.locals[0].data)).toBe(true);
  });

  test('store objects do not share data (the conformance suite then runs its multi-process checks across owners of one object)', async () => {
    const a = new MemorySessionStore();
    const b = new MemorySessionStore();
    await a.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 10_000, locals: [] });
    await expect(b.load('s')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    const report = await runSessionStoreConformance(() => new MemorySessionStore(), { leaseTtlMs: 200 });
    expect(report.sharedBackend).toBe(false);
    expect(report.passed.length).toBeGreaterThan(20);
  });
});

describe('MemorySessionStore wake-ups', () => {
  test("watch is in 'notify' mode and delivers wake-ups in-process, never inside the call that caused them", async () => {
    const store = new MemorySessionStore({ pollMs: 30 });
    const wakes: unknown[] = [];
    const watch = store.watch((w) => wakes.push(w));
    expect(watch.mode).toBe('notify');
    expect(watch.pollMs).toBe(30);
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'holder', ttlMs: 10_000, locals: [] });
    const asked = store.requestHandoff('s', { owner: 'waiter', until: new Date(Date.now() + 10_000) });
    expect(wakes).toEqual([]);
    await asked;
    await Promise.resolve();
    expect(wakes).toEqual([{ kind: 'handoff', sessionId: 's', owner: 'holder' }]);
    const t = await store.begin(lease);
    await store.requestCancel('s', 'stop');
    await store.commit(lease, { ...t, events: [], locals: [] });
    await store.release(lease);
    await store.delete('s');
    await new Promise((r) => setImmediate(r));
    expect(wakes.slice(1)).toEqual([
      { kind: 'cancel', sessionId: 's', owner: 'holder' },
      { kind: 'release', sessionId: 's' },
      { kind: 'release', sessionId: 's' },
    ]);
    await watch.close();
    await store.close();
  });

  test('a throwing onWake is reported through its onError and reaches neither the store call nor the other watchers', async () => {
    const store = new MemorySessionStore();
    const errors: Error[] = [];
    const seen: unknown[] = [];
    store.watch(
      () => {
        throw new Error('watcher bug');
      },
      (err) => errors.push(err),
    );
    store.watch((w) => seen.push(w));
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 10_000, locals: [] });
    await expect(store.release(lease)).resolves.toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(errors.map((e) => e.message)).toEqual(['watcher bug']);
    expect(seen).toEqual([{ kind: 'release', sessionId: 's' }]);
    await store.close();
    // after close: a subscription in poll mode, reporting the closed store
    const late: Error[] = [];
    const w = store.watch(() => undefined, (err) => late.push(err));
    expect(w.mode).toBe('poll');
    await new Promise((r) => setImmediate(r));
    expect(late[0]).toMatchObject({ code: 'STORE_ERROR' });
  });

  test('a session deleted and created again carries none of its old requests', async () => {
    const store = new MemorySessionStore();
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 10_000, locals: [] });
    await store.begin(lease);
    await store.requestCancel('s', 'stop');
    await store.requestHandoff('s', { owner: 'w', until: new Date(Date.now() + 10_000) });
    expect(await store.requests('o')).toHaveLength(2);
    await store.delete('s', { lease });
    const again = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 10_000, locals: [] });
    await store.begin(again);
    expect(await store.requests('o')).toEqual([]);
  });

  test('options.pollMs must be a finite number >= 1', () => {
    for (const bad of [0, -5, NaN, Infinity, '250', null]) expect(() => new MemorySessionStore({ pollMs: bad as never })).toThrow(/options\.pollMs/);
    expect(new MemorySessionStore().watch(() => undefined).pollMs).toBe(250);
  });
});
