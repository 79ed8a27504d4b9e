/**
 * Agents benchmark.
 *
 * - The load workload of the leak test (`test/fixtures/agents-load.ts`): agents with five
 *   scoped tools, a session and an open turn (running a tool call), created concurrently
 *   and then disposed with racing disposals: create+dispose throughput and heap per live
 *   agent.
 * - One agent lifecycle at a time (create with five scoped tools → session → turn →
 *   dispose), against the same shape in raw inversify (a child container per agent with
 *   five constant bindings, a session and a turn child container, unbound afterwards)
 *   and a bare `Map` floor (a map of five tools per agent id, set and deleted).
 * - Heap per live agent with five tools (no session), against inversify child
 *   containers and the `Map` floor.
 *
 * Run alone: `npx tsc -p tsconfig.run.json && node --expose-gc .build/bench/agents.bench.js`.
 */
import 'reflect-metadata';
import { Container } from 'inversify';
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin, openSession, type AgentHandle, type ToolDefinition } from '../src/index.js';
import { runAgentsLoad } from '../test/fixtures/agents-load.js';
import { runIfMain, type BenchReport, type BenchRow } from './report.js';

const gc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g !== undefined) for (let i = 0; i < 3; i++) g();
};
const heap = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

const SCHEMA = { type: 'object', properties: { q: { type: 'string' } } };
const NAMES = ['search', 'fetch', 'summarize', 'cite', 'note'];
const defs: ToolDefinition[] = NAMES.map((n) => ({ name: n, description: n, parameters: SCHEMA, execute: () => n }));

async function server(): Promise<Server> {
  const s = new Server();
  s.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await s.finish();
  return s;
}

/** Median µs per op of `rounds` rounds of `n` sequential ops (after a warm-up round). */
async function usPerOp(n: number, rounds: number, op: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(n, 500); i++) await op(i);
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    gc();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await op(i);
    samples.push(((performance.now() - t0) * 1000) / n);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

async function polestarLifecycle(warmSchema: boolean): Promise<number> {
  const s = await server();
  const app = s.createContext();
  // With a live tool sharing the schema, the registry's interned ajv validator stays
  // compiled; without one, the last tool's disposal drops it and the next agent compiles again.
  if (warmSchema) app.get(Tools).register({ name: 'keep-warm', description: 'x', parameters: SCHEMA, execute: () => 'x' });
  const agents = app.get(Agents);
  let k = 0;
  const us = await usPerOp(2000, 5, async () => {
    const h = await agents.create({
      id: `a${k++}`,
      setup: (ctx) => {
        const tools = ctx.get(Tools);
        for (const d of defs) tools.register(d);
      },
    });
    const session = openSession(h.agent);
    await session.turn((turn) => turn.get(Tools).get('search'));
    await h.dispose();
  });
  await s.dispose();
  return us;
}

async function lifecycleRows(): Promise<BenchRow[]> {
  const polestar = await polestarLifecycle(true);
  const cold = await polestarLifecycle(false);
  const root = new Container();
  const inversify = await usPerOp(2000, 5, async () => {
    const agent = new Container({ parent: root });
    for (const d of defs) agent.bind(d.name).toConstantValue(d);
    const session = new Container({ parent: agent });
    const turn = new Container({ parent: session });
    turn.get('search');
    await turn.unbindAll();
    await session.unbindAll();
    await agent.unbindAll();
  });

  const registry = new Map<string, Map<string, ToolDefinition>>();
  let j = 0;
  const floor = await usPerOp(2000, 5, async () => {
    const id = `a${j++}`;
    const tools = new Map<string, ToolDefinition>();
    for (const d of defs) tools.set(d.name, Object.freeze({ ...d }));
    registry.set(id, tools);
    registry.get(id)?.get('search');
    registry.delete(id);
  });
  return [
    { metric: 'agent lifecycle (create, 5 tools, session, turn, dispose), one at a time', value: polestar, unit: 'µs/agent' },
    { metric: 'same, when no other live tool shares the schema (validator from the released-schema cache)', value: cold, unit: 'µs/agent' },
    { metric: 'same shape in raw inversify (child containers, 5 bindings, unbindAll)', value: inversify, unit: 'µs/agent' },
    { metric: 'bare Map floor (5 frozen tools per id, set + delete)', value: floor, unit: 'µs/agent' },
    { metric: 'polestar / inversify', value: polestar / inversify, unit: 'x' },
    { metric: 'polestar / Map floor', value: polestar / floor, unit: 'x' },
  ];
}

async function memoryRows(): Promise<BenchRow[]> {
  const N = 5000;
  const s = await server();
  const app = s.createContext();
  const agents = app.get(Agents);
  const before = heap();
  const handles: AgentHandle[] = [];
  for (let i = 0; i < N; i++) {
    handles.push(
      await agents.create({
        id: `m${i}`,
        setup: (ctx) => {
          const tools = ctx.get(Tools);
          for (const d of defs) tools.register(d);
        },
      }),
    );
  }
  const polestar = (heap() - before) / N;
  await Promise.all(handles.map((h) => h.dispose()));
  handles.length = 0;
  await s.dispose();

  const root = new Container();
  const containers: Container[] = [];
  const b2 = heap();
  for (let i = 0; i < N; i++) {
    const c = new Container({ parent: root });
    for (const d of defs) c.bind(d.name).toConstantValue(d);
    containers.push(c);
  }
  const inversify = (heap() - b2) / N;
  containers.length = 0;

  const maps = new Map<string, Map<string, ToolDefinition>>();
  const b3 = heap();
  for (let i = 0; i < N; i++) {
    const tools = new Map<string, ToolDefinition>();
    for (const d of defs) tools.set(d.name, Object.freeze({ ...d }));
    maps.set(`m${i}`, tools);
  }
  const floor = (heap() - b3) / N;
  maps.clear();
  return [
    { metric: 'heap per live agent with 5 scoped tools', value: polestar, unit: 'bytes' },
    { metric: 'heap per inversify child container with 5 bindings', value: inversify, unit: 'bytes' },
    { metric: 'heap per Map of 5 frozen tools (floor)', value: floor, unit: 'bytes' },
  ];
}

/** Runs the agents benchmark. */
export async function run(): Promise<BenchReport> {
  const load = await runAgentsLoad(10_000, 100);
  const rows: BenchRow[] = [
    {
      metric: 'concurrent create+dispose, 10,000 agents (5 tools, session, open turn, racing disposals)',
      value: load.agentsPerSecond,
      unit: 'agents/s',
      target: '> 2,000',
      ok: load.agentsPerSecond > 2000,
    },
    { metric: 'create phase (10,000 concurrent)', value: load.createMs, unit: 'ms' },
    { metric: 'dispose phase (racing)', value: load.disposeMs, unit: 'ms' },
    {
      metric: 'heap per live agent (5 tools, session, open turn)',
      value: load.bytesPerLiveAgent,
      unit: 'bytes',
      target: '< 16 KB',
      ok: load.bytesPerLiveAgent < 16 * 1024,
    },
    {
      metric: 'heap growth after disposing everything',
      value: load.heapGrowth / 1024,
      unit: 'KB',
      target: '< 5 MB',
      ok: Math.abs(load.heapGrowth) < 5 * 1024 * 1024 && load.leaks.length === 0,
    },
    ...(await lifecycleRows()),
    ...(await memoryRows()),
  ];
  return { name: 'agents', rows };
}

await runIfMain('agents.bench.js', run);
