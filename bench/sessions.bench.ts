/**
 * Durable sessions benchmark (issue 12's targets):
 *
 * - turn commit cost: a `DurableSession.turn` that appends one message and changes one
 *   persisted local, against the same turn on a plain in-memory `Session`; the difference
 *   is what durability costs per turn (p50 / p95), on the memory store, on SQLite (a file
 *   in a temporary directory, fsync'd commits) and on PostgreSQL (loopback, when
 *   reachable: `POLESTAR_TEST_PG_URL` or postgres://postgres@127.0.0.1:5432/postgres);
 * - resuming a session of 1,000 messages (lease, load, replay, restore), p50.
 *
 * - with `--contention` (PostgreSQL only): 2 processes share 200 sessions and drive each to
 *   5 committed turns (resume, one turn, close; a busy session is skipped and retried),
 *   then every session is checked for exactly 5 turns, no lost and no duplicated one;
 *   the throughput in committed turns per second is reported.
 *
 * Targets: commit overhead p50 memory <= 50 µs, SQLite <= 2 ms, PostgreSQL <= 5 ms;
 * resume of 1,000 messages <= 50 ms.
 *
 * Run alone: `npm run build:run && node .build/bench/sessions.bench.js [--quick] [--contention]`.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, openSession, type LocalSerializer, type SessionStore } from '../src/index.js';
import { SqliteSessionStore } from '../src/sessions/sqlite.js';

class Counter {
  n = 0;
}
const counterSerializer: LocalSerializer<Counter> = {
  key: 'bench.counter',
  version: 1,
  scope: 'agent',
  serialize: (c) => c.n,
  deserialize: (d) => Object.assign(new Counter(), { n: d as number }),
};

const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const TURNS = quick ? 100 : 400;
const RESUMES = quick ? 5 : 15;

async function serverOn(store: SessionStore): Promise<Server> {
  const server = new Server();
  server.registerLocal(Counter, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Counter, counterSerializer]] }));
  await server.finish();
  return server;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const ms = (ns: number): number => ns / 1e6;
const now = (): number => Number(process.hrtime.bigint());

interface StoreResult {
  readonly store: string;
  readonly plainP50Ms: number;
  readonly durableP50Ms: number;
  readonly durableP95Ms: number;
  readonly overheadP50Ms: number;
  readonly resume1000P50Ms: number;
}

async function measure(name: string, store: SessionStore): Promise<StoreResult> {
  const server = await serverOn(store);
  const app = server.createContext();
  const tag = `${name}-${process.pid}-${Date.now()}`;

  // plain in-memory session turns (the floor)
  const plainAgent = await app.get(Sessions).create({ agentId: `plain-${tag}`, sessionId: `plain-${tag}` });
  const plain = openSession(plainAgent.agent);
  const plainTimes: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const t0 = now();
    await plain.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: `message ${i}` });
      turnCtx.get(Counter).n++;
    });
    plainTimes.push(now() - t0);
  }
  await plainAgent.dispose();

  // durable turns
  const durable = await app.get(Sessions).create({ agentId: `a-${tag}`, sessionId: `s-${tag}` });
  const times: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const t0 = now();
    await durable.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: `message ${i}` });
      turnCtx.get(Counter).n++;
    });
    times.push(now() - t0);
  }
  await durable.close();

  // a session of 1,000 messages, resumed
  const big = await app.get(Sessions).create({ agentId: `big-${tag}`, sessionId: `big-${tag}` });
  for (let i = 0; i < 10; i++) {
    await big.turn((_c, session) => {
      for (let j = 0; j < 100; j++) session.history.append({ role: j % 2 === 0 ? 'user' : 'assistant', content: `message ${i * 100 + j} `.repeat(8) });
    });
  }
  await big.close();
  const resumes: number[] = [];
  for (let i = 0; i < RESUMES; i++) {
    const t0 = now();
    const s = await app.get(Sessions).resume({ agentId: `big-${tag}`, sessionId: `big-${tag}` });
    resumes.push(now() - t0);
    if (s.session.history.length !== 1000) throw new Error(`resumed ${s.session.history.length} messages, expected 1000`);
    await s.close();
  }
  for (const id of [`s-${tag}`, `big-${tag}`, `plain-${tag}`]) await app.get(Sessions).delete(id);
  await server.dispose();

  plainTimes.sort((a, b) => a - b);
  times.sort((a, b) => a - b);
  resumes.sort((a, b) => a - b);
  const plainP50 = ms(quantile(plainTimes, 0.5));
  const p50 = ms(quantile(times, 0.5));
  return {
    store: name,
    plainP50Ms: plainP50,
    durableP50Ms: p50,
    durableP95Ms: ms(quantile(times, 0.95)),
    overheadP50Ms: p50 - plainP50,
    resume1000P50Ms: ms(quantile(resumes, 0.5)),
  };
}

/** Runs the bench and returns one row per store. */
export async function run(): Promise<StoreResult[]> {
  const rows: StoreResult[] = [];
  rows.push(await measure('memory', new MemorySessionStore()));
  const dir = mkdtempSync(join(tmpdir(), 'polestar-bench-sessions-'));
  try {
    const sqlite = new SqliteSessionStore({ path: join(dir, 'bench.db') });
    rows.push(await measure('sqlite', sqlite));
    await sqlite.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const url = PG_URL;
  try {
    const { PostgresSessionStore } = await import('../src/sessions/postgres.js');
    const pgStore = new PostgresSessionStore({ connectionString: url, max: 2 });
    try {
      rows.push(await measure('postgres', pgStore));
    } finally {
      await pgStore.close();
    }
  } catch (err) {
    console.warn(`sessions bench: PostgreSQL skipped (${url}: ${err instanceof Error ? err.message : String(err)})`);
  }
  return rows;
}

const PG_URL = process.env.POLESTAR_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const CONTENTION_SESSIONS = 200;
const CONTENTION_TURNS = 5;

/** One contending process: passes over the shared sessions until each has its turns. */
async function contentionWorker(prefix: string): Promise<void> {
  const { PostgresSessionStore } = await import('../src/sessions/postgres.js');
  const store = new PostgresSessionStore({ connectionString: PG_URL, max: 2 });
  const server = await serverOn(store);
  const sessions = server.createContext().get(Sessions);
  let committed = 0;
  let busy = 0;
  for (let done = false; !done; ) {
    done = true;
    for (let i = 0; i < CONTENTION_SESSIONS; i++) {
      let s;
      try {
        s = await sessions.resume({ agentId: `${prefix}-a${i}`, sessionId: `${prefix}-s${i}` });
      } catch (err) {
        if ((err as { code?: string }).code !== 'SESSION_BUSY') throw err;
        busy++;
        done = false;
        continue;
      }
      if (s.committedTurn < CONTENTION_TURNS) {
        const turn = s.committedTurn + 1;
        await s.turn((_c, session) => void session.history.append({ role: 'user', content: `${process.pid}:${turn}` }));
        committed++;
        if (s.committedTurn < CONTENTION_TURNS) done = false;
      }
      await s.close();
    }
  }
  await server.dispose();
  await store.close();
  console.log(JSON.stringify({ pid: process.pid, committed, busy }));
}

/** The parent: creates the sessions, runs 2 workers, checks every session. */
async function contention(): Promise<void> {
  const { PostgresSessionStore } = await import('../src/sessions/postgres.js');
  const { spawn } = await import('node:child_process');
  const store = new PostgresSessionStore({ connectionString: PG_URL, max: 2 });
  const server = await serverOn(store);
  const sessions = server.createContext().get(Sessions);
  const prefix = `contention-${process.pid}-${Date.now()}`;
  for (let i = 0; i < CONTENTION_SESSIONS; i++) await (await sessions.create({ agentId: `${prefix}-a${i}`, sessionId: `${prefix}-s${i}` })).close();
  const t0 = now();
  const outputs = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [process.argv[1], '--contention-worker', prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`contention worker exited with ${code}`))));
        }),
    ),
  );
  const seconds = (now() - t0) / 1e9;
  const workers = outputs.map((o) => JSON.parse(o.trim().split('\n').pop() as string) as { committed: number; busy: number });
  let bad = 0;
  for (let i = 0; i < CONTENTION_SESSIONS; i++) {
    const s = await sessions.resume({ agentId: `${prefix}-a${i}`, sessionId: `${prefix}-s${i}` });
    const turns = s.session.history.messages.map((m) => Number(m.content.split(':')[1]));
    if (s.committedTurn !== CONTENTION_TURNS || turns.join(',') !== '1,2,3,4,5') bad++;
    await s.close();
    await sessions.delete(`${prefix}-s${i}`);
  }
  await server.dispose();
  await store.close();
  const total = workers.reduce((n, w) => n + w.committed, 0);
  console.log(
    `contention: 2 processes x ${CONTENTION_SESSIONS} sessions x ${CONTENTION_TURNS} turns on PostgreSQL: ${total} turns committed ` +
      `(${workers.map((w) => w.committed).join(' + ')}), ${workers.reduce((n, w) => n + w.busy, 0)} busy refusals, ` +
      `${bad} session(s) with a lost or duplicated turn, ${(total / seconds).toFixed(0)} turns/s (${seconds.toFixed(1)} s, each turn = resume + turn + close)`,
  );
  if (bad > 0 || total !== CONTENTION_SESSIONS * CONTENTION_TURNS) process.exitCode = 1;
}

const workerAt = process.argv.indexOf('--contention-worker');
if (workerAt > 0) {
  await contentionWorker(process.argv[workerAt + 1]);
} else if (process.argv.includes('--contention')) {
  await contention();
} else if (process.argv[1]?.endsWith('sessions.bench.js')) {
  const rows = await run();
  console.log(`durable sessions, ${TURNS} turns per store, node ${process.version}`);
  console.log('store     plain p50   durable p50  durable p95  overhead p50  resume 1,000 msgs p50');
  for (const r of rows) {
    const f = (x: number): string => `${x.toFixed(3)} ms`.padStart(11);
    console.log(`${r.store.padEnd(9)}${f(r.plainP50Ms)}  ${f(r.durableP50Ms)}  ${f(r.durableP95Ms)}  ${f(r.overheadP50Ms)}   ${f(r.resume1000P50Ms)}`);
  }
  console.log(JSON.stringify(rows));
}
