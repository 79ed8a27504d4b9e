/**
 * Process-level durability (SPEC §12.2, §12.3), with real child processes on SQLite and
 * PostgreSQL: a process killed with SIGKILL mid-turn and resumed in another one, two
 * processes racing to resume one session, and a lease holder frozen with SIGSTOP past its
 * TTL that is fenced out after SIGCONT. The children run test/sessions/process-worker.mjs
 * over the compiled sources in .build (npm test builds them in pretest).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Sessions, inspect, type SessionStore } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { Memory, serverOn, sleep } from './harness.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const workerPath = fileURLToPath(new URL('./process-worker.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../.build/src/index.js', import.meta.url));
const TTL = 1000;

type Message = Record<string, unknown> & { event: string };

interface Worker {
  readonly child: ChildProcess;
  next(event?: string): Promise<Message>;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const c of children) {
    c.kill('SIGCONT');
    c.kill('SIGKILL');
  }
  children.clear();
});

function startWorker(config: Record<string, unknown>): Worker {
  const child = spawn(process.execPath, [workerPath, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const queue: Message[] = [];
  const waiters: ((m: Message) => void)[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    const m = JSON.parse(line) as Message;
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    async next(event) {
      const m =
        queue.shift() ??
        (await Promise.race([
          new Promise<Message>((resolve) => waiters.push(resolve)),
          exited.then((code) => {
            throw new Error(`worker exited (${code}) before saying anything more; stderr: ${stderr}`);
          }),
          new Promise<never>((_resolve, reject) => {
            setTimeout(() => reject(new Error(`worker said nothing for 20 s; stderr: ${stderr}`)), 20_000).unref();
          }),
        ]));
      if (event !== undefined && m.event !== event) throw new Error(`expected "${event}" from the worker, got ${JSON.stringify(m)}; stderr: ${stderr}`);
      return m;
    },
  };
}

/** Resumes in this process, retrying while the dead or frozen owner's lease is still live. */
async function resumeWhenFree(ctxSessions: Sessions, agentId: string, sessionId: string) {
  const deadline = Date.now() + 10 * TTL;
  for (;;) {
    try {
      return await ctxSessions.resume({ agentId, sessionId });
    } catch (err) {
      if ((err as { code?: string }).code !== 'SESSION_BUSY' || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

function processSuite(name: string, storeConfig: () => Record<string, unknown>, makeStore: () => SessionStore): void {
  describe(`${name}: real processes`, () => {
    let store: SessionStore;
    beforeAll(() => {
      if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build:run\` (npm test does it in pretest)`);
      store = makeStore();
    });
    afterAll(async () => {
      await store?.close();
    });

    test('kill -9 mid-turn, then resume in another process: the last committed turn is restored and the crashed turn is reported', async () => {
      const w = startWorker({ scenario: 'crash', store: storeConfig(), sessionId: 'crash', agentId: 'crash-agent', ttlMs: TTL, turns: 2 });
      expect(await w.next('committed')).toMatchObject({ turn: 2 });
      await w.next('mid-turn');
      w.child.kill('SIGKILL');
      await w.exited;

      const h = await serverOn(store, { leaseTtlMs: TTL });
      const s = await resumeWhenFree(h.ctx.get(Sessions), 'crash-agent', 'crash');
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.messages).toEqual([
        { role: 'user', content: 'turn 1' },
        { role: 'user', content: 'turn 2' },
      ]);
      expect(s.agent.ctx.get(Memory).count).toBe(2);
      expect(s.interruptedTurns.map((t) => [t.turn, t.events.map((e) => [e.kind, e.status])])).toEqual([
        [3, [['history/append', 'aborted'], ['tool/call', 'aborted']]],
      ]);
      await s.turn((_c, session) => void session.history.append({ role: 'user', content: 'after the crash' }));
      expect(s.committedTurn).toBe(3);
      await s.close();
      const again = await h.ctx.get(Sessions).resume({ agentId: 'crash-agent', sessionId: 'crash' });
      expect(again.interruptedTurns).toEqual([]);
      expect(again.session.history.messages.map((m) => m.content)).toEqual(['turn 1', 'turn 2', 'after the crash']);
      await h.server.dispose();
    });

    test('two processes race to resume one session: exactly one wins, the other gets SESSION_BUSY naming the holder', async () => {
      const h = await serverOn(store, { leaseTtlMs: TTL });
      await (await h.ctx.get(Sessions).create({ agentId: 'race-agent', sessionId: 'race' })).close();
      const config = { scenario: 'hold', store: storeConfig(), sessionId: 'race', agentId: 'race-agent', ttlMs: TTL };
      const workers = [startWorker(config), startWorker(config)];
      const first = await Promise.all(workers.map((w) => w.next()));
      const winners = first.filter((m) => m.event === 'resumed');
      const losers = first.filter((m) => m.event === 'refused');
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0]).toMatchObject({ code: 'SESSION_BUSY', holder: { owner: winners[0].owner } });
      expect(String(losers[0].message)).toContain(String(winners[0].owner));
      const winner = workers[first.indexOf(winners[0])];
      winner.child.stdin?.end();
      expect(await winner.next('closed')).toBeDefined();
      await Promise.all(workers.map((w) => w.exited));
      const s = await h.ctx.get(Sessions).resume({ agentId: 'race-agent', sessionId: 'race' });
      expect(s.committedTurn).toBe(0);
      await h.server.dispose();
    });

    test('a lease holder frozen (SIGSTOP) past its TTL loses the session; after SIGCONT it gets LEASE_LOST and can not commit', async () => {
      const h = await serverOn(store, { leaseTtlMs: TTL });
      await (await h.ctx.get(Sessions).create({ agentId: 'stop-agent', sessionId: 'stop' })).close();
      const w = startWorker({ scenario: 'stall', store: storeConfig(), sessionId: 'stop', agentId: 'stop-agent', ttlMs: TTL, stallMs: 400 });
      const inTurn = await w.next('in-turn');
      w.child.kill('SIGSTOP');
      try {
        const s = await resumeWhenFree(h.ctx.get(Sessions), 'stop-agent', 'stop');
        expect(inspect(s.agent.ctx).agent?.lease?.owner).not.toBe(inTurn.owner);
        expect(s.interruptedTurns.map((t) => t.turn)).toEqual([1]);
        await s.turn((_c, session) => void session.history.append({ role: 'user', content: 'from the new owner' }));
        w.child.kill('SIGCONT');
        expect(await w.next('turn-result')).toMatchObject({ result: 'LEASE_LOST', leaseLost: 'LEASE_LOST', disposed: true });
        await w.exited;
        await s.close();
      } finally {
        w.child.kill('SIGCONT');
      }
      const again = await h.ctx.get(Sessions).resume({ agentId: 'stop-agent', sessionId: 'stop' });
      expect(again.session.history.messages.map((m) => m.content)).toEqual(['from the new owner']);
      expect(again.committedTurn).toBe(1);
      await h.server.dispose();
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'polestar-sessions-proc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
processSuite(
  'SQLite',
  () => ({ kind: 'sqlite', path: join(dir, 'sessions.db') }),
  () => new SqliteSessionStore({ path: join(dir, 'sessions.db') }),
);

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
describePg(target)('PostgreSQL', () => {
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'processes');
  });
  afterAll(async () => {
    await db?.drop();
  });
  processSuite(
    'PostgreSQL',
    () => ({ kind: 'postgres', url: (db as { url: string }).url }),
    () => new PostgresSessionStore({ connectionString: (db as { url: string }).url, max: 4 }),
  );
});
