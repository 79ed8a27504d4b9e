/**
 * Tools-registry benchmark.
 *
 * - `visible(scope)` with 1,000 global and 20 scoped tools, called repeatedly with no
 *   change (the merged view is cached per scope and invalidated on change); floor: a bare
 *   `Map.get` of a precomputed array.
 * - `execute` of a no-op tool with no listeners, minus calling its body directly.
 * - Heap per agent scope holding five tools (scope context + five frozen records + the
 *   scope's layer); floor: a `Map` of five entries per scope.
 *
 * Run alone: `npx tsc -p tsconfig.run.json && node --expose-gc .build/bench/tools.bench.js`.
 */
import 'reflect-metadata';
import { Server, Tools, ToolsPlugin, createScope, type Scope, type ToolDefinition } from '../src/index.js';
import { gc, nsPerOp } from './measure.js';
import { runIfMain, type BenchReport, type BenchRow } from './report.js';

const params = { type: 'object', properties: { q: { type: 'string' } } };

function def(name: string, body: () => unknown = () => 'ok'): ToolDefinition {
  return { name, description: `tool ${name}`, parameters: params, execute: body };
}

async function server(): Promise<Server> {
  const s = new Server();
  s.addPlugins(new ToolsPlugin());
  await s.finish();
  return s;
}

async function visibleRows(): Promise<BenchRow[]> {
  const s = await server();
  const app = s.createContext();
  const tools = app.get(Tools);
  for (let i = 0; i < 1000; i++) tools.register(def(`global_${i}`));
  const agent = createScope(app, { id: 'agent' });
  for (let i = 0; i < 20; i++) agent.ctx.get(Tools).register(def(`scoped_${i}`));
  const key = agent.key;
  const view = agent.ctx.get(Tools);
  if (view.visible(key).length !== 1020) throw new Error('bench setup: expected 1020 visible tools');
  let sink = 0;
  const ns = await nsPerOp(1_000_000, 7, (n) => {
    for (let i = 0; i < n; i++) sink += view.visible(key).length;
  });
  const floorMap = new Map<object, readonly unknown[]>([[key, view.visible(key)]]);
  const floor = await nsPerOp(1_000_000, 7, (n) => {
    for (let i = 0; i < n; i++) sink += (floorMap.get(key) as unknown[]).length;
  });
  // after a change the next call rebuilds once
  const rebuild = await nsPerOp(200, 5, (n) => {
    for (let i = 0; i < n; i++) {
      const off = agent.ctx.get(Tools).register(def('churn'));
      sink += view.visible(key).length;
      off();
    }
  });
  if (sink === 0) throw new Error('unreachable');
  await s.dispose();
  return [
    { metric: 'visible(scope), 1,000 global + 20 scoped, no change', value: ns, unit: 'ns/call', target: '<= 1000', ok: ns <= 1000 },
    { metric: 'bare Map.get floor', value: floor, unit: 'ns/call' },
    { metric: 'visible / floor', value: ns / floor, unit: 'x' },
    { metric: 'register + visible (rebuild) + unregister, 1,020 tools', value: rebuild / 1000, unit: 'µs/op' },
  ];
}

async function executeRows(): Promise<BenchRow[]> {
  const s = await server();
  const app = s.createContext();
  let count = 0;
  const body = (): string => {
    count++;
    return 'ok';
  };
  const agent = createScope(app, { id: 'agent' });
  agent.ctx.get(Tools).register({ name: 'noop', description: 'does nothing', parameters: params, execute: body });
  const tools = agent.ctx.get(Tools);
  const args = { q: 'x' };
  const call = { callId: 'c', name: 'noop', arguments: args };
  const exec = await nsPerOp(100_000, 7, async (n) => {
    for (let i = 0; i < n; i++) await tools.execute(call);
  });
  const direct = await nsPerOp(100_000, 7, async (n) => {
    for (let i = 0; i < n; i++) await Promise.resolve(body());
  });
  if (count === 0) throw new Error('unreachable');
  await s.dispose();
  const overhead = (exec - direct) / 1000;
  return [
    { metric: 'execute(no-op tool, no listeners)', value: exec / 1000, unit: 'µs/call' },
    { metric: 'await body() directly (floor)', value: direct / 1000, unit: 'µs/call' },
    { metric: 'execute overhead over the body', value: overhead, unit: 'µs/call', target: '<= 10', ok: overhead <= 10 },
  ];
}

async function heapRows(): Promise<BenchRow[]> {
  const s = await server();
  const app = s.createContext();
  const defs = [0, 1, 2, 3, 4].map((i) => def(`t${i}`));
  const N = 5_000;
  // warm up: compile the shared validator, allocate the registry maps
  const warm = createScope(app, { id: 'warm' });
  for (const d of defs) warm.ctx.get(Tools).register(d);
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const scopes: Scope[] = [];
  for (let i = 0; i < N; i++) {
    const scope = createScope(app, { id: `a${i}` });
    const t = scope.ctx.get(Tools);
    for (const d of defs) t.register(d);
    scopes.push(scope);
  }
  gc();
  gc();
  const per = (process.memoryUsage().heapUsed - before) / N;
  if (app.get(Tools).visible(scopes[N - 1].key).length !== 5) throw new Error('bench setup');
  for (const sc of scopes) await sc.dispose();
  await s.dispose();
  // floor: a Map of five entries per scope key
  gc();
  gc();
  const before2 = process.memoryUsage().heapUsed;
  const floor: Map<object, Map<string, ToolDefinition>> = new Map();
  for (let i = 0; i < N; i++) floor.set({ id: `a${i}` }, new Map(defs.map((d) => [d.name, d] as const)));
  gc();
  gc();
  const perFloor = (process.memoryUsage().heapUsed - before2) / N;
  if (floor.size !== N) throw new Error('unreachable');
  return [
    { metric: 'heap per agent scope holding five tools', value: per, unit: 'bytes', target: '<= 4096', ok: per <= 4096 },
    { metric: 'bare Map-of-five floor per scope', value: perFloor, unit: 'bytes' },
  ];
}

/** Runs the tools benchmark. */
export async function run(): Promise<BenchReport> {
  const rows = [...(await visibleRows()), ...(await executeRows()), ...(await heapRows())];
  return { name: 'tools', rows };
}

await runIfMain('tools.bench.js', run);
