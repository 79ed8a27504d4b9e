/**
 * Two real service processes on one store (an SQLite file; a PostgreSQL database), served
 * the way a load balancer without sticky routing serves them: the requests of each
 * conversation alternate between the processes. Every turn is served, nothing is doubled;
 * a turn running in one process is cancelled through the other; a process killed with
 * SIGKILL and started again with the same owner id serves its conversations at once.
 * The children (routing-worker.mjs) run over the compiled sources in .build.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SessionStore } from '../../../src/index.js';
import { PostgresSessionStore } from '../../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../../src/sessions/sqlite.js';
import { assertBuilt } from '../../faults/support/procs.js';
import { createTestDatabase, pgTarget } from '../pg-target.js';

const WORKER = fileURLToPath(new URL('./routing-worker.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'polestar-two-procs-'));
const target = await pgTarget();
let db: { url: string; drop(): Promise<void> } | undefined;
const children = new Set<ChildProcess>();
beforeAll(() => assertBuilt());
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

type Reply = Record<string, unknown> & { id?: number; ok?: boolean; ms?: number; code?: string; running?: boolean };

/** One service process: send a request, await its reply. */
class Service {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly #waiting = new Map<number, (r: Reply) => void>();
  readonly #running = new Map<number, () => void>();
  #stderr = '';
  static #next = 0;

  constructor(config: Record<string, unknown>) {
    this.child = spawn(process.execPath, [WORKER, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(this.child);
    this.child.stderr?.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    let ready!: () => void;
    this.ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      this.child.on('exit', (code, signal) => reject(new Error(`service exited (${code ?? signal}) before it was ready: ${this.#stderr}`)));
    });
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const r = JSON.parse(line) as Reply;
      if (r.ready === true) ready();
      else if (r.running === true) this.#running.get(r.id as number)?.();
      else this.#waiting.get(r.id as number)?.(r);
    });
  }

  /** Sends `req`; `running` settles once a hanging turn is inside its function. */
  send(req: Record<string, unknown>): { reply: Promise<Reply>; running: Promise<void> } {
    const id = ++Service.#next;
    const reply = new Promise<Reply>((resolve, reject) => {
      this.#waiting.set(id, resolve);
      setTimeout(() => reject(new Error(`no reply to ${JSON.stringify(req)} within 20 s; stderr: ${this.#stderr}`)), 20_000).unref();
    });
    const running = new Promise<void>((resolve) => this.#running.set(id, resolve));
    this.child.stdin?.write(JSON.stringify({ ...req, id }) + '\n');
    return { reply, running };
  }

  async exit(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin?.write(JSON.stringify({ op: 'exit' }) + '\n');
    await exited;
  }

  async kill(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}

const kinds: { name: string; config: () => Promise<Record<string, unknown>>; store: (c: Record<string, unknown>) => SessionStore }[] = [
  { name: 'SQLite', config: async () => ({ kind: 'sqlite', path: join(dir, 'service.db') }), store: (c) => new SqliteSessionStore({ path: c.path as string }) },
];
if (target.ok || target.required) {
  kinds.push({
    name: 'PostgreSQL',
    config: async () => {
      if (!target.ok) throw new Error(target.reason);
      db ??= await createTestDatabase(target.adminUrl, 'twoprocs');
      return { kind: 'pg', url: db.url };
    },
    store: (c) => new PostgresSessionStore({ connectionString: c.url as string, max: 2 }),
  });
}

describe.each(kinds)('two service processes on one $name store', (kind) => {
  test('alternating requests are all served once; a cancel crosses processes; a restarted owner serves again at once', async () => {
    const storeConfig = await kind.config();
    const start = (owner: string): Service => new Service({ owner, store: storeConfig });
    const services = [start('svc-0'), start('svc-1')];
    await Promise.all(services.map((s) => s.ready));

    // Four conversations, six messages each, every message to the other process than the last.
    const conversations = ['c0', 'c1', 'c2', 'c3'];
    const latencies: number[] = [];
    await Promise.all(
      conversations.map(async (sessionId, c) => {
        for (let k = 0; k < 6; k++) {
          const r = await (services[(k + c) % 2] as Service).send({ sessionId, text: `${sessionId}-m${k}` }).reply;
          expect(r).toMatchObject({ ok: true, turn: k + 1 });
          latencies.push(r.ms as number);
        }
      }),
    );
    const store = kind.store(storeConfig);
    try {
      for (const sessionId of conversations) {
        const loaded = await store.load(sessionId);
        const texts = loaded.history.filter((e) => e.kind === 'history/append').map((e) => (e.body as { content: string }).content);
        expect(texts).toEqual([0, 1, 2, 3, 4, 5].flatMap((k) => [`${sessionId}-m${k}`, `re: ${sessionId}-m${k}`]));
      }
    } finally {
      await store.close();
    }
    latencies.sort((x, y) => x - y);
    console.log(`${kind.name}: ${latencies.length} alternating requests, added latency min ${latencies[0]?.toFixed(1)} ms, median ${latencies[latencies.length >> 1]?.toFixed(1)} ms`);

    // A turn running in svc-0, cancelled through svc-1.
    const [s0, s1] = services as [Service, Service];
    await s0.send({ sessionId: 'cx', text: 'warm' }).reply;
    const hanging = s0.send({ sessionId: 'cx', text: 'long one', hangMs: 15_000 });
    await hanging.running;
    const t0 = performance.now();
    expect(await s1.send({ op: 'cancel', sessionId: 'cx', reason: 'stop' }).reply).toMatchObject({ ok: true, cancelled: true });
    expect(await hanging.reply).toMatchObject({ ok: false, code: 'TURN_CANCELLED', reason: 'stop' });
    expect(performance.now() - t0).toBeLessThan(1500);

    // svc-0 holds ck; killed with SIGKILL and started again as svc-0: served at once.
    await s0.send({ sessionId: 'ck', text: 'before the crash' }).reply;
    await s0.kill();
    const again = start('svc-0');
    await again.ready;
    const after = await again.send({ sessionId: 'ck', text: 'after the crash' }).reply;
    expect(after).toMatchObject({ ok: true, turn: 2 });
    expect(after.ms as number).toBeLessThan(3000);
    await Promise.all([again.exit(), s1.exit()]);
  }, 90_000);
});
