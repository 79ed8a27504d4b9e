/**
 * A transaction that holds a session's row and never ends (its process frozen by SIGSTOP,
 * say) used to make another process's acquire or renew wait on the row lock forever. The
 * PostgreSQL store now sets `lock_timeout` below the call's bound in the first statement of
 * each transaction: the wait ends with STORE_LOCKED, naming the session, within the bound.
 */
import pg from 'pg';
import { SessionError } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { STORE_BOUND } from '../../src/sessions/store/store-bound.js';
import { createTestDatabase, describePg, pgTarget } from '../sessions/pg-target.js';

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;

describePg(target)('a row held by a transaction that never ends', () => {
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'frozen');
  });
  afterAll(async () => {
    await db?.drop();
  });

  test('makes acquire and renew reject with STORE_LOCKED within the bound, not hang', async () => {
    const url = (db as { url: string }).url;
    const store = new PostgresSessionStore({ connectionString: url, max: 2 });
    const holder = new pg.Client({ connectionString: url });
    holder.on('error', () => undefined);
    try {
      await store.create({ sessionId: 's', agentId: 'a', owner: 'first', ttlMs: 200, locals: [] });
      const live = await store.create({ sessionId: 't', agentId: 'a', owner: 'first', ttlMs: 60_000, locals: [] });
      store[STORE_BOUND]({ callTimeoutMs: 500, leaseTtlMs: 30_000 });
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM polestar_sessions WHERE session_id IN ('s', 't') FOR UPDATE");
      await new Promise((r) => setTimeout(r, 250)); // the lease of "s" expired: acquire must wait for its row
      const outcome = (p: Promise<unknown>): Promise<unknown> =>
        Promise.race([p.then(() => 'resolved', (e: unknown) => e), new Promise((r) => setTimeout(() => r('still waiting after 3 s'), 3_000))]);
      const calls = [
        { id: 's', call: () => store.acquire('s', { owner: 'second', ttlMs: 60_000 }) },
        { id: 't', call: () => store.renew(live) },
      ];
      for (const { id, call } of calls) {
        const t0 = Date.now();
        const err = await outcome(call());
        expect(err).toBeInstanceOf(SessionError);
        expect((err as SessionError).code).toBe('STORE_LOCKED');
        expect((err as SessionError).message).toContain(`session "${id}"`);
        expect(Date.now() - t0).toBeLessThan(500);
      }
    } finally {
      await holder.end().catch(() => undefined);
      await store.close();
    }
  });
});
