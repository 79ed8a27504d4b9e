/**
 * The PostgreSQL store's driver under faults, on the shared server (a fresh database per
 * file) and a TCP proxy in front of it: the transaction-local timeouts in the first
 * statement, calls past their bound, connection cuts, and error listeners on pools and
 * clients. Nothing here stops the server: see test/faults for that.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { SessionError } from '../../src/index.js';
import { PostgresSessionStore, type PgPoolClientLike, type PgPoolLike } from '../../src/sessions/postgres.js';
import { STORE_BOUND } from '../../src/sessions/store/store-bound.js';
import { startTcpProxy, type TcpProxy } from '../faults/support/tcp-proxy.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
const url = (): string => (db as { url: string }).url;
let n = 0;
const sid = (tag: string): string => `drv-${tag}-${++n}`;
const create = (store: PostgresSessionStore, sessionId: string, owner = 'me') => store.create({ sessionId, agentId: 'a', owner, ttlMs: 60_000, locals: [] });

async function rejection(p: Promise<unknown>): Promise<SessionError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof SessionError)) throw new Error(`expected a SessionError, got ${String(err)}`);
  return err;
}

/** A raw client that holds the session's row lock until `end()`. */
async function holdRow(sessionId: string): Promise<{ end(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url() });
  c.on('error', () => undefined);
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT session_id FROM polestar_sessions WHERE session_id = $1 FOR UPDATE', [sessionId]);
  return {
    async end() {
      await c.query('ROLLBACK').catch(() => undefined);
      await c.end().catch(() => undefined);
    },
  };
}

describePg(target)('PostgreSQL driver under faults', () => {
  let proxy: TcpProxy;
  const seen: string[] = [];
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'driver');
    proxy = await startTcpProxy({ target: url(), onQuery: (sql) => seen.push(sql) });
  });
  afterAll(async () => {
    await proxy?.close();
    await db?.drop();
  });

  test('BEGIN and the transaction-local timeouts go in one statement: 80% of the default bounds, then of the plugin bounds', async () => {
    const store = new PostgresSessionStore({ connectionString: proxy.url(url()), max: 2 });
    try {
      const id = sid('first');
      await create(store, id);
      seen.length = 0;
      await store.load(id);
      const begins = seen.filter((q) => q.startsWith('BEGIN'));
      expect(begins).toHaveLength(1);
      expect(begins[0]).toBe(
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT set_config('lock_timeout', '8000ms', true), set_config('idle_in_transaction_session_timeout', '24000ms', true)",
      );
      // No separate round trip sets them.
      expect(seen.filter((q) => /set_config|^SET\b/i.test(q))).toHaveLength(1);

      store[STORE_BOUND]({ callTimeoutMs: 1000, leaseTtlMs: 5000 });
      seen.length = 0;
      const lease = await store.acquire(id, { owner: 'other', ttlMs: 60_000 }).catch(() => undefined);
      expect(lease).toBeUndefined(); // SESSION_BUSY: a write transaction that rolled back
      await store.load(id);
      expect(seen.filter((q) => q.startsWith('BEGIN'))).toEqual([
        "BEGIN; SELECT set_config('lock_timeout', '800ms', true), set_config('idle_in_transaction_session_timeout', '4000ms', true)",
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT set_config('lock_timeout', '800ms', true), set_config('idle_in_transaction_session_timeout', '4000ms', true)",
      ]);
    } finally {
      await store.close();
    }
  });

  test("the timeouts are local to the store's transactions: a user's pooled connection keeps its own settings", async () => {
    const pool = new pg.Pool({ connectionString: url(), max: 1 });
    const store = new PostgresSessionStore({ pool });
    try {
      store[STORE_BOUND]({ callTimeoutMs: 700, leaseTtlMs: 900 });
      const id = sid('local');
      const lease = await create(store, id);
      await store.renew(lease);
      await store.load(id);
      const { rows } = await pool.query("SELECT current_setting('lock_timeout') AS lt, current_setting('idle_in_transaction_session_timeout') AS it");
      expect(rows[0]).toEqual({ lt: '0', it: '0' });
    } finally {
      await store.close();
      await pool.end();
    }
  });

  test('a lock wait past lock_timeout is STORE_LOCKED within the bound, naming the call, the session and the lease holder', async () => {
    const store = new PostgresSessionStore({ connectionString: url(), max: 2 });
    try {
      const id = sid('locked');
      const lease = await create(store, id, 'holder-owner');
      store[STORE_BOUND]({ callTimeoutMs: 600, leaseTtlMs: 30_000 });
      const holder = await holdRow(id);
      try {
        const t0 = Date.now();
        const err = await rejection(store.renew(lease));
        const took = Date.now() - t0;
        expect(err.code).toBe('STORE_LOCKED');
        expect(err.sessionId).toBe(id);
        expect(err.message).toContain('store.renew()');
        expect(err.message).toContain(`session "${id}"`);
        expect(err.message).toContain('held by another transaction');
        expect(err.message).toContain('owner "holder-owner"');
        expect(took).toBeLessThan(600);
        // The connection stayed healthy: the next call, once the row is free, works at once.
      } finally {
        await holder.end();
      }
      await store.renew(lease);
    } finally {
      await store.close();
    }
  });

  test('a call past its bound rejects with STORE_ERROR naming it; its connection is closed, and the next call runs on a fresh one', async () => {
    const store = new PostgresSessionStore({ connectionString: proxy.url(url()), max: 1 });
    try {
      const id = sid('bound');
      const lease = await create(store, id);
      store[STORE_BOUND]({ callTimeoutMs: 400, leaseTtlMs: 30_000 });
      const accepted = proxy.accepted;
      const fault = proxy.arm({ match: 'UPDATE polestar_sessions SET lease_ttl_ms', at: 'drop-reply' });
      const t0 = Date.now();
      const err = await rejection(store.renew(lease));
      const took = Date.now() - t0;
      await fault.fired;
      expect(err.code).toBe('STORE_ERROR');
      expect(err.message).toMatch(/store\.renew\(\).*did not answer within storeTimeoutMs \(400 ms\) inside its transaction/);
      expect(err.message).toContain('nothing of it was committed');
      expect((err.cause as { outcome?: unknown }).outcome).toBe('not-applied');
      expect(took).toBeGreaterThanOrEqual(390);
      expect(took).toBeLessThan(1000);
      // The pool discarded the client: the next call opens a new connection and works.
      await store.renew(lease);
      expect(proxy.accepted).toBe(accepted + 1);
    } finally {
      await store.close();
    }
  });

  test('a COMMIT past the bound is reported as an unknown outcome, never as not applied', async () => {
    const store = new PostgresSessionStore({ connectionString: proxy.url(url()), max: 1 });
    try {
      const id = sid('commit-bound');
      const lease = await create(store, id);
      store[STORE_BOUND]({ callTimeoutMs: 400, leaseTtlMs: 30_000 });
      const fault = proxy.arm({ match: 'COMMIT', at: 'drop-reply' });
      const err = await rejection(store.renew(lease));
      await fault.done;
      expect(err.code).toBe('STORE_ERROR');
      expect(err.message).toContain('its COMMIT was sent but not answered');
      expect((err.cause as { outcome?: unknown }).outcome).toBe('unknown');
      await store.renew(lease);
    } finally {
      await store.close();
    }
  });

  test('a connection cut inside a transaction is STORE_ERROR on that call, says whether it may have committed, and the next call works', async () => {
    const store = new PostgresSessionStore({ connectionString: proxy.url(url()), max: 2 });
    try {
      const id = sid('cut');
      const lease = await create(store, id);
      const cases = [
        // Before COMMIT was written: known not applied.
        { match: 'UPDATE polestar_sessions SET lease_ttl_ms', at: 'before-query', says: 'before COMMIT was sent', outcome: 'not-applied' },
        // COMMIT written to the socket: from the client's side it may or may not have arrived.
        { match: 'COMMIT', at: 'before-query', says: 'after COMMIT was sent', outcome: 'unknown' },
        { match: 'COMMIT', at: 'after-query', says: 'after COMMIT was sent', outcome: 'unknown' },
      ] as const;
      for (const c of cases) {
        const fault = proxy.arm({ match: c.match, at: c.at });
        const err = await rejection(store.renew(lease));
        await fault.done;
        expect(err.code).toBe('STORE_ERROR');
        expect(err.message).toContain('store.renew()');
        expect(err.message).toContain(c.says);
        expect((err.cause as { outcome?: unknown }).outcome).toBe(c.outcome);
        await store.renew(lease);
      }
    } finally {
      await store.close();
    }
  });

  test("a checked-out client whose connection dies is released with the error (the pool discards it); a user's clients never accumulate listeners", async () => {
    const real = new pg.Pool({ connectionString: proxy.url(url()), max: 1 });
    const releasedWith: unknown[] = [];
    const pool: PgPoolLike = {
      async connect() {
        const c = await real.connect();
        const release = c.release.bind(c);
        return Object.assign(c, {
          release(err?: Error | boolean) {
            releasedWith.push(err);
            release(err);
          },
        }) as PgPoolClientLike;
      },
    };
    const store = new PostgresSessionStore({ pool });
    try {
      const id = sid('client-error');
      const lease = await create(store, id);
      for (let i = 0; i < 20; i++) await store.renew(lease);
      const c = await real.connect();
      // pg-pool removes its own idle listener at checkout: none of the store's is left.
      expect(c.listenerCount('error')).toBe(0);
      c.release();
      releasedWith.length = 0;

      const holder = await holdRow(id); // direct, not through the proxy
      try {
        const renewing = rejection(store.renew(lease));
        await new Promise((r) => setTimeout(r, 150));
        proxy.cutAll(); // the store's client is checked out, waiting for the row
        const err = await renewing;
        expect(err.code).toBe('STORE_ERROR');
        expect(err.message).toContain('the connection failed before COMMIT was sent');
        expect(releasedWith).toHaveLength(1);
        expect(releasedWith[0]).toBeInstanceOf(Error);
      } finally {
        await holder.end();
      }
      await store.renew(lease);
      expect(releasedWith.slice(1)).toEqual([undefined]);
    } finally {
      await store.close();
      await real.end();
    }
  });

  test("the store listens for errors on a user's pool while it is open, and stops when it closes", async () => {
    const pool = new pg.Pool({ connectionString: url(), max: 1 });
    expect(pool.listenerCount('error')).toBe(0);
    const a = new PostgresSessionStore({ pool });
    const b = new PostgresSessionStore({ pool });
    expect(pool.listenerCount('error')).toBe(1);
    await a.close();
    expect(pool.listenerCount('error')).toBe(1);
    await b.close();
    expect(pool.listenerCount('error')).toBe(0);
    await pool.end();
  });

  test('a pool or client that throws synchronously makes the call reject, never throw', async () => {
    const throwing: PgPoolLike = {
      connect() {
        throw new Error('connect exploded');
      },
    };
    const s1 = new PostgresSessionStore({ pool: throwing });
    let p: Promise<unknown> | undefined;
    expect(() => {
      p = s1.load('x');
    }).not.toThrow();
    const e1 = await rejection(p as Promise<unknown>);
    expect(e1.code).toBe('STORE_ERROR');
    expect(e1.message).toContain('connect exploded');
    await s1.close();

    const client = Object.assign(new EventEmitter(), {
      query(): Promise<never> {
        throw new Error('query exploded');
      },
      release() {
        throw new Error('release exploded');
      },
    });
    const s2 = new PostgresSessionStore({ pool: { connect: () => Promise.resolve(client) } });
    const e2 = await rejection(s2.list());
    expect(e2.code).toBe('STORE_ERROR');
    expect(e2.message).toContain('query exploded');
    expect(client.listenerCount('error')).toBe(0);
    await s2.close();
  });
});
