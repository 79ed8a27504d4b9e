/**
 * The SQLite store runs its connection in a worker thread: the event loop keeps running
 * while a commit is in flight, a worker that dies is a `STORE_ERROR` of the call it served
 * (never a crash of the process) and the store goes on with a fresh one, and an idle or
 * closed store lets the process exit.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AgentsPlugin, Server, SessionError, Sessions, SessionsPlugin } from '../../../src/index.js';
import { SqliteSessionStore } from '../../../src/sessions/sqlite.js';
import { probe } from '../../../src/testing/probe.js';
import { BUILD_DIR, assertBuilt } from '../../faults/support/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-sqlite-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (): string => join(dir, `w${++n}.db`);

test('timers fire while a commit is in flight: the statements and the fsync run off the event loop', async () => {
  const store = new SqliteSessionStore({ path: file() });
  const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 60_000, locals: [] });
  await probe.sqliteWorkerReady(store);
  const body = 'x'.repeat(4000);
  let ticksInFlight = 0;
  for (let r = 0; r < 3; r++) {
    const a = await store.begin(lease);
    // 8 MB of events: the worker takes tens of milliseconds to write them
    const events = Array.from({ length: 2000 }, (_, i) => ({ kind: 'history/append', body: { role: 'user', content: `${body}${i}` } }));
    const timer = setInterval(() => ticksInFlight++, 1);
    try {
      await store.commit(lease, { ...a, events, locals: [] });
    } finally {
      clearInterval(timer);
    }
  }
  // A connection on the main thread runs a commit in promise jobs: at most one timer turn
  // per commit (the yield after it). Measured: 1 per commit on the main thread, 40 or more
  // in the worker.
  expect(ticksInFlight).toBeGreaterThanOrEqual(15);
  expect((await store.load('s')).info.committedTurn).toBe(3);
  await store.close();
}, 60_000);

describe('a worker thread that dies', () => {
  test('during a commit: the turn rejects with STORE_ERROR, nothing of it is stored, and the next turns commit on a fresh worker', async () => {
    const store = new SqliteSessionStore({ path: file() });
    const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store }));
    await server.finish();
    const sessions = server.createContext().get(Sessions);
    const durable = await sessions.create({ agentId: 'a', sessionId: 's' });
    await durable.turn((_c, s) => void s.history.append({ role: 'user', content: 'kept' }));
    await probe.sqliteWorkerReady(store);
    let kill = false;
    probe.beforeCommit(store, async () => {
      if (!kill) return;
      kill = false;
      await probe.terminateSqliteWorker(store);
    });
    const failed = await durable
      .turn((_c, s) => {
        s.history.append({ role: 'user', content: 'lost' });
        kill = true;
      })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(SessionError);
    expect(failed).toMatchObject({ code: 'STORE_ERROR' });
    expect(durable.committedTurn).toBe(1);
    await durable.turn((_c, s) => void s.history.append({ role: 'user', content: 'after' }));
    await probe.sqliteWorkerReady(store);
    await durable.turn((_c, s) => void s.history.append({ role: 'user', content: 'on the fresh worker' }));
    expect(durable.committedTurn).toBe(3);
    await durable.close();
    const again = await sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['kept', 'after', 'on the fresh worker']);
    await server.dispose();
    await store.close();
  });

  test('with a statement in flight: that call rejects with STORE_ERROR naming the worker, and the store recovers', async () => {
    const store = new SqliteSessionStore({ path: file() });
    await store.list();
    await probe.sqliteWorkerReady(store);
    const inFlight = store.list();
    await probe.terminateSqliteWorker(store);
    const err = await inFlight.then(
      () => undefined,
      (e: unknown) => e,
    );
    // (the reply may have arrived before the thread ended: then the call simply succeeded)
    if (err !== undefined) {
      expect(err).toBeInstanceOf(SessionError);
      expect(err).toMatchObject({ code: 'STORE_ERROR', message: expect.stringMatching(/worker thread .* ended/) });
    }
    expect(await store.list()).toEqual({ items: [] });
    await probe.sqliteWorkerReady(store);
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 60_000, locals: [] });
    expect(lease.epoch).toBe(1);
    expect((await store.list()).items.map((i) => i.sessionId)).toEqual(['s']);
    await store.close();
  });
});

const CHILD = `
const [build, path, close] = JSON.parse(process.argv[1]);
const { SqliteSessionStore } = await import(build + 'src/sessions/sqlite.js');
const store = new SqliteSessionStore({ path });
const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 60000, locals: [] });
await store._workerReady();
const a = await store.begin(lease);
await store.commit(lease, { ...a, events: [], locals: [] });
if (close) await store.close();
console.log(JSON.stringify({ turn: a.turn }));
`;

function runChild(path: string, close: boolean): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const build = pathToFileURL(BUILD_DIR.endsWith('/') ? BUILD_DIR : `${BUILD_DIR}/`).href;
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify([build, path, close])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    }),
  );
}

describe('the process exits', () => {
  beforeAll(() => assertBuilt());

  test.each([
    ['after close()', true],
    ['with the store idle and never closed', false],
  ])('%s', async (_label, close) => {
    const r = await runChild(file(), close);
    expect({ code: r.code, stderr: r.stderr.trim(), stdout: r.stdout.trim() }).toEqual({ code: 0, stderr: '', stdout: JSON.stringify({ turn: 1 }) });
  }, 30_000);
});
