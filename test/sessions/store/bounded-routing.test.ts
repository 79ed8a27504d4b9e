/**
 * The sessions plugin's bounded view of its store and the routing methods: forwarded,
 * bounded by the call timeout and traced on `polestar:store` like every other call; on a
 * store written against the older contract, refused with a TypeError (the runtime checks
 * `routes` first) and `watch` answering in poll mode.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { MemorySessionStore, POLESTAR_CHANNELS, type SessionStore } from '../../../src/index.js';
import { BoundedStore } from '../../../src/sessions/store/bounded-call.js';
import type { StoreTraceContext } from '../../../src/observability/channels.js';

const bound = (inner: SessionStore, timeoutMs = 1_000): BoundedStore => new BoundedStore(inner, { timeoutMs, incarnation: 'inc-1' });

/** The store contract without the optional routing methods (a store written before them). */
function olderStore(inner: MemorySessionStore): SessionStore {
  const methods = ['create', 'acquire', 'renew', 'release', 'begin', 'append', 'commit', 'abort', 'rollback', 'pin', 'load', 'checkpoints', 'list', 'delete', 'events', 'close'] as const;
  const out: Record<string, unknown> = {};
  for (const m of methods) out[m] = (...args: unknown[]) => (inner[m] as (...a: unknown[]) => unknown).apply(inner, args);
  return out as unknown as SessionStore;
}

test('the routing calls are forwarded, bounded and traced on polestar:store with their op and session', async () => {
  const inner = new MemorySessionStore();
  const store = bound(inner);
  expect(store.routes).toBe(true);
  const traced: { op: string; sessionId?: string; error?: unknown }[] = [];
  const channel = diagnosticsChannel.tracingChannel<unknown, StoreTraceContext>(POLESTAR_CHANNELS.store);
  const handlers = { asyncEnd: (c: StoreTraceContext) => traced.push({ op: c.op, sessionId: c.sessionId }), error: (c: StoreTraceContext) => traced.push({ op: c.op, error: c.error }) };
  channel.subscribe(handlers as never);
  try {
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'holder', ttlMs: 10_000, locals: [] });
    await expect(store.requestHandoff('s', { owner: 'waiter', until: new Date(Date.now() + 10_000) })).resolves.toBe(true);
    const t = await store.begin(lease);
    await expect(store.requestCancel('s', 'stop')).resolves.toEqual({ turn: t.turn, attempt: t.attempt });
    const requests = await store.requests('holder');
    expect(requests.map((r) => r.kind)).toEqual(['cancel', 'handoff']);
    await expect(store.requests(5 as never)).rejects.toBeInstanceOf(TypeError);
  } finally {
    channel.unsubscribe(handlers as never);
  }
  expect(traced.filter((c) => c.op.startsWith('request'))).toEqual([
    { op: 'requestHandoff', sessionId: 's' },
    { op: 'requestCancel', sessionId: 's' },
    { op: 'requests', sessionId: undefined },
    { op: 'requests', error: expect.any(TypeError) },
    { op: 'requests', sessionId: undefined }, // (a rejected call ends too)
  ]);
  const watch = store.watch(() => undefined);
  expect(watch.mode).toBe('notify');
  await watch.close();
});

test('a routing call that never answers rejects with STORE_ERROR at the bound', async () => {
  const inner = new MemorySessionStore();
  const hanging = Object.assign(olderStore(inner), {
    requestHandoff: () => new Promise<boolean>(() => undefined),
    requestCancel: () => new Promise<undefined>(() => undefined),
    requests: () => new Promise<never>(() => undefined),
  });
  const store = bound(hanging, 40);
  expect(store.routes).toBe(true);
  await expect(store.requests('o')).rejects.toMatchObject({ code: 'STORE_ERROR', message: expect.stringMatching(/store\.requests\(\) did not answer within 40 ms/) });
  await expect(store.requestCancel('s', 'x')).rejects.toMatchObject({ code: 'STORE_ERROR', sessionId: 's' });
  await expect(store.requestHandoff('s', { owner: 'w', until: new Date() })).rejects.toMatchObject({ code: 'STORE_ERROR', sessionId: 's' });
});

test('on a store without the routing methods: routes is false, the calls reject with a TypeError naming the method, and watch polls', async () => {
  const store = bound(olderStore(new MemorySessionStore()));
  expect(store.routes).toBe(false);
  await expect(store.requestHandoff('s', { owner: 'w', until: new Date() })).rejects.toThrow(/store\.requestHandoff\(\) for session "s": this store does not implement requestHandoff/);
  await expect(store.requestCancel('s', 'x')).rejects.toBeInstanceOf(TypeError);
  await expect(store.requests('o')).rejects.toBeInstanceOf(TypeError);
  const watch = store.watch(() => undefined);
  expect(watch.mode).toBe('poll');
  expect(watch.pollMs).toBe(250);
  await expect(watch.close()).resolves.toBeUndefined();
});

test("a store whose watch throws gives a subscription in poll mode, the error reported through onError; a bad callback stays a TypeError", async () => {
  const inner = new MemorySessionStore();
  const broken = Object.assign(olderStore(inner), {
    watch: () => {
      throw new Error('no notifications today');
    },
  });
  const errors: Error[] = [];
  const watch = bound(broken).watch(() => undefined, (err) => errors.push(err));
  expect(watch.mode).toBe('poll');
  await Promise.resolve();
  expect(errors.map((e) => e.message)).toEqual(['no notifications today']);
  expect(() => bound(inner).watch('nope' as never)).toThrow(TypeError);
});
