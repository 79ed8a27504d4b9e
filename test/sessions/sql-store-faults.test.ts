/**
 * The SQL stores under faults, on real databases: `attemptStatus` waits for a write of the
 * session in flight (SQLite: on the same connection and on another; PostgreSQL: a
 * transaction holding the session row), the plugin's call bound on the SQLite driver (a
 * queued call past it never runs; the busy wait stops at it), and the schema migration
 * that adds the lease's incarnation (an existing database migrates; a newer one is refused).
 */
import { createClient } from '@libsql/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Lease, SessionStore } from '../../src/sessions.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { STORE_BOUND, applyStoreBounds } from '../../src/sessions/store/store-bound.js';
import { probe } from '../../src/testing/probe.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-sql-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const target = await pgTarget();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const bounds = (callTimeoutMs: number) => ({ callTimeoutMs, leaseTtlMs: 30_000 });
let n = 0;
const file = (tag: string): string => join(dir, `${tag}-${++n}.db`);
const create = (s: SessionStore, sessionId = 's'): Promise<Lease> => s.create({ sessionId, agentId: 'a', owner: 'o1', ttlMs: 60_000, locals: [] });

/** Whether `p` is still pending after `ms`. */
async function pendingAfter(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await sleep(ms);
  return !settled;
}

/** Makes the next write transaction of `store` wait in its commit until `release()`. */
function holdNextCommit(store: SqliteSessionStore): { release: () => void; entered: Promise<void> } {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const inside = new Promise<void>((r) => (entered = r));
  probe.beforeCommit(store, async () => {
    probe.beforeCommit(store, undefined);
    entered();
    await gate;
  });
  return { release, entered: inside };
}

async function caught(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error,
  );
}

describe('SQLite: attemptStatus waits for the write in flight', () => {
  test('on the same store object it is queued behind the commit in flight and sees it committed', async () => {
    const store = new SqliteSessionStore({ path: file('same') });
    const lease = await create(store);
    const a = await store.begin(lease);
    const hold = holdNextCommit(store);
    const commit = store.commit(lease, { ...a, events: [], locals: [] });
    await hold.entered;
    const status = store.attemptStatus(lease.sessionId, a);
    expect(await pendingAfter(status, 150)).toBe(true);
    hold.release();
    await commit;
    expect(await status).toBe('committed');
    await store.close();
  });

  test("on another connection it waits for the other's write lock (a plain read still sees the attempt open)", async () => {
    const path = file('other');
    const writer = new SqliteSessionStore({ path });
    const reader = new SqliteSessionStore({ path });
    const peek = new SqliteSessionStore({ path });
    const lease = await create(writer);
    const a = await writer.begin(lease);
    // (the first call of a store object creates or migrates the tables: a write)
    await Promise.all([reader.load(lease.sessionId), peek.load(lease.sessionId)]);
    const hold = holdNextCommit(writer);
    const commit = writer.commit(lease, { ...a, events: [], locals: [] });
    await hold.entered;
    const status = reader.attemptStatus(lease.sessionId, a);
    expect((await peek.load(lease.sessionId)).open).toMatchObject({ turn: 1, attempt: 1 });
    expect(await pendingAfter(status, 150)).toBe(true);
    hold.release();
    await commit;
    expect(await status).toBe('committed');
    await Promise.all([writer.close(), reader.close(), peek.close()]);
  });
});

describe('SQLite: the call bound', () => {
  test('a call still queued when its bound passes rejects at the bound with STORE_ERROR and never runs (the smallest bound given wins)', async () => {
    const path = file('queued');
    const store = new SqliteSessionStore({ path });
    applyStoreBounds(store, bounds(10_000));
    applyStoreBounds(store, bounds(250));
    applyStoreBounds(store, bounds(5_000));
    const lease = await create(store);
    const hold = holdNextCommit(store);
    const slow = store.renew(lease);
    await hold.entered;
    const t0 = Date.now();
    const queuedCreate = caught(create(store, 'queued'));
    const queuedLoad = caught(store.load(lease.sessionId));
    const err = await queuedCreate;
    const elapsed = Date.now() - t0;
    expect(err).toMatchObject({ code: 'STORE_ERROR' });
    expect(err.message).toContain('store.create()');
    expect(err.message).toContain(path);
    expect(err.message).toContain('raise storeTimeoutMs');
    expect(err.message).toMatch(/never ran/);
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(elapsed).toBeLessThan(2000);
    expect(await queuedLoad).toMatchObject({ code: 'STORE_ERROR', message: expect.stringContaining('store.load()') });
    hold.release();
    await slow;
    await expect(store.load('queued')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    // a call that does not wait is not affected by the bound
    expect((await store.load(lease.sessionId)).info.lease?.owner).toBe('o1');
    await store.close();
  });

  test('the busy wait for another connection stops at min(busyTimeoutMs, the call bound) with STORE_LOCKED', async () => {
    const path = file('busy');
    const holder = new SqliteSessionStore({ path });
    const waiter = new SqliteSessionStore({ path, busyTimeoutMs: 10_000 });
    waiter[STORE_BOUND](bounds(300));
    const lease = await create(holder);
    await waiter.load(lease.sessionId);
    const hold = holdNextCommit(holder);
    const slow = holder.renew(lease);
    await hold.entered;
    const t0 = Date.now();
    const err = await caught(waiter.renew(lease));
    const elapsed = Date.now() - t0;
    expect(err).toMatchObject({ code: 'STORE_LOCKED' });
    expect(err.message).toContain('store.renew()');
    expect(err.message).toContain('storeTimeoutMs');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
    hold.release();
    await slow;
    // without the bound the busy timeout applies as before
    const plain = new SqliteSessionStore({ path, busyTimeoutMs: 200 });
    const hold2 = holdNextCommit(holder);
    const slow2 = holder.renew(lease);
    await hold2.entered;
    const err2 = await caught(plain.renew(lease));
    expect(err2).toMatchObject({ code: 'STORE_LOCKED' });
    expect(err2.message).toContain('busyTimeoutMs (200 ms)');
    hold2.release();
    await slow2;
    await Promise.all([holder.close(), waiter.close(), plain.close()]);
  });
});

describe('SQLite: the incarnation migration', () => {
  test('a database at schema 1 (no lease_incarnation) migrates on first use and keeps its sessions; a newer schema is refused', async () => {
    const path = file('migrate');
    const old = new SqliteSessionStore({ path });
    const lease = await create(old);
    const a = await old.begin(lease);
    await old.commit(lease, { ...a, events: [{ kind: 'history/append', body: { role: 'user', content: 'kept' } }], locals: [] });
    await old.close();
    const db = createClient({ url: `file:${path}` });
    // what schema 1 looked like
    await db.execute('ALTER TABLE polestar_sessions DROP COLUMN lease_incarnation');
    await db.execute('ALTER TABLE polestar_attempts DROP COLUMN turn_key');
    await db.execute("UPDATE polestar_meta SET value = '1' WHERE key = 'schema'");

    const store = new SqliteSessionStore({ path });
    const loaded = await store.load('s');
    expect(loaded.history.map((e) => e.body)).toEqual([{ role: 'user', content: 'kept' }]);
    expect((await db.execute("SELECT value FROM polestar_meta WHERE key = 'schema'")).rows[0].value).toBe('2');
    const cols = (await db.execute('PRAGMA table_info(polestar_sessions)')).rows.map((r) => r.name);
    expect(cols).toContain('lease_incarnation');
    // the session leased under schema 1 (no incarnation) is SESSION_BUSY for any incarnation
    await expect(store.acquire('s', { owner: 'o1', incarnation: 'i2', ttlMs: 1000 })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    await store.release(lease);
    expect(await store.acquire('s', { owner: 'o1', incarnation: 'i1', ttlMs: 60_000 })).toMatchObject({ epoch: 2, incarnation: 'i1' });
    expect(await store.acquire('s', { owner: 'o1', incarnation: 'i2', ttlMs: 60_000 }).catch((e: unknown) => e)).toMatchObject({ epoch: 3, incarnation: 'i2' });
    await store.close();

    await db.execute("UPDATE polestar_meta SET value = '3' WHERE key = 'schema'");
    const older = new SqliteSessionStore({ path });
    const err = await caught(older.load('s'));
    expect(err).toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
    expect(err.message).toMatch(/schema 3.*knows schema 2 at most/);
    expect((await db.execute("SELECT value FROM polestar_meta WHERE key = 'schema'")).rows[0].value).toBe('3');
    await older.close();
    db.close();
  });
});

describePg(target)('PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const url = (): string => (db as { url: string }).url;
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'sqlfaults');
  });
  afterAll(async () => {
    await db?.drop();
  });

  test('attemptStatus waits for a transaction holding the session row, and reads what it committed (a plain load does not wait)', async () => {
    const store = new PostgresSessionStore({ connectionString: url(), max: 3 });
    const lease = await create(store, 'pg-wait');
    const a = await store.begin(lease);
    const raw = new pg.Client({ connectionString: url() });
    await raw.connect();
    try {
      // a commit transaction in flight: it holds the session row and has written its records
      await raw.query('BEGIN');
      await raw.query("UPDATE polestar_sessions SET committed_turn = 1, open_turn = NULL, open_attempt = NULL, open_epoch = NULL WHERE session_id = 'pg-wait'");
      await raw.query("UPDATE polestar_attempts SET status = 'committed' WHERE session_id = 'pg-wait' AND turn = 1 AND attempt = 1");
      const status = store.attemptStatus('pg-wait', a);
      expect((await store.load('pg-wait')).open).toMatchObject({ turn: 1, attempt: 1 });
      expect(await pendingAfter(status, 300)).toBe(true);
      await raw.query('COMMIT');
      expect(await status).toBe('committed');
    } finally {
      await raw.end();
      await store.close();
    }
  });

  test('a database at schema 1 migrates on first use and keeps its sessions; a newer schema is refused', async () => {
    const first = new PostgresSessionStore({ connectionString: url(), max: 2 });
    await create(first, 'pg-migrate');
    await first.close();
    const raw = new pg.Client({ connectionString: url() });
    await raw.connect();
    try {
      await raw.query('ALTER TABLE polestar_sessions DROP COLUMN lease_incarnation');
      await raw.query('ALTER TABLE polestar_attempts DROP COLUMN turn_key');
      await raw.query("UPDATE polestar_meta SET value = '1' WHERE key = 'schema'");
      const store = new PostgresSessionStore({ connectionString: url(), max: 2 });
      expect((await store.load('pg-migrate')).info.lease?.owner).toBe('o1');
      expect((await raw.query("SELECT value FROM polestar_meta WHERE key = 'schema'")).rows[0].value).toBe('2');
      const lease = await create(store, 'pg-new');
      expect(await store.acquire('pg-new', { owner: 'o1', incarnation: 'i2', ttlMs: 1000 }).catch((e: unknown) => e)).toMatchObject({ code: 'SESSION_BUSY' });
      await store.release(lease);
      await store.acquire('pg-new', { owner: 'o1', incarnation: 'i1', ttlMs: 60_000 });
      expect(await store.acquire('pg-new', { owner: 'o1', incarnation: 'i2', ttlMs: 60_000 })).toMatchObject({ epoch: 3, incarnation: 'i2' });
      await store.close();
      await raw.query("UPDATE polestar_meta SET value = '3' WHERE key = 'schema'");
      const older = new PostgresSessionStore({ connectionString: url(), max: 2 });
      await expect(older.load('pg-migrate')).rejects.toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
      await older.close();
      await raw.query("UPDATE polestar_meta SET value = '2' WHERE key = 'schema'");
    } finally {
      await raw.end();
    }
  });
});
