/**
 * SQLite soak: durable turns of 1 and of 16 concurrent sessions on one SQLite file (WAL,
 * `synchronous=FULL`), through the public Sessions API, with the event loop's delay
 * sampled all along (`perf_hooks.monitorEventLoopDelay`, 1 ms resolution).
 *
 * A turn is what an agent's turn writes: a user message, an assistant message, a tool call
 * and its result (about 500 bytes each), and one changed persisted local. Each session has
 * an agent of its own (the targets are per agent).
 *
 * Rows, min / median over rounds (the 1-session and the 16-session phases alternate within
 * each round):
 * - `sqlite-soak.loop-p99`: the p99 event-loop delay during the 16-session phase
 *   (target <= 2 ms: the store's connection runs off the main thread);
 * - `sqlite-soak.turn-p50-1`: a turn's p50 with one session;
 * - `sqlite-soak.turns-1` / `sqlite-soak.turns-16`: committed turns per second;
 * - `sqlite-soak.scale-16`: turns/s of 16 sessions over turns/s of 1 session, in one round.
 *
 * Run alone: `npm run build:run && node .build/bench/sqlite-soak.bench.js [--quick]`.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AgentsPlugin, Server, Sessions, SessionsPlugin, type DurableSession, type LocalSerializer, type SessionStore } from '../src/index.js';
import { SqliteSessionStore } from '../src/sessions/sqlite.js';
import { budget, now, stats } from './harness.js';
import { row, runIfMain, withLoad, type BenchReport, type BenchRow } from './report.js';

class Counter {
  n = 0;
}
const counterSerializer: LocalSerializer<Counter> = {
  key: 'bench.soak.counter',
  version: 1,
  scope: 'agent',
  serialize: (c) => c.n,
  deserialize: (d) => Object.assign(new Counter(), { n: d as number }),
};

const BODY = 'x'.repeat(480);

/** What one phase of the soak measured. */
export interface SoakPhase {
  /** Committed turns per second, all sessions together. */
  readonly turnsPerSec: number;
  /** p50 of one turn, ms. */
  readonly turnP50Ms: number;
  /** p99 of the event loop's delay during the phase, ms. */
  readonly loopP99Ms: number;
  /** The largest event-loop delay seen, ms. */
  readonly loopMaxMs: number;
}

/** Sessions opened once on one store, driven in phases. */
export class Soak {
  readonly #server: Server;
  readonly #sessions: DurableSession[];

  private constructor(server: Server, sessions: DurableSession[]) {
    this.#server = server;
    this.#sessions = sessions;
  }

  /** Opens `count` sessions (one agent each) on `store`. */
  static async open(store: SessionStore, count: number, tag: string): Promise<Soak> {
    const server = new Server();
    server.registerLocal(Counter, { per: 'agent' });
    server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Counter, counterSerializer]] }));
    await server.finish();
    const app = server.createContext();
    const sessions: DurableSession[] = [];
    for (let i = 0; i < count; i++) sessions.push(await app.get(Sessions).create({ agentId: `soak-a${i}-${tag}`, sessionId: `soak-s${i}-${tag}` }));
    return new Soak(server, sessions);
  }

  /** Drives the first `count` sessions concurrently, each turn after turn, for `ms` milliseconds. */
  async phase(count: number, ms: number): Promise<SoakPhase> {
    const times: number[] = [];
    const h = monitorEventLoopDelay({ resolution: 1 });
    const end = Date.now() + ms;
    const t0 = now();
    h.enable();
    await Promise.all(
      this.#sessions.slice(0, count).map(async (durable) => {
        while (Date.now() < end) {
          const s = now();
          await durable.turn((turnCtx, session) => {
            session.history.append({ role: 'user', content: `question ${BODY}` });
            session.history.append({ role: 'assistant', content: `calling the tool ${BODY}` });
            session.history.append({ role: 'assistant', content: `tool call {"name":"lookup","arguments":"${BODY}"}` });
            session.history.append({ role: 'user', content: `tool result ${BODY}` });
            turnCtx.get(Counter).n++;
          });
          times.push(now() - s);
        }
      }),
    );
    h.disable();
    const elapsed = (now() - t0) / 1e9;
    times.sort((a, b) => a - b);
    return {
      turnsPerSec: times.length / elapsed,
      turnP50Ms: times[Math.floor(times.length / 2)] / 1e6,
      loopP99Ms: h.percentile(99) / 1e6,
      loopMaxMs: h.max / 1e6,
    };
  }

  /** Closes the sessions and the server (not the store). */
  async close(): Promise<void> {
    for (const s of this.#sessions) await s.close();
    await this.#server.dispose();
  }
}

async function measure(): Promise<BenchRow[]> {
  const b = budget();
  const rounds = b.name === 'quick' ? 2 : 3;
  const phaseMs = b.name === 'quick' ? 1_000 : 2_500;
  const dir = mkdtempSync(join(tmpdir(), 'polestar-bench-soak-'));
  const store = new SqliteSessionStore({ path: join(dir, 'soak.db') });
  try {
    const soak = await Soak.open(store, 16, String(process.pid));
    await soak.phase(16, 300); // warm-up
    const p99: number[] = [];
    const p50: number[] = [];
    const one: number[] = [];
    const sixteen: number[] = [];
    const scale: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const a = await soak.phase(1, phaseMs);
      const c = await soak.phase(16, phaseMs);
      p50.push(a.turnP50Ms);
      one.push(a.turnsPerSec);
      p99.push(c.loopP99Ms);
      sixteen.push(c.turnsPerSec);
      scale.push(c.turnsPerSec / a.turnsPerSec);
    }
    await soak.close();
    const neg = (xs: number[]): number[] => xs.map((x) => -x);
    const flip = (s: ReturnType<typeof stats>): ReturnType<typeof stats> => ({ ...s, min: -s.min, median: -s.median });
    return [
      row('sqlite-soak.loop-p99', 'SQLite, 16 sessions: p99 event-loop delay', 'ms', stats(p99), { text: '<= 2 ms', max: 2 }),
      row('sqlite-soak.turn-p50-1', 'SQLite, 1 session: turn p50', 'ms', stats(p50)),
      // throughputs: higher is better, so "min" is the best round (the largest)
      row('sqlite-soak.turns-1', 'SQLite, 1 session: committed turns/s (min = best round)', 'turns/s', flip(stats(neg(one)))),
      row('sqlite-soak.turns-16', 'SQLite, 16 sessions: committed turns/s (min = best round)', 'turns/s', flip(stats(neg(sixteen)))),
      row('sqlite-soak.scale-16', 'SQLite: turns/s of 16 sessions over 1 session, per round (min = best round)', 'x', flip(stats(neg(scale)))),
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the SQLite soak area and returns its rows. */
export function run(): Promise<BenchReport> {
  return withLoad('sqlite-soak: durable turns of 1 and 16 concurrent sessions on one SQLite file, event-loop delay', measure);
}

await runIfMain('sqlite-soak.bench.js', run);
