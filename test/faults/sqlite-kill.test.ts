/**
 * Fault soak: workers on one SQLite file killed with SIGKILL at seeded random points (in a
 * turn, in a commit, between turns), each followed by a new worker that resumes the session
 * under the same stable owner id; then a checker reads the file through the public API and
 * compares it with what every worker saw acknowledged. The seed is FAULTS_SEED (printed).
 * Workers run test/faults/support/turn-worker.mjs over the compiled sources (.build).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { check, createSessions, print, readLog, ZERO } from './support/checker.js';
import { assertBuilt, killAll, removeScratch, seeded, sleep, spawnWorker, type ProcessEnd } from './support/procs.js';

const TTL = 1000;
const SEED = Number(process.env.FAULTS_SEED ?? 22);
const dir = mkdtempSync(join(tmpdir(), 'polestar-faults-kill-'));
afterAll(() => {
  killAll();
  removeScratch(dir);
});

test('SQLite, kill -9 at random points: nothing acknowledged is lost or doubled, every session resumes', async () => {
  assertBuilt();
  const path = join(dir, 'kill.db');
  const store = new SqliteSessionStore({ path });
  const targets = [0, 1].map((i) => ({ sessionId: `kill-${i}`, agentId: `kill-agent-${i}` }));
  await createSessions(store, targets);
  const random = seeded(SEED);
  const logs: string[] = [];
  const ends: ProcessEnd[] = [];
  const ROUNDS = 5;

  // One chain of workers per session, both chains at once (so the file is shared and contended).
  await Promise.all(
    targets.map(async (target, slot) => {
      for (let round = 0; round <= ROUNDS; round++) {
        const last = round === ROUNDS;
        const log = join(dir, `kill-${slot}-${round}.log`);
        logs.push(log);
        const w = spawnWorker(
          {
            id: `k${slot}r${round}`,
            log,
            store: { kind: 'sqlite', path },
            ttlMs: TTL,
            owner: `faults-kill-slot-${slot}`,
            sessions: [target],
            mode: 'hold',
            turns: last ? 5 : 500,
            deadlineMs: last ? 10_000 : 5000,
            openTimeoutMs: 10_000,
          },
          20_000,
        );
        if (!last) {
          // Kill at a random point after the worker is up: in its resume, in a turn, in a commit.
          await w.waitFor((l) => l.t === 'start', 15_000).catch(() => undefined);
          await sleep(Math.floor(random() * 300));
          w.signal('SIGKILL');
        }
        ends.push(await w.ended);
      }
    }),
  );

  const report = print(await check({ scenario: `sqlite-kill seed=${SEED}`, store, sessions: targets, logs, ends, ttlMs: TTL }));
  await store.close();
  expect(report.problems).toEqual([]);
  expect(report.counts).toEqual(ZERO);
  // The soak did something, and the last worker of each chain (never killed) got all its turns in.
  expect(report.acked).toBeGreaterThan(ROUNDS);
  for (const slot of [0, 1]) expect(readLog(join(dir, `kill-${slot}-${ROUNDS}.log`)).find((l) => l.t === 'done')).toMatchObject({ acked: 5, failed: 0 });
  expect(report.committedTurns).toBeGreaterThanOrEqual(report.acked);
}, 60_000);
