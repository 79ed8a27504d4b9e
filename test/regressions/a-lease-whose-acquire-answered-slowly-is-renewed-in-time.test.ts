/**
 * Bug: the lease's renewal clock started when `acquire` (or `create`) answered, not when it
 * was sent, and the first renewal came a full `leaseTtlMs / 3` after that. The store counts
 * the lease's life from when it took it, so a slow answer (up to storeTimeoutMs) ate into
 * it: with an acquire answering after 500 ms and leaseTtlMs 600, the first renewal was sent
 * at 700 ms, after the lease had expired, and an idle resumed session lost its lease.
 * Fixed: the renewal clock starts before the call is sent, and a lease already due for a
 * renewal when the session adopts it is renewed at once.
 */
import { MemorySessionStore, Sessions } from '../../src/index.js';
import { serverOn, sleep } from '../sessions/harness.js';
import { faultyStore } from '../sessions/faulty-store.js';

test('a resumed session whose acquire answered after most of the TTL keeps its lease', async () => {
  const inner = new MemorySessionStore();
  let slow = false;
  const store = faultyStore(inner, {
    acquire: async (real, ...args) => {
      const lease = await real(...args);
      if (slow) await sleep(450); // the reply is slow: the store took the lease 450 ms ago
      return lease;
    },
  });
  const { server, ctx } = await serverOn(store, { leaseTtlMs: 600, storeTimeoutMs: 2_000 });
  const sessions = ctx.get(Sessions);
  const created = await sessions.create({ agentId: 'a', sessionId: 's' });
  await created.close();
  slow = true;
  const s = await sessions.resume({ agentId: 'a', sessionId: 's' });
  slow = false;
  await sleep(400); // past the lease's first TTL counted from the store's acquisition
  expect(s.isDisposed).toBe(false);
  await expect(s.turn((_c, session) => void session.history.append({ role: 'user', content: 'still mine' }))).resolves.toBeUndefined();
  await server.dispose();
});
