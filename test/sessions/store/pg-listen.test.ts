/**
 * The PostgreSQL store's wake-ups: LISTEN/NOTIFY across store objects on one database, the
 * polled mode of a store given a pool and no `listen`, the reconnect of a LISTEN connection
 * that was terminated (followed by a resync), its end at `close()`, and a process that only
 * watches exits on its own (see ../pg-target.ts for when these tests run or are skipped).
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresSessionStore } from '../../../src/sessions/postgres.js';
import type { StoreWake, StoreWatch } from '../../../src/sessions/store/contract.js';
import { createTestDatabase, describePg, pgTarget } from '../pg-target.js';

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let admin: pg.Client | undefined;
const url = (): string => (db as { url: string }).url;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A watcher that records every wake-up with the time it arrived. */
function record(store: PostgresSessionStore): { watch: StoreWatch; wakes: { wake: StoreWake; at: number }[]; errors: Error[] } {
  const wakes: { wake: StoreWake; at: number }[] = [];
  const errors: Error[] = [];
  const watch = store.watch((wake) => wakes.push({ wake, at: performance.now() }), (err) => errors.push(err));
  return { watch, wakes, errors };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The backends of this test database that are LISTENing (their last query was LISTEN). */
async function listeners(): Promise<number[]> {
  const { rows } = await (admin as pg.Client).query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    [(db as { name: string }).name],
  );
  return rows.map((r) => r.pid);
}

const create = (store: PostgresSessionStore, sessionId: string, owner = 'holder') => store.create({ sessionId, agentId: 'agent', owner, ttlMs: 60_000, locals: [] });

describePg(target)('PostgresSessionStore wake-ups (LISTEN/NOTIFY)', () => {
  beforeAll(async () => {
    if (!target.ok) return;
    db = await createTestDatabase(target.adminUrl, 'listen');
    admin = new pg.Client({ connectionString: target.adminUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  test('a release in one store object wakes a watcher of another on the same database within 500 ms (measured)', async () => {
    const a = new PostgresSessionStore({ connectionString: url(), max: 2 });
    const b = new PostgresSessionStore({ connectionString: url(), max: 2 });
    try {
      const { watch, wakes, errors } = record(b);
      expect(watch.pollMs).toBe(250);
      await until("b's LISTEN connection", () => watch.mode === 'notify');
      await until('the resync after LISTEN', () => wakes.some((w) => w.wake.kind === 'resync'));
      const lease = await create(a, 'released');
      const handoffAt = performance.now();
      await expect(a.requestHandoff('released', { owner: 'waiter', until: new Date(Date.now() + 60_000) })).resolves.toBe(true);
      await until('the handoff wake-up', () => wakes.some((w) => w.wake.kind === 'handoff'));
      const handoff = wakes.find((w) => w.wake.kind === 'handoff') as { wake: StoreWake; at: number };
      expect(handoff.wake).toEqual({ kind: 'handoff', sessionId: 'released', owner: 'holder' });
      const t = await a.begin(lease);
      await a.commit(lease, { ...t, events: [], locals: [] });
      const releasedAt = performance.now();
      await expect(a.release(lease)).resolves.toBe(true);
      await until('the release wake-up', () => wakes.some((w) => w.wake.kind === 'release'));
      const release = wakes.find((w) => w.wake.kind === 'release') as { wake: StoreWake; at: number };
      expect(release.wake).toEqual({ kind: 'release', sessionId: 'released' });
      const ms = release.at - releasedAt;
      console.log(`PostgreSQL LISTEN/NOTIFY: a release woke another store's watcher after ${ms.toFixed(1)} ms (the call included; a handoff request after ${(handoff.at - handoffAt).toFixed(1)} ms)`);
      expect(ms).toBeLessThan(500);
      // only the handoff, the release and the first resync: the create, begin and commit notified nothing
      expect(wakes.map((w) => w.wake.kind)).toEqual(['resync', 'handoff', 'release']);
      expect(errors).toEqual([]);
      await watch.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a store given a pool and no listen polls (mode 'poll'), logs it once, and still wakes its own watchers in-process", async () => {
    const pool = new pg.Pool({ connectionString: url(), max: 2 });
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const warnings = (): unknown[][] => warn.mock.calls.filter((c) => (c[1] as { code?: string } | undefined)?.code === 'POLESTAR_WAKEUPS_POLLED');
    const store = new PostgresSessionStore({ pool, pollMs: 40 });
    try {
      const first = record(store);
      const second = record(store);
      expect(first.watch.mode).toBe('poll');
      expect(first.watch.pollMs).toBe(40);
      const lease = await create(store, 'pooled');
      await store.release(lease);
      await until('the in-process release wake-up', () => first.wakes.length > 0 && second.wakes.length > 0);
      expect(first.wakes.map((w) => w.wake)).toEqual([{ kind: 'release', sessionId: 'pooled' }]);
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0][0]).toMatch(/wake-ups are polled/);
      expect(warnings()[0][1]).toEqual({ type: 'PolestarWarning', code: 'POLESTAR_WAKEUPS_POLLED' });
      expect(await listeners()).toEqual([]);
      await first.watch.close();
      await second.watch.close();
    } finally {
      warn.mockRestore();
      await store.close();
      await pool.end();
    }
  });

  test("a pool with listen: wake-ups are listened for on that connection string ('notify')", async () => {
    const pool = new pg.Pool({ connectionString: url(), max: 2 });
    const store = new PostgresSessionStore({ pool, listen: url() });
    const other = new PostgresSessionStore({ pool });
    try {
      const { watch, wakes } = record(store);
      await until('the LISTEN connection', () => watch.mode === 'notify');
      const lease = await create(other, 'via-pool');
      await other.release(lease);
      await until('the release wake-up', () => wakes.some((w) => w.wake.kind === 'release'));
    } finally {
      await store.close();
      await other.close();
      await pool.end();
    }
  });

  test('a LISTEN connection terminated by the server reconnects and emits a resync; wake-ups arrive again; close() ends it', async () => {
    const store = new PostgresSessionStore({ connectionString: url(), max: 2 });
    try {
      const { watch, wakes, errors } = record(store);
      await until('the LISTEN connection', () => watch.mode === 'notify');
      await until('the LISTEN backend in pg_stat_activity', async () => (await listeners()).length === 1);
      const [pid] = await listeners();
      await until('the first resync', () => wakes.some((w) => w.wake.kind === 'resync'));
      const before = wakes.length;
      await (admin as pg.Client).query('SELECT pg_terminate_backend($1)', [pid]);
      await until('the resync after the reconnect', () => wakes.slice(before).some((w) => w.wake.kind === 'resync'));
      expect(watch.mode).toBe('notify');
      const now = await listeners();
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(pid);
      const lease = await create(store, 'after-reconnect');
      await store.release(lease);
      await until('a release wake-up after the reconnect', () => wakes.some((w) => w.wake.kind === 'release' && w.wake.sessionId === 'after-reconnect'));
      expect(errors).toEqual([]);
    } finally {
      await store.close();
    }
    await until('the LISTEN backend to end after close()', async () => (await listeners()).length === 0);
  });

  test('a LISTEN connection that can not be set up turns the watchers to poll mode, reported once through onError', async () => {
    const bad = new URL(url());
    bad.pathname = '/polestar_no_such_database';
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const warnings = (): unknown[][] => warn.mock.calls.filter((c) => (c[1] as { code?: string } | undefined)?.code === 'POLESTAR_WAKEUPS_POLLED');
    const store = new PostgresSessionStore({ connectionString: url(), listen: bad.toString(), max: 2 });
    try {
      const { watch, wakes, errors } = record(store);
      await until('the reported error', () => errors.length > 0);
      expect(watch.mode).toBe('poll');
      expect(errors[0].message).toMatch(/LISTEN connection .* could not be set up/);
      await sleep(400); // a few retries
      expect(errors).toHaveLength(1);
      expect(warnings()).toHaveLength(1);
      // the store itself works, and delivers its own wake-ups in-process meanwhile
      const lease = await create(store, 'unlistened');
      await store.release(lease);
      await until('the in-process release wake-up', () => wakes.some((w) => w.wake.kind === 'release'));
    } finally {
      warn.mockRestore();
      await store.close();
    }
  });

  test('options: listen must be a connection string and pollMs a finite number >= 1 (a TypeError naming the option)', () => {
    expect(() => new PostgresSessionStore({ connectionString: url(), listen: 5 as never })).toThrow(/options\.listen must be a string/);
    expect(() => new PostgresSessionStore({ connectionString: url(), listen: '' })).toThrow(/options\.listen must not be empty/);
    for (const bad of [0, -1, NaN, Infinity, '250', null]) {
      expect(() => new PostgresSessionStore({ connectionString: url(), pollMs: bad as never })).toThrow(TypeError);
      expect(() => new PostgresSessionStore({ connectionString: url(), pollMs: bad as never })).toThrow(/options\.pollMs/);
    }
  });

  const built = fileURLToPath(new URL('../../../.build/src/sessions/postgres.js', import.meta.url));
  (existsSync(built) ? test : test.skip)('a process that only watches exits on its own: the LISTEN connection and its timers do not keep it alive', async () => {
    const script = `
      import { PostgresSessionStore } from ${JSON.stringify(built)};
      const store = new PostgresSessionStore({ connectionString: process.argv[1] });
      const watch = store.watch(() => {});
      const started = Date.now();
      const tick = () => { if (watch.mode === 'notify') console.log('listening'); else if (Date.now() - started < 5000) setTimeout(tick, 10); };
      tick();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, url()], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the watching process did not exit within 8 s (stdout: ${out})`));
      }, 8_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(out.trim()).toBe('listening');
    expect(code).toBe(0);
  });
});
