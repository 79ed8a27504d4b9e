/**
 * Bug: on SQLite, a loop of back-to-back turns lost its own lease with no fault at all:
 * the driver resolves without yielding to the timer phase, so the renewal timer never
 * fired and the first write after `leaseTtlMs` got `LEASE_LOST`.
 * Fixed: a write made when a third of `leaseTtlMs` has passed since the last renewal
 * renews the lease first. The memory store never yields to timers at all, so on it the
 * loop below runs with no timer renewal whatsoever.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore, Sessions, type SessionStore } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { serverOn } from '../sessions/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-back-to-back-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: [string, () => SessionStore, boolean][] = [
  ['MemorySessionStore', () => new MemorySessionStore(), true],
  ['SqliteSessionStore', () => new SqliteSessionStore({ path: join(dir, 'loop.db') }), false],
];

test.each(stores)('on %s, turns run back to back for longer than leaseTtlMs keep the lease', async (_name, makeStore, neverYields) => {
  const store = makeStore();
  const leaseTtlMs = 150;
  const { server, ctx } = await serverOn(store, { leaseTtlMs });
  const durable = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  let timerFired = false;
  const timer = setTimeout(() => void (timerFired = true), 0);
  const started = performance.now();
  let turns = 0;
  while (performance.now() - started < leaseTtlMs * 4) {
    await durable.turn((_c, s) => {
      s.history.append({ role: 'user', content: `m${turns}` });
      // Busy work inside the turn, so the loop spans the TTL in few turns.
      const until = performance.now() + 5;
      while (performance.now() < until);
    });
    turns += 1;
  }
  clearTimeout(timer);
  expect(durable.committedTurn).toBe(turns);
  expect(durable.isDisposed).toBe(false);
  // On the memory store no timer ran while the loop did: the timer renewals alone could not have kept the lease.
  if (neverYields) expect(timerFired).toBe(false);
  await server.dispose();
  await store.close();
});
