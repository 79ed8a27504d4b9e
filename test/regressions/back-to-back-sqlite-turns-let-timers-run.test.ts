/**
 * Bug: libsql's file driver is synchronous, so every SqliteSessionStore call resolved
 * without the event loop ever reaching its timer phase. A loop of back-to-back turns
 * starved every timer of the process: the lease renewal never fired, and the write after
 * `leaseTtlMs` got LEASE_LOST with no fault at all. Fixed: the driver yields to the event
 * loop once after each transaction, so timers run between turns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-timers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('timers fire during a loop of back-to-back SQLite turns, and a renewal timer keeps the lease', async () => {
  const store = new SqliteSessionStore({ path: join(dir, 'loop.db') });
  const ttlMs = 300;
  const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs, locals: [] });
  let ticks = 0;
  const tick = setInterval(() => ticks++, 10);
  // what the lease keeper does: renew every third of the TTL
  const renewals: Promise<void>[] = [];
  const renew = setInterval(() => renewals.push(store.renew(lease)), ttlMs / 3);
  const t0 = Date.now();
  let turns = 0;
  try {
    while (Date.now() - t0 < ttlMs * 2.5) {
      const a = await store.begin(lease);
      await store.commit(lease, { ...a, events: [{ kind: 'history/append', body: { n: turns } }], locals: [] });
      turns += 1;
    }
  } finally {
    clearInterval(tick);
    clearInterval(renew);
  }
  await Promise.all(renewals);
  expect(turns).toBeGreaterThan(5);
  expect(ticks).toBeGreaterThan(10);
  expect(renewals.length).toBeGreaterThanOrEqual(3);
  expect((await store.load('s')).info.committedTurn).toBe(turns);
  await store.close();
});
