/**
 * Faults of a SQLite file: the disk filling up mid-run (a 16 MB tmpfs filled with a
 * ballast file, then emptied; skipped with the reason where mounting a tmpfs is not
 * allowed), and the file's write lock held by another process (`BEGIN IMMEDIATE`) past the
 * busy timeout. Either way turns are refused with a clear code while it lasts
 * (`STORE_ERROR`, `STORE_LOCKED`), nothing acknowledged is lost, and the session goes on
 * once the fault is gone. Workers run test/faults/support/turn-worker.mjs over .build.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { check, createSessions, print, ZERO } from './support/checker.js';
import { assertBuilt, killAll, removeScratch, SQLITE_LOCKER, sleep, spawnScript, spawnWorker, type ProcessEnd } from './support/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-faults-disk-'));
const mnt = join(dir, 'tmpfs');
mkdirSync(mnt);

/** Mounts a 16 MB tmpfs on `mnt`, or says why it can not. */
function mountTmpfs(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: `mounting a tmpfs needs Linux (this is ${process.platform})` };
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt], { encoding: 'utf8' });
  if (r.error !== undefined) return { ok: false, reason: `mount is not available: ${r.error.message}` };
  if (r.status !== 0) return { ok: false, reason: `mount -t tmpfs is not allowed here: ${(r.stderr || r.stdout).trim()}` };
  return { ok: true };
}
const mounted = mountTmpfs();

afterAll(() => {
  killAll();
  if (mounted.ok) spawnSync('umount', ['-l', mnt]);
  try {
    removeScratch(dir);
  } catch (err) {
    console.warn(`could not remove ${dir}: ${(err as Error).message}`);
  }
});

/** Writes zeros to `path` until the filesystem is full. */
function fillDisk(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  let written = 0;
  try {
    for (;;) {
      try {
        written += writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        // Fill the last partial block too.
        for (let size = 4096; size >= 1; size = Math.floor(size / 2)) {
          try {
            for (;;) written += writeSync(fd, chunk.subarray(0, size));
          } catch {
            // smaller next
          }
        }
        return written;
      }
    }
  } finally {
    closeSync(fd);
  }
}

if (!mounted.ok) console.warn(`SQLite disk-full fault test skipped: ${mounted.reason} (it needs root, or a container allowed to mount a tmpfs)`);
(mounted.ok ? test : test.skip)(
  'SQLite on a full disk: turns are refused with STORE_ERROR, nothing is lost, and the session goes on once there is room',
  async () => {
    assertBuilt();
    const path = join(mnt, 'full.db');
    const store = new SqliteSessionStore({ path });
    const targets = [{ sessionId: 'full-0', agentId: 'full-agent-0' }];
    await createSessions(store, targets);
    const log = join(dir, 'full.log');
    const w = spawnWorker(
      { id: 'full', log, store: { kind: 'sqlite', path }, ttlMs: 3000, storeTimeoutMs: 3000, sessions: targets, mode: 'hold', turns: 120, pauseMs: 25, deadlineMs: 25_000, openTimeoutMs: 20_000 },
      40_000,
    );
    const ballast = join(mnt, 'ballast');
    let removedAt = 0;
    try {
      await w.waitFor((l) => l.t === 'ack' && l.turn === 3, 15_000);
      fillDisk(ballast);
      await w.waitFor((l) => l.t === 'reject', 10_000).catch(() => undefined);
      await sleep(600);
    } finally {
      rmSync(ballast, { force: true });
      removedAt = Date.now();
    }
    const ends: ProcessEnd[] = [await w.ended];
    const report = print(await check({ scenario: 'sqlite-disk-full', store, sessions: targets, logs: [log], ends, ttlMs: 3000 }));
    await store.close();
    expect(report.problems).toEqual([]);
    expect(report.counts).toEqual(ZERO);
    expect(report.rejections.STORE_ERROR ?? 0).toBeGreaterThan(0);
    expect(w.lines.some((l) => l.t === 'ack' && (l.at as number) > removedAt)).toBe(true);
  },
  60_000,
);

test('SQLite file locked by another process past the busy timeout: STORE_LOCKED while it lasts, then the session goes on', async () => {
  assertBuilt();
  const path = join(dir, 'locked.db');
  const store = new SqliteSessionStore({ path });
  const targets = [{ sessionId: 'locked-0', agentId: 'locked-agent-0' }];
  await createSessions(store, targets);
  const log = join(dir, 'locked.log');
  const w = spawnWorker(
    {
      id: 'locked',
      log,
      store: { kind: 'sqlite', path, busyTimeoutMs: 300 },
      ttlMs: 4000,
      storeTimeoutMs: 3000,
      sessions: targets,
      mode: 'hold',
      turns: 120,
      pauseMs: 25,
      deadlineMs: 25_000,
      openTimeoutMs: 20_000,
    },
    40_000,
  );
  await w.waitFor((l) => l.t === 'ack' && l.turn === 3, 15_000);
  const locker = spawnScript('sqlite-locker', SQLITE_LOCKER, { path, holdMs: 2000 }, 20_000);
  await locker.waitFor((l) => l.t === 'locked', 10_000);
  const unlocked = await locker.waitFor((l) => l.t === 'unlocked', 15_000);
  const ends: ProcessEnd[] = [await locker.ended, await w.ended];
  const report = print(await check({ scenario: 'sqlite-locked-file', store, sessions: targets, logs: [log], ends, ttlMs: 4000 }));
  await store.close();
  expect(report.problems).toEqual([]);
  expect(report.counts).toEqual(ZERO);
  expect(report.rejections.STORE_LOCKED ?? 0).toBeGreaterThan(0);
  // Nothing but the lock's code while it was held (a lost lease would be a turn lost to a fault that passes).
  expect(Object.keys(report.rejections).filter((c) => c !== 'STORE_LOCKED')).toEqual([]);
  expect(w.lines.some((l) => l.t === 'ack' && (l.at as number) > (unlocked.at as number))).toBe(true);
}, 60_000);
