/**
 * The started record of a turn is written without waiting for its flush to disk (SQLite at
 * `synchronous=NORMAL` for that one transaction, PostgreSQL with `synchronous_commit = off`).
 * What a process crash must still show, on both stores, through the public API: the turns
 * committed before it, and the attempt it cut off reported in `interruptedTurns` (with the
 * events it flushed). On SQLite the store's connection is back at `synchronous=FULL` after
 * every begin, so every other write stays fsync'd.
 *
 * The children run over the compiled sources (.build, or POLESTAR_FAULTS_BUILD; npm test
 * builds .build in pretest), so they can be killed with SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Sessions, TurnLog, type SessionStore } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { probe } from '../../src/testing/probe.js';
import { BUILD_DIR, assertBuilt } from '../faults/support/procs.js';
import { serverOn, sleep } from './harness.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const TTL = 1000;
const FULL = 2;

/**
 * The child: commits `turns` turns, then begins one more, flushes a `tool/call` event when
 * `flush` is set, says `mid-turn` and waits to be killed.
 */
const CHILD = `
const [build, store, sessionId, turns, flush] = JSON.parse(process.argv[1]);
const { AgentsPlugin, Server, Sessions, SessionsPlugin, TurnLog } = await import(build + 'src/index.js');
const s = store.kind === 'sqlite'
  ? new (await import(build + 'src/sessions/sqlite.js')).SqliteSessionStore({ path: store.path })
  : new (await import(build + 'src/sessions/postgres.js')).PostgresSessionStore({ connectionString: store.url, max: 2 });
const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: s, leaseTtlMs: ${TTL} }));
await server.finish();
const d = await server.createContext().get(Sessions).create({ agentId: 'a-' + sessionId, sessionId });
for (let i = 1; i <= turns; i++) await d.turn((_c, session) => void session.history.append({ role: 'user', content: 'turn ' + i }));
process.stdout.write(JSON.stringify({ event: 'committed', turn: d.committedTurn }) + '\\n');
await d.turn(async (turnCtx, session) => {
  session.history.append({ role: 'user', content: 'cut off' });
  if (flush) {
    turnCtx.get(TurnLog).record('tool/call', { name: 'charge' });
    await turnCtx.get(TurnLog).flush();
  }
  process.stdout.write(JSON.stringify({ event: 'mid-turn' }) + '\\n');
  await new Promise(() => setInterval(() => undefined, 1000));
});
`;

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
});

/** Runs the child until it is mid-turn, kills it with SIGKILL, and returns the turn it had committed. */
async function crashMidTurn(store: Record<string, unknown>, sessionId: string, turns: number, flush: boolean): Promise<number> {
  const build = pathToFileURL(BUILD_DIR.endsWith('/') ? BUILD_DIR : `${BUILD_DIR}/`).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify([build, store, sessionId, turns, flush])], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const lines: Record<string, unknown>[] = [];
  const seen = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      if (lines.some((m) => m.event === 'mid-turn')) resolve();
    });
    void exited.then((code) => reject(new Error(`child exited (${code}) before it was mid-turn; stderr: ${stderr}`)));
    setTimeout(() => reject(new Error(`child not mid-turn within 20 s; stderr: ${stderr}`)), 20_000).unref();
  });
  await seen;
  child.kill('SIGKILL');
  await exited;
  const committed = lines.find((m) => m.event === 'committed');
  return committed?.turn as number;
}

/** Resumes in this process, retrying while the killed owner's lease is still live. */
async function resumeWhenFree(sessions: Sessions, agentId: string, sessionId: string) {
  const deadline = Date.now() + 10 * TTL;
  for (;;) {
    try {
      return await sessions.resume({ agentId, sessionId });
    } catch (err) {
      if ((err as { code?: string }).code !== 'SESSION_BUSY' || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

function crashSuite(name: string, storeConfig: () => Record<string, unknown>, getStore: () => SessionStore): void {
  describe(`${name}: a process killed mid-turn`, () => {
    beforeAll(() => assertBuilt());

    test.each([
      ['without a flush', false],
      ['after TurnLog.flush()', true],
    ])('%s: the committed turns are kept and the cut-off attempt is reported', async (_label, flush) => {
      const id = `crash-${flush ? 'flushed' : 'bare'}`;
      expect(await crashMidTurn(storeConfig(), id, 2, flush)).toBe(2);
      const h = await serverOn(getStore(), { leaseTtlMs: TTL });
      const s = await resumeWhenFree(h.ctx.get(Sessions), `a-${id}`, id);
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.messages.map((m) => m.content)).toEqual(['turn 1', 'turn 2']);
      expect(s.interruptedTurns.map((t) => [t.turn, t.events.map((e) => [e.kind, e.status])])).toEqual([
        [3, flush ? [['history/append', 'aborted'], ['tool/call', 'aborted']] : []],
      ]);
      // The next turn commits on top of it.
      await s.turn(async (turnCtx, session) => {
        session.history.append({ role: 'user', content: 'after the crash' });
        turnCtx.get(TurnLog).record('note', { n: 1 });
      });
      expect(s.committedTurn).toBe(3);
      await s.close();
      const again = await h.ctx.get(Sessions).resume({ agentId: `a-${id}`, sessionId: id });
      expect(again.interruptedTurns).toEqual([]);
      expect(again.session.history.messages.map((m) => m.content)).toEqual(['turn 1', 'turn 2', 'after the crash']);
      await h.server.dispose();
    }, 60_000);
  });
}

describe('SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-started-'));
  const path = join(dir, 'started.db');
  let store: SqliteSessionStore;
  beforeAll(() => {
    store = new SqliteSessionStore({ path });
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  crashSuite('SQLite', () => ({ kind: 'sqlite', path }), () => store);

  test('the connection is back at synchronous=FULL after every begin, committed or refused', async () => {
    const h = await serverOn(store, { leaseTtlMs: 30_000 });
    const s = await h.ctx.get(Sessions).create({ agentId: 'sync-agent', sessionId: 'sync' });
    expect(await probe.sqliteSynchronous(store)).toBe(FULL);
    await s.turn((_c, session) => void session.history.append({ role: 'user', content: 'one' }));
    expect(await probe.sqliteSynchronous(store)).toBe(FULL);
    await expect(
      s.turn(() => {
        throw new Error('tool failed');
      }),
    ).rejects.toThrow('tool failed');
    expect(await probe.sqliteSynchronous(store)).toBe(FULL);
    // A begin refused by the fence (a lease of another epoch) rolls back: still FULL.
    const lease = probe.sessionLease(s);
    if (lease === undefined) throw new Error('the session holds no lease');
    await expect(store.begin({ ...lease, epoch: lease.epoch + 1 })).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(await probe.sqliteSynchronous(store)).toBe(FULL);
    await h.server.dispose();
  });
});

const target = await pgTarget();
describePg(target)('PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let store: PostgresSessionStore;
  beforeAll(async () => {
    if (!target.ok) return;
    db = await createTestDatabase(target.adminUrl, 'started');
    store = new PostgresSessionStore({ connectionString: db.url, max: 4 });
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  crashSuite('PostgreSQL', () => ({ kind: 'postgres', url: db.url }), () => store);
});
