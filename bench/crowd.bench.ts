/**
 * Crowd benchmark: does one agent's lifecycle cost more when thousands of other agents are
 * alive in the process?
 *
 * The agent lifecycle of bench/agents.bench.ts (create with five scoped tools → session →
 * turn running one tool call → dispose), measured in a process that holds {@link CROWD}
 * other live agents (each with its five tools and an open session) and in one that holds
 * {@link RESIDENT}, each in **its own child process**, the two alternating pair by pair;
 * the ratio is taken within a pair.
 *
 * Why separate processes: part of what it watches is process-wide. V8 tracks an
 * allocation site per object or array literal and, once most objects from one outlive a
 * scavenge (long-lived agents made by the same code), allocates every later object from
 * that site straight in the old generation, where each short-lived agent then leaves its
 * garbage. In one process both sides would share that decision and the ratio could not
 * see it. polestar makes its per-agent records (registry entries, layers, cleanup slots,
 * teardown flags) from classes, which carry no allocation site (docs/performance.md,
 * "Allocation sites"). What the ratio shows besides: what thousands of live agents cost
 * everyone, bigger maps to look up and more heap to mark.
 *
 * Not part of `npm run bench` (twelve child processes, about 10 seconds): run it with
 * `npm run bench:crowd` (or `node --expose-gc .build/bench/crowd.bench.js [--quick]` after
 * `npm run build:run`).
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin, openSession, type SystemContext, type ToolDefinition } from '../src/index.js';
import { budget, now, stats, yieldLoop } from './harness.js';
import { RESIDENT } from './peers.js';
import { row, runIfMain, withLoad, type BenchReport, type BenchRow } from './report.js';

/** Live agents in the crowded process. */
export const CROWD = 3000;

const SCHEMA = { type: 'object', properties: { q: { type: 'string' } } };
const NAMES = ['search', 'fetch', 'summarize', 'cite', 'note'];
const defs: ToolDefinition[] = NAMES.map((n) => ({ name: n, description: n, parameters: SCHEMA, execute: (args: unknown) => `${n}:${String((args as { q: string }).q)}` }));
const CALL = Object.freeze({ callId: 'c1', name: 'search', arguments: Object.freeze({ q: 'x' }) });
const setup = (ctx: SystemContext): void => {
  const tools = ctx.get(Tools);
  for (const d of defs) tools.register(d);
};

/**
 * The child's work: `residents` live agents, then the lifecycle in batches of 500 with a
 * yield between them (after an untimed warm-up); resolves to µs per lifecycle, one
 * sample per round of four batches.
 */
async function measure(residents: number): Promise<number[]> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({ name: 'keep-warm', description: 'x', parameters: SCHEMA, execute: () => 'x' });
  const agents = app.get(Agents);
  for (let i = 0; i < residents; i++) {
    const h = await agents.create({ id: `resident${i}`, setup });
    openSession(h.agent);
    if (i % 500 === 499) await yieldLoop();
  }
  let k = 0;
  const batch = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const h = await agents.create({ id: `a${k++}`, setup });
      const result = await openSession(h.agent).turn((turn) => turn.get(Tools).execute(CALL));
      if (result.isError) throw new Error(`bench setup: ${JSON.stringify(result)}`);
      await h.dispose();
    }
  };
  const quick = budget().name === 'quick';
  for (let i = 0; i < (quick ? 10 : 30); i++) {
    await batch(1000);
    await yieldLoop();
  }
  const samples: number[] = [];
  for (let r = 0; r < (quick ? 7 : 15); r++) {
    let ns = 0;
    for (let b = 0; b < 4; b++) {
      const t0 = now();
      await batch(500);
      ns += now() - t0;
      await yieldLoop();
    }
    samples.push(ns / 2000 / 1000);
  }
  await server.dispose();
  return samples;
}

/** Runs {@link measure} for `residents` in a child process and returns its samples. */
function child(residents: number): Promise<number[]> {
  const file = fileURLToPath(import.meta.url);
  const args = [...process.execArgv, file, `--child=${residents}`, ...(budget().name === 'quick' ? ['--quick'] : [])];
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (chunk: string) => (out += chunk));
    c.on('error', reject);
    c.on('close', (code) => {
      if (code !== 0) reject(new Error(`bench: the crowd child (${residents} agents) exited with code ${String(code)}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() ?? '[]') as number[]);
    });
  });
}

/** Runs the crowd benchmark: `pairs` pairs of child processes, alternating which goes first. */
export function run(): Promise<BenchReport> {
  const pairs = budget().name === 'quick' ? 1 : 6;
  return withLoad('crowd', async (): Promise<BenchRow[]> => {
    const alone: number[] = [];
    const crowded: number[] = [];
    for (let p = 0; p < pairs; p++) {
      const median = (s: number[]): number => stats(s).median;
      if (p % 2 === 0) {
        alone.push(median(await child(RESIDENT)));
        crowded.push(median(await child(CROWD)));
      } else {
        crowded.push(median(await child(CROWD)));
        alone.push(median(await child(RESIDENT)));
      }
    }
    const n = CROWD.toLocaleString('en-US');
    return [
      row('crowd.alone', `agent lifecycle, ${RESIDENT} other agents alive (a process of its own)`, 'µs/agent', stats(alone)),
      row('crowd.crowded', `same, ${n} other agents alive, each with its tools and a session (a process of its own)`, 'µs/agent', stats(crowded)),
      row('crowd.ratio', `${n} other agents / ${RESIDENT} (a pair of processes, run back to back)`, 'x', stats(crowded.map((c, i) => c / (alone[i] as number)))),
    ];
  });
}

const childArg = process.argv.find((a) => a.startsWith('--child='));
if (childArg !== undefined) console.log(JSON.stringify(await measure(Number(childArg.slice('--child='.length)))));
else await runIfMain('crowd.bench.js', run);
