/**
 * Fault: a PostgreSQL lease holder frozen (SIGSTOP) inside its commit transaction, between
 * the fenced writes and COMMIT, with the session's row lock held. Another process must get
 * a bounded answer (`SESSION_BUSY` or `STORE_LOCKED`, never a hang), take the session over
 * once the lease has expired, and the frozen one's late commit must not land when it is
 * continued (SIGCONT): its turn rejects and its message is not stored, while its retry may
 * be. A database of its own on the shared server (see test/sessions/pg-target.ts).
 * Workers run test/faults/support/turn-worker.mjs over .build; the freeze is its
 * `stopAtCommit` hook (a pool wrapper that SIGSTOPs the process before sending COMMIT).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { createTestDatabase, describePg, pgTarget } from '../sessions/pg-target.js';
import { check, createSessions, print, ZERO } from './support/checker.js';
import { assertBuilt, killAll, removeScratch, sleep, spawnWorker, type ProcessEnd } from './support/procs.js';

const TTL = 1500;
const STORE_TIMEOUT = 2000;
const dir = mkdtempSync(join(tmpdir(), 'polestar-faults-stop-'));
afterAll(() => {
  killAll();
  removeScratch(dir);
});

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
describePg(target)('PostgreSQL, a holder frozen inside its commit transaction', () => {
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'faults_stop');
  });
  afterAll(async () => {
    await db?.drop();
  });

  test('the other process gets a bounded refusal, takes over after the TTL, and the late commit is fenced', async () => {
    assertBuilt();
    const url = (db as { url: string }).url;
    const store = new PostgresSessionStore({ connectionString: url, max: 2 });
    const targets = [{ sessionId: 'stop-0', agentId: 'stop-agent-0' }];
    await createSessions(store, targets);
    const logA = join(dir, 'frozen.log');
    const logB = join(dir, 'taker.log');
    const common = { store: { kind: 'postgres', url, max: 2 } as const, ttlMs: TTL, storeTimeoutMs: STORE_TIMEOUT, sessions: targets, mode: 'hold' as const };
    const a = spawnWorker({ ...common, id: 'frozen', log: logA, turns: 6, deadlineMs: 40_000, openTimeoutMs: 30_000, stopAtCommit: 3 }, 55_000);
    const ends: ProcessEnd[] = [];
    let contAt = 0;
    try {
      await a.waitFor((l) => l.t === 'stopping', 20_000);
      await sleep(100);
      const b = spawnWorker({ ...common, id: 'taker', log: logB, turns: 3, deadlineMs: 25_000, openTimeoutMs: 25_000 }, 35_000);
      await b.waitFor((l) => l.t === 'done', 30_000).catch(() => undefined);
      contAt = Date.now();
      a.signal('SIGCONT', false);
      ends.push(await b.ended, await a.ended);

      const report = print(await check({ scenario: 'pg-sigstop-in-commit', store, sessions: targets, logs: [logA, logB], ends, ttlMs: TTL }));
      expect(report.problems).toEqual([]);
      expect(report.counts).toEqual(ZERO);

      // Every refusal the taker got was bounded and said why.
      const refused = b.lines.filter((l) => l.t === 'refused');
      for (const r of refused) {
        expect(['SESSION_BUSY', 'STORE_LOCKED']).toContain(r.code);
        expect(r.ms as number).toBeLessThanOrEqual(STORE_TIMEOUT + 1000);
      }
      // It took the session over while the holder was still frozen, and got its turns in.
      const acks = b.lines.filter((l) => l.t === 'ack');
      expect(acks).toHaveLength(3);
      expect(acks[0].at as number).toBeLessThan(contAt);
      // The frozen turn (its 3rd message) was rejected once continued: fenced, not committed.
      const frozen = a.lines.find((l) => l.t === 'reject' && l.mid === 'frozen-m3' && l.try === 1);
      expect(frozen).toBeDefined();
      expect(['LEASE_LOST', 'STORE_ERROR']).toContain(frozen?.code);
    } finally {
      a.signal('SIGCONT', false);
      await store.close();
    }
  }, 60_000);
});
