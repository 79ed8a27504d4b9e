/**
 * The PostgreSQL store when the server dies, restarts, or a holder freezes inside a
 * transaction, on a throwaway cluster of this file's own (never the shared server). The
 * stores under test run in child processes (pg-victim.ts) so that a crash is seen as one.
 */
import pg from 'pg';
import { SessionError } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { STORE_BOUND } from '../../src/sessions/store/store-bound.js';
import { describeCluster, pgClusterAvailability, startPgCluster, type PgCluster } from './support/pg-cluster.js';
import { spawnVictim, type Victim } from './support/pg-victim-process.js';
import { startTcpProxy } from './support/tcp-proxy.js';

const avail = pgClusterAvailability();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A raw client on the cluster (its errors ignored: the cluster is stopped under it). */
async function rawClient(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** Waits until `n` backends wait for a lock (the victim's call is in flight, its client checked out). */
async function waitForLockWaiters(c: pg.Client, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    if ((rows[0] as { n: number }).n >= n) return;
    await sleep(25);
  }
  throw new Error('the victim never waited for the row lock');
}

/** Sends `renew` until it succeeds (the server is back); returns the failures seen first. */
async function renewUntilOk(v: Victim, tries = 40): Promise<Record<string, unknown>[]> {
  const failures: Record<string, unknown>[] = [];
  for (let i = 0; i < tries; i++) {
    v.send('renew');
    const r = await v.next();
    if (r.ok === true) return failures;
    failures.push(r);
    await sleep(100);
  }
  throw new Error(`renew never succeeded after the restart: ${JSON.stringify(failures.slice(-3))}`);
}

describeCluster(avail)('PostgreSQL store: server crash, restart and frozen holders', () => {
  let cluster: PgCluster;
  let dbUrl: string;
  let n = 0;
  const victims: Victim[] = [];
  beforeAll(async () => {
    cluster = await startPgCluster();
    dbUrl = await cluster.createDatabase('faults');
  });
  afterAll(async () => {
    for (const v of victims) v.kill();
    await cluster?.destroy();
  });

  for (const pool of ['own', 'user'] as const) {
    test(`a store on ${pool === 'own' ? 'its own pool ({ connectionString })' : "a user's pg.Pool with no error listener"} survives pg_ctl stop -m immediate with a call in flight, and serves the next call after the restart`, async () => {
      const sessionId = `crash-${pool}-${++n}`;
      const victim = spawnVictim({ url: dbUrl, pool, sessionId });
      victims.push(victim);
      expect(await victim.next(60_000)).toEqual({ ready: true });
      // Warm the pool with an idle client too: its error is emitted on the pool.
      victim.send('renew');
      expect(await victim.next()).toEqual({ op: 'renew', ok: true });

      // Hold the row so the victim's next renew is in flight, its client checked out.
      const holder = await rawClient(dbUrl);
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM polestar_sessions WHERE session_id = $1 FOR UPDATE', [sessionId]);
      victim.send('renew');
      await waitForLockWaiters(holder, 1);

      await cluster.stop({ mode: 'immediate' });
      const inFlight = await victim.next();
      expect(inFlight).toMatchObject({ op: 'renew', code: 'STORE_ERROR' });
      expect(String(inFlight.message)).toContain('store.renew()');
      expect(String(inFlight.message)).toContain('the connection failed before COMMIT was sent');

      // While the server is down, calls fail with STORE_ERROR (and the process lives on).
      victim.send('renew');
      expect(await victim.next()).toMatchObject({ op: 'renew', code: 'STORE_ERROR' });

      await cluster.start();
      const failures = await renewUntilOk(victim);
      for (const f of failures) expect(f.code).toBe('STORE_ERROR');

      victim.send('exit');
      expect(await victim.next()).toEqual({ exiting: true });
      const exit = await victim.exited;
      expect(exit.stderr).not.toMatch(/uncaught|unhandled|Error:/i);
      expect(exit).toMatchObject({ code: 0, signal: null });
    });
  }

  test('after a restart, the first call of an in-process store is served on a fresh connection (its idle ones died)', async () => {
    const store = new PostgresSessionStore({ connectionString: dbUrl, max: 3 });
    try {
      const sessionId = `restart-${++n}`;
      const lease = await store.create({ sessionId, agentId: 'a', owner: 'me', ttlMs: 60_000, locals: [] });
      await Promise.all([store.renew(lease), store.load(sessionId), store.list()]); // three idle clients
      await cluster.stop({ mode: 'immediate' });
      const down = await store.load(sessionId).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(down).toBeInstanceOf(SessionError);
      expect((down as SessionError).code).toBe('STORE_ERROR');
      await cluster.start();
      await store.renew(lease);
      expect((await store.load(sessionId)).info.sessionId).toBe(sessionId);
    } finally {
      await store.close();
    }
  });

  test("a holder frozen (SIGSTOP) inside a transaction is ended by idle_in_transaction_session_timeout below leaseTtlMs: another store's acquire does not hang", async () => {
    const sessionId = `frozen-${++n}`;
    let victim: Victim | undefined;
    // Freeze the victim the moment its renew's UPDATE goes out: the UPDATE runs (the row
    // is locked), its reply is never read, and COMMIT is never sent.
    let freezeOn: string | undefined;
    const proxy = await startTcpProxy({
      target: dbUrl,
      onQuery: (sql) => {
        if (freezeOn !== undefined && victim !== undefined && sql.startsWith(freezeOn)) {
          freezeOn = undefined;
          process.kill(victim.pid, 'SIGSTOP');
        }
      },
    });
    const other = new PostgresSessionStore({ connectionString: dbUrl, max: 2 });
    try {
      // Its lease lives 600 ms; the server ends its idle transactions after 1,600 ms (80% of 2,000).
      victim = spawnVictim({ url: proxy.url(dbUrl), pool: 'own', sessionId, ttlMs: 600, bounds: { callTimeoutMs: 5_000, leaseTtlMs: 2_000 } });
      victims.push(victim);
      expect(await victim.next(60_000)).toEqual({ ready: true });
      freezeOn = 'UPDATE polestar_sessions SET lease_ttl_ms';
      victim.send('renew');
      const watcher = await rawClient(dbUrl);
      try {
        // The frozen transaction holds the row…
        for (let i = 0; ; i++) {
          const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = 'faults'");
          if ((rows[0] as { n: number }).n >= 1) break;
          if (i > 200) throw new Error('the victim never froze inside its transaction');
          await sleep(10);
        }
        const frozenAt = Date.now();
        // …past its lease: another store's acquire (bound 5 s, so lock_timeout 4 s) must wait
        // for the row, and gets it once the server ends the frozen transaction (1.6 s after
        // it went idle), well before its own lock_timeout would give STORE_LOCKED.
        await sleep(800);
        other[STORE_BOUND]({ callTimeoutMs: 5_000, leaseTtlMs: 30_000 });
        const t0 = Date.now();
        const lease = await other.acquire(sessionId, { owner: 'thief', ttlMs: 60_000 });
        const took = Date.now() - t0;
        expect(lease.owner).toBe('thief');
        expect(took).toBeGreaterThan(300); // it did wait for the frozen transaction…
        expect(Date.now() - frozenAt).toBeLessThan(3_500); // …which ended near 1.6 s, not at lock_timeout
        const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = 'faults'");
        expect((rows[0] as { n: number }).n).toBe(0);
      } finally {
        await watcher.end();
      }
      // Thawed, the victim finds its connection ended (STORE_ERROR), and its next write is
      // fenced: the thief's lease is current.
      process.kill(victim.pid, 'SIGCONT');
      expect(await victim.next()).toMatchObject({ op: 'renew', code: 'STORE_ERROR' });
      victim.send('renew');
      expect(await victim.next()).toMatchObject({ op: 'renew', code: 'LEASE_LOST' });
      victim.send('exit');
      expect(await victim.next()).toEqual({ exiting: true });
      expect(await victim.exited).toMatchObject({ code: 0, signal: null });
    } finally {
      if (victim !== undefined) {
        try {
          process.kill(victim.pid, 'SIGCONT');
        } catch {
          // already gone
        }
      }
      await other.close();
      await proxy.close();
    }
  });
});
