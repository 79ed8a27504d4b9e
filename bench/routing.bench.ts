/**
 * Routing benchmark: two service processes (owners `p0` and `p1`, bench/routing-worker.ts)
 * on one PostgreSQL database (loopback; `POLESTAR_TEST_PG_URL` or
 * postgres://postgres@127.0.0.1:5432/postgres names the server, a fresh
 * `polestar_bench_<random>` database is made on it and dropped after), both with
 * `handoff: 'idle'` and `handoffGraceMs: 0`, serving requests the way a load balancer
 * without sticky routing sends them.
 *
 * 1. `handoff`: a conversation held idle by p0 (its last turn done), its next message sent
 *    to p1, which opens it with `waitMs` (asking p0 to release it), then runs the turn; the
 *    time from sending that request to its reply, minus the same request once p1 holds the
 *    session (measured right after, on the same session): what the handoff adds.
 *    Target: median <= 50 ms.
 * 2. `release`: p1 waits for a session p0 holds (`open` with `waitMs: 10_000` and
 *    `handoff: 'never'`, so it does not ask); p0 closes it. The time from p0's close
 *    resolving to p1's open resolving, both read from the children's wall clocks
 *    (`performance.timeOrigin + performance.now()`, one machine). Target: median <= 100 ms.
 * 3. `cancel`: a turn in p0 waiting on `turnCtx.signal`, `sessions.cancel` sent to p1; the
 *    time from sending the cancel to p0's turn rejecting with `TURN_CANCELLED`.
 *    Target: median <= 1,000 ms.
 * 4. `routing`: 200 conversations (quick: 40) of 5 messages each, all at once, each message
 *    sent to a random process, a conversation's next message only after its previous reply
 *    (like a user). Then every session is loaded from a store in this process: a
 *    conversation with fewer than 5 committed turns is *lost*, a message stored more than
 *    once is *doubled* (target 0 for both); throughput in turns/s and the request latency
 *    p50 / p95 (sent to replied, in this process) are reported.
 *
 * Rounds 1–3: 20 each (quick: 5; cancel 10, quick 3), after one untimed warm-up round.
 * When PostgreSQL is unreachable the area reports one row saying so and succeeds.
 *
 * Run alone: `npm run build:run && node .build/bench/routing.bench.js [--quick]`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresSessionStore } from '../src/sessions/postgres.js';
import { budget, stats, yieldLoop, type Stats } from './harness.js';
import { row, runIfMain, single, withLoad, type BenchReport, type BenchRow } from './report.js';

const WORKER = fileURLToPath(new URL('./routing-worker.js', import.meta.url));
const ADMIN_URL = process.env.POLESTAR_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const quick = budget().name === 'quick';
/** Rounds of the handoff and release measurements. */
const ROUNDS = quick ? 5 : 20;
const CANCEL_ROUNDS = quick ? 3 : 10;
const CONVERSATIONS = quick ? 40 : 200;
const MESSAGES = 5;
/** How long a reply may take before the area fails (a wait is bounded by 10 s in the children). */
const REPLY_TIMEOUT_MS = 30_000;
/** How long p1's waiting open is given to start waiting before p0 closes the session. */
const SETTLE_MS = 100;

/** Wall-clock ms with sub-ms precision (the clock the children stamp their replies with). */
const wall = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A reply of the worker. `at` holds its wall-clock stamps. */
interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly at: Readonly<Record<string, number>>;
  readonly code?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly opened?: 'created' | 'resumed';
  readonly turn?: number;
  readonly retries?: number;
  readonly cancelled?: boolean;
}

/** One sent request: its reply, and (for a hanging turn) when its function is running. */
interface Sent {
  readonly reply: Promise<Reply>;
  readonly running: Promise<void>;
  /** When it was written, on this process's `performance.now()`. */
  readonly sentAt: number;
}

/** One service child process, driven over stdin. */
class Service {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly #waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  readonly #running = new Map<number, () => void>();
  #stderr = '';
  #next = 0;

  constructor(readonly owner: string, url: string) {
    this.child = spawn(process.execPath, [WORKER, JSON.stringify({ owner, url })], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdin?.on('error', () => undefined); // a dead child: its requests fail at its exit
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (d: string) => (this.#stderr = (this.#stderr + d).slice(-4000)));
    let ready!: () => void;
    this.ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      this.child.once('exit', (code, signal) => reject(new Error(`routing bench: service ${owner} exited (${code ?? signal}) before it was ready: ${this.#stderr}`)));
    });
    // A child that dies fails the requests it still owes at once.
    this.child.once('exit', (code, signal) => {
      for (const [id, w] of this.#waiting) {
        this.#waiting.delete(id);
        clearTimeout(w.timer);
        this.#running.get(id)?.();
        w.reject(new Error(`routing bench: service ${owner} exited (${code ?? signal}) with request ${id} unanswered; its stderr: ${this.#stderr}`));
      }
    });
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const r = JSON.parse(line) as Reply & { ready?: boolean; running?: boolean };
      if (r.ready === true) ready();
      else if (r.running === true) this.#running.get(r.id)?.();
      else {
        const w = this.#waiting.get(r.id);
        if (w === undefined) return;
        this.#waiting.delete(r.id);
        this.#running.get(r.id)?.(); // a turn that ended before it said it was running
        this.#running.delete(r.id);
        clearTimeout(w.timer);
        w.resolve(r);
      }
    });
  }

  /** What the child wrote to stderr (its last 4,000 characters). */
  get stderr(): string {
    return this.#stderr;
  }

  send(req: Record<string, unknown>): Sent {
    const id = ++this.#next;
    const reply = new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        this.#running.get(id)?.();
        reject(new Error(`routing bench: service ${this.owner} did not answer ${JSON.stringify(req)} within ${REPLY_TIMEOUT_MS / 1000} s; its stderr: ${this.#stderr}`));
      }, REPLY_TIMEOUT_MS);
      this.#waiting.set(id, { resolve, reject, timer });
    });
    // Every caller awaits its reply; this keeps a failure on the way there from being unhandled.
    reply.catch(() => undefined);
    const running = new Promise<void>((resolve) => this.#running.set(id, resolve));
    const sentAt = performance.now();
    this.child.stdin?.write(JSON.stringify({ ...req, id }) + '\n');
    return { reply, running, sentAt };
  }

  /** Sends `req` and resolves to its reply, rejecting unless it is `ok`. */
  async ok(req: Record<string, unknown>): Promise<Reply> {
    const r = await this.send(req).reply;
    if (!r.ok) throw new Error(`routing bench: service ${this.owner} failed ${JSON.stringify(req)}: ${r.code}: ${r.message}`);
    return r;
  }

  /** Asks the child to exit; kills it when it has not within 5 s. */
  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin?.write(JSON.stringify({ op: 'exit' }) + '\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** The time from sending a request to its reply, in this process, ms. */
async function timed(s: Service, req: Record<string, unknown>): Promise<{ ms: number; reply: Reply }> {
  const sent = s.send(req);
  const reply = await sent.reply;
  const ms = performance.now() - sent.sentAt;
  if (!reply.ok) throw new Error(`routing bench: service ${s.owner} failed ${JSON.stringify(req)}: ${reply.code}: ${reply.message}`);
  return { ms, reply };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

const max = (s: Stats): number => Math.max(...s.samples);

/** 1. What a handoff adds to a request: the request landing on p1 minus the same request once p1 holds the session. */
async function handoff(p0: Service, p1: Service): Promise<BenchRow[]> {
  const requests: number[] = [];
  const live: number[] = [];
  for (let r = -1; r < ROUNDS; r++) {
    const sessionId = `handoff-${r + 1}`;
    await p0.ok({ op: 'turn', sessionId, text: `${sessionId}-m0` });
    await yieldLoop();
    const moved = await timed(p1, { op: 'turn', sessionId, text: `${sessionId}-m1` });
    if (moved.reply.opened !== 'resumed' || moved.reply.turn !== 2) {
      throw new Error(`routing bench: the handed-off request replied ${JSON.stringify(moved.reply)}, expected opened "resumed" at turn 2`);
    }
    const held = await timed(p1, { op: 'turn', sessionId, text: `${sessionId}-m2` });
    if (r < 0) continue; // warm-up (the LISTEN connections start with the first wait)
    requests.push(moved.ms);
    live.push(held.ms);
  }
  const added = stats(requests.map((x, i) => x - (live[i] as number)));
  const req = stats(requests);
  const liveStats = stats(live);
  return [
    row('handoff.request', 'handoff: request to p1, p0 holding it idle (sent → reply)', 'ms', req),
    row('handoff.live', 'handoff: same request, p1 holding it (sent → reply)', 'ms', liveStats),
    row('handoff.added', `handoff: added (request − held), ${ROUNDS} rounds`, 'ms', added, { text: '<= 50 ms', max: 50 }),
    single('handoff.added.max', 'handoff: added, max', 'ms', max(added)),
  ];
}

/** 2. How soon a release wakes a process waiting (without asking) for the session. */
async function release(p0: Service, p1: Service): Promise<BenchRow[]> {
  const wakes: number[] = [];
  for (let r = -1; r < ROUNDS; r++) {
    const sessionId = `release-${r + 1}`;
    await p0.ok({ op: 'turn', sessionId, text: `${sessionId}-m0` });
    const waiting = p1.send({ op: 'open', sessionId, waitMs: 10_000, handoff: 'never' });
    await sleep(SETTLE_MS);
    const closed = await p0.ok({ op: 'close', sessionId });
    const opened = await waiting.reply;
    if (!opened.ok) throw new Error(`routing bench: p1's waiting open failed: ${opened.code}: ${opened.message}`);
    if (opened.at.opened < closed.at.recv) {
      throw new Error(`routing bench: p1's open of ${sessionId} resolved before p0 closed it (handoff 'never' asked for it, or the lease was not held)`);
    }
    await p1.ok({ op: 'close', sessionId });
    if (r >= 0) wakes.push((opened.at.opened as number) - (closed.at.closed as number));
  }
  const s = stats(wakes);
  return [
    row('release.wake', `release: p0's close → p1's waiting open, ${ROUNDS} rounds`, 'ms', s, { text: '<= 100 ms', max: 100 }),
    single('release.wake.max', 'release: wake-up, max', 'ms', max(s)),
  ];
}

/** 3. A turn hanging in p0, cancelled through p1. */
async function cancel(p0: Service, p1: Service): Promise<BenchRow[]> {
  const sessionId = 'cancel';
  await p0.ok({ op: 'turn', sessionId, text: 'warm' });
  const times: number[] = [];
  for (let r = -1; r < CANCEL_ROUNDS; r++) {
    const hanging = p0.send({ op: 'turn', sessionId, text: `hang-${r + 1}`, hangMs: 15_000 });
    await hanging.running;
    const t0 = wall();
    const c = await p1.ok({ op: 'cancel', sessionId, reason: 'bench' });
    if (c.cancelled !== true) throw new Error(`routing bench: sessions.cancel through p1 resolved ${String(c.cancelled)}, expected true (a turn was open in p0)`);
    const rejected = await hanging.reply;
    if (rejected.ok || rejected.code !== 'TURN_CANCELLED' || rejected.reason !== 'bench') {
      throw new Error(`routing bench: the cancelled turn replied ${JSON.stringify(rejected)}, expected a TURN_CANCELLED rejection with reason "bench"`);
    }
    if (r >= 0) times.push((rejected.at.failed as number) - t0);
  }
  const s = stats(times);
  return [
    row('cancel.ms', `cancel: sent to p1 → p0's turn rejects, ${CANCEL_ROUNDS} rounds`, 'ms', s, { text: '<= 1,000 ms', max: 1000 }),
    single('cancel.ms.max', 'cancel: max', 'ms', max(s)),
  ];
}

/** 4. Many conversations at once, each message to a random process; then every session checked in the store. */
async function random(services: readonly Service[], url: string): Promise<BenchRow[]> {
  const latencies: number[] = [];
  /** Requests that landed on the process holding the conversation, and those that moved it. */
  const stayed: number[] = [];
  const moved: number[] = [];
  const failures = new Map<string, number>();
  let retries = 0;
  let firstFailure = '';
  const ids = Array.from({ length: CONVERSATIONS }, (_, c) => `conv-${c}`);
  const t0 = performance.now();
  await Promise.all(
    ids.map(async (sessionId) => {
      let holder: Service | undefined;
      for (let k = 0; k < MESSAGES; k++) {
        const s = services[Math.floor(Math.random() * services.length)] as Service;
        const sent = s.send({ op: 'turn', sessionId, text: `${sessionId}-m${k}` });
        const r = await sent.reply;
        const ms = performance.now() - sent.sentAt;
        latencies.push(ms);
        if (holder !== undefined) (holder === s ? stayed : moved).push(ms);
        holder = s;
        retries += r.retries ?? 0;
        if (!r.ok) {
          const code = r.code ?? 'unknown';
          failures.set(code, (failures.get(code) ?? 0) + 1);
          if (firstFailure === '') firstFailure = `${s.owner} ${sessionId} m${k}: ${code}: ${r.message}`;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const store = new PostgresSessionStore({ connectionString: url, max: 4 });
  let lost = 0;
  let doubled = 0;
  let committed = 0;
  try {
    for (const sessionId of ids) {
      let loaded;
      try {
        loaded = await store.load(sessionId);
      } catch (err) {
        // Never created (its first message failed): lost too.
        if ((err as { code?: unknown }).code !== 'SESSION_NOT_FOUND') throw err;
        lost++;
        continue;
      }
      committed += loaded.info.committedTurn;
      if (loaded.info.committedTurn < MESSAGES) lost++;
      const seen = new Map<string, number>();
      for (const e of loaded.history) {
        if (e.kind !== 'history/append') continue;
        const m = e.body as { role?: string; content?: string };
        if (m.role === 'user' && typeof m.content === 'string') seen.set(m.content, (seen.get(m.content) ?? 0) + 1);
      }
      for (const n of seen.values()) if (n > 1) doubled += n - 1;
    }
  } finally {
    await store.close();
  }
  const failed = [...failures.values()].reduce((a, b) => a + b, 0);
  if (failed > 0) console.error(`routing bench: ${failed} request(s) failed (${[...failures].map(([c, n]) => `${n} ${c}`).join(', ')}); first: ${firstFailure}`);
  for (const l of [latencies, stayed, moved]) l.sort((a, b) => a - b);
  const label = `${services.length} processes × ${CONVERSATIONS} conversations × ${MESSAGES} turns, random process`;
  return [
    single('routing.lost', `routing (${label}): lost conversations`, 'conversations', lost, { text: '0', max: 0 }),
    single('routing.doubled', 'routing: doubled messages', 'messages', doubled, { text: '0', max: 0 }),
    single('routing.failed', 'routing: failed requests', 'requests', failed),
    single('routing.retried', 'routing: turns reopened (closed by a handoff)', 'turns', retries),
    single('routing.throughput', 'routing: throughput, both processes', 'turns/s', committed / seconds),
    single('routing.p50', 'routing: request p50 (sent → reply)', 'ms', quantile(latencies, 0.5)),
    single('routing.p95', 'routing: request p95', 'ms', quantile(latencies, 0.95)),
    single('routing.stayed.p50', `routing: p50, ${stayed.length} sent to the holder`, 'ms', quantile(stayed, 0.5)),
    single('routing.moved.p50', `routing: p50, ${moved.length} handed off`, 'ms', quantile(moved, 0.5)),
  ];
}

/** The reason PostgreSQL can not be used, or `undefined` when it can. */
async function unreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message || err.name : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs `sql` on the admin database. */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redacted(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

async function measure(): Promise<BenchRow[]> {
  const why = await unreachable();
  if (why !== undefined) {
    const text = `skipped: no PostgreSQL at ${redacted(ADMIN_URL)} (${why}); POLESTAR_TEST_PG_URL names the server`;
    console.error(`routing bench: ${text}`);
    return [single('routing.skipped', text, '', 0)];
  }
  const name = `polestar_bench_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  const services = [new Service('p0', url), new Service('p1', url)] as const;
  try {
    await Promise.all(services.map((s) => s.ready));
    const [p0, p1] = services;
    const rows = [...(await handoff(p0, p1)), ...(await release(p0, p1)), ...(await cancel(p0, p1)), ...(await random(services, url))];
    return rows;
  } finally {
    await Promise.all(services.map((s) => s.exit()));
    // Warnings of the children (a store that fell back to polling, say) are shown, not kept.
    for (const s of services) if (s.stderr !== '') console.error(`routing bench: stderr of ${s.owner}: ${s.stderr}`);
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/** Runs the routing area (two service processes on PostgreSQL) and returns its rows. */
export function run(): Promise<BenchReport> {
  return withLoad('routing: two service processes on PostgreSQL (handoff, release wake-up, cancel, random routing)', measure);
}

await runIfMain('routing.bench.js', run);
