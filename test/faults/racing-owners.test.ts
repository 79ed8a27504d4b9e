/**
 * Fault soak: 3 processes racing for the same 2 sessions (resume → one turn → close, a
 * refused resume retried), on SQLite and on PostgreSQL (a database of its own on the shared
 * server; see test/sessions/pg-target.ts for when that part runs). The checker then reads the
 * store through the public API: no two owners' holds overlap, nothing acknowledged is lost,
 * nothing is stored twice. Workers run test/faults/support/turn-worker.mjs over .build.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionStore } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { createTestDatabase, describePg, pgTarget } from '../sessions/pg-target.js';
import { check, createSessions, print, ZERO } from './support/checker.js';
import { assertBuilt, killAll, removeScratch, spawnWorker, type ProcessEnd, type WorkerStore } from './support/procs.js';

const TTL = 2000;
const WORKERS = 3;
const MESSAGES = 12;
const dir = mkdtempSync(join(tmpdir(), 'polestar-faults-race-'));
afterAll(() => {
  killAll();
  removeScratch(dir);
});

async function race(name: string, store: SessionStore, workerStore: WorkerStore): Promise<void> {
  assertBuilt();
  const targets = [0, 1].map((i) => ({ sessionId: `${name}-race-${i}`, agentId: `${name}-race-agent-${i}` }));
  await createSessions(store, targets);
  const logs: string[] = [];
  const startAt = Date.now() + 1500;
  const workers = Array.from({ length: WORKERS }, (_, i) => {
    const log = join(dir, `${name}-race-${i}.log`);
    logs.push(log);
    return spawnWorker(
      { id: `${name}-r${i}`, log, store: workerStore, ttlMs: TTL, sessions: targets, mode: 'cycle', pick: 'random', holdMs: 30, startAt, turns: MESSAGES, deadlineMs: 30_000, openTimeoutMs: 20_000 },
      45_000,
    );
  });
  const ends: ProcessEnd[] = await Promise.all(workers.map((w) => w.ended));
  const report = print(await check({ scenario: `${name}-race`, store, sessions: targets, logs, ends, ttlMs: TTL }));
  expect(report.problems).toEqual([]);
  expect(report.counts).toEqual(ZERO);
  for (const w of workers) expect(w.lines.some((l) => l.t === 'done')).toBe(true);
  // Contention makes resumes wait, never fail for good: almost every message gets in.
  expect(report.acked).toBeGreaterThanOrEqual((WORKERS * MESSAGES) / 2);
  const busy = workers.flatMap((w) => w.lines).filter((l) => l.t === 'refused').length;
  process.stdout.write(`faults[${name}-race] resumes refused and retried: ${busy}\n`);
}

test('SQLite, 3 processes racing for 2 sessions: owners never overlap, no turn lost or doubled', async () => {
  const path = join(dir, 'race.db');
  const store = new SqliteSessionStore({ path });
  try {
    await race('sqlite', store, { kind: 'sqlite', path });
  } finally {
    await store.close();
  }
}, 60_000);

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
describePg(target)('PostgreSQL', () => {
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'faults_race');
  });
  afterAll(async () => {
    await db?.drop();
  });
  test('PostgreSQL, 3 processes racing for 2 sessions: owners never overlap, no turn lost or doubled', async () => {
    const url = (db as { url: string }).url;
    const store = new PostgresSessionStore({ connectionString: url, max: 2 });
    try {
      await race('pg', store, { kind: 'postgres', url, max: 2 });
    } finally {
      await store.close();
    }
  }, 60_000);
});
