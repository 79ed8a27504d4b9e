/**
 * The SQLite store: the conformance suite on one file shared by every store object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { createClient } from '@libsql/client';
import { runSessionStoreConformance } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteSessionStore conformance', () => {
  runSessionStoreConformance(() => new SqliteSessionStore({ path: join(dir, 'conformance.db') }), { test, leaseTtlMs: 600 });
});

describe('SqliteSessionStore wake-ups', () => {
  test("watch is in 'poll' mode (pollMs), and the store's own releases and requests still wake its watchers in-process", async () => {
    const store = new SqliteSessionStore({ path: join(dir, 'wakes.db'), pollMs: 75 });
    try {
      const wakes: unknown[] = [];
      const watch = store.watch((w) => wakes.push(w));
      expect(watch.mode).toBe('poll');
      expect(watch.pollMs).toBe(75);
      const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'holder', ttlMs: 10_000, locals: [] });
      await store.requestHandoff('s', { owner: 'waiter', until: new Date(Date.now() + 10_000) });
      await store.release(lease);
      await new Promise((r) => setImmediate(r));
      expect(wakes).toEqual([
        { kind: 'handoff', sessionId: 's', owner: 'holder' },
        { kind: 'release', sessionId: 's' },
      ]);
      await watch.close();
      expect(new SqliteSessionStore({ path: join(dir, 'wakes.db') }).watch(() => undefined).pollMs).toBe(250);
    } finally {
      await store.close();
    }
  });

  test('options.pollMs must be a finite number >= 1', () => {
    for (const bad of [0, -1, NaN, Infinity, '250', null]) expect(() => new SqliteSessionStore({ path: join(dir, 'x.db'), pollMs: bad as never })).toThrow(/options\.pollMs/);
  });

  test('the requests table is added to a schema-2 file that lacks it, without raising the schema version', async () => {
    const path = join(dir, 'older.db');
    const first = new SqliteSessionStore({ path });
    await first.release(await first.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 10_000, locals: [] }));
    await first.close();
    const raw = createClient({ url: `file:${path}` });
    await raw.execute('DROP TABLE polestar_requests');
    raw.close();
    const store = new SqliteSessionStore({ path });
    try {
      // an acquire removes the session's handoff request: it needs the table
      await expect(store.acquire('s', { owner: 'o2', ttlMs: 10_000 })).resolves.toMatchObject({ owner: 'o2', epoch: 2 });
      await expect(store.requests('o2')).resolves.toEqual([]);
    } finally {
      await store.close();
    }
    const check = createClient({ url: `file:${path}` });
    try {
      const tables = await check.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'polestar_requests'");
      expect(tables.rows).toHaveLength(1);
      const schema = await check.execute("SELECT value FROM polestar_meta WHERE key = 'schema'");
      expect(schema.rows[0]?.value).toBe('2');
    } finally {
      check.close();
    }
  });
});
