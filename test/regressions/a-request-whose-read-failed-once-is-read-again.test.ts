/**
 * Found by a fault hunt of the cross-process routing. On a store that notifies (memory,
 * PostgreSQL), a holder reads the requests addressed to it (`store.requests(owner)`) when a
 * notification wakes it, and never polls. Bug: when that one read fails (a pool connection
 * dropped, a statement timeout, a store call past `storeTimeoutMs`), the router gives up
 * "until the next wake-up or poll", and on a notifying store there is none: the cancel
 * recorded by another process, which answered `true`, never reaches the turn (SPEC 13.2).
 */
import { MemorySessionStore, SessionError, Sessions, type SessionStore } from '../../src/index.js';
import { serverOn, untilAborted, type Harness } from '../sessions/harness.js';

/** `store` whose next `requests()` fails once `failNext` is set. */
function flakyRequests(store: SessionStore): { store: SessionStore; failNext(): void; failed(): number } {
  let fail = false;
  let failed = 0;
  const proxy = new Proxy(store, {
    get(target, p) {
      const v = Reflect.get(target, p, target) as unknown;
      if (typeof v !== 'function') return v;
      if (p === 'requests') {
        return async (...args: unknown[]) => {
          if (fail) {
            fail = false;
            failed++;
            throw new SessionError('STORE_ERROR', 'store.requests(): the connection was reset (injected)', {});
          }
          return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { store: proxy, failNext: () => void (fail = true), failed: () => failed };
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.server.dispose();
});

test('a cancel whose first read by the holder failed still reaches the turn', async () => {
  const store = new MemorySessionStore();
  const flaky = flakyRequests(store);
  const a = await serverOn(flaky.store, { owner: 'a', leaseTtlMs: 10_000 });
  const b = await serverOn(store, { owner: 'b', leaseTtlMs: 10_000 });
  harnesses.push(a, b);
  const d = await a.ctx.get(Sessions).open({ agentId: 'ag', sessionId: 's' });
  let started!: () => void;
  const ready = new Promise<void>((r) => (started = r));
  const turn = d
    .turn(async (turnCtx) => {
      started();
      await untilAborted(turnCtx.signal, 5_000);
    })
    .catch((e: unknown) => e);
  await ready;
  await new Promise((r) => setTimeout(r, 20));
  flaky.failNext();
  const t0 = performance.now();
  expect(await b.ctx.get(Sessions).cancel('s', 'stop')).toBe(true);
  const err = await turn;
  expect(flaky.failed()).toBe(1);
  expect(err).toBeInstanceOf(SessionError);
  expect(err).toMatchObject({ code: 'TURN_CANCELLED', reason: 'stop' });
  expect(performance.now() - t0).toBeLessThan(2_000);
}, 10_000);
