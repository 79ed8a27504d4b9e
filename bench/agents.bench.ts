/**
 * Agents benchmark.
 *
 * - The load workload of the leak test (`test/fixtures/agents-load.ts`): agents with five
 *   scoped tools, a session and an open turn (running a tool call), created concurrently
 *   and then disposed with racing disposals: create+dispose throughput and heap per live
 *   agent.
 * - One agent lifecycle at a time (create with five scoped tools → session → turn running
 *   one tool call → dispose), with {@link RESIDENT} other agents alive, against the same
 *   shape in raw inversify and the peers (bench/peers.ts) and a bare `Map` floor (a map of
 *   five frozen tools per agent id, set, one tool body called, deleted).
 * - Heap per live agent with five tools (no session), against inversify child containers
 *   and the `Map` floor.
 * - A one-task subagent (`agents.runTask`) with and without `output` (structured results),
 *   against the same task with one more scoped tool and one scoped guard: what `output` may
 *   cost.
 *
 * Run alone: `npm run build:run && node --expose-gc .build/bench/agents.bench.js [--quick]`.
 */
import 'reflect-metadata';
import { Container } from 'inversify';
import { Agents, AgentsPlugin, PromptsPlugin, Server, Tools, ToolsPlugin, openSession, type AgentHandle, type ToolDefinition } from '../src/index.js';
import { runAgentsLoad } from '../test/fixtures/agents-load.js';
import { budget, compare, settleHeap, type Contender } from './harness.js';
import { LIFECYCLE_PEERS, RESIDENT, type LifecycleTool } from './peers.js';
import { row, runIfMain, single, withLoad, type BenchReport, type BenchRow } from './report.js';

const SCHEMA = { type: 'object', properties: { q: { type: 'string' } } };
const NAMES = ['search', 'fetch', 'summarize', 'cite', 'note'];
const defs: (ToolDefinition<{ q: string }> & LifecycleTool)[] = NAMES.map((n) => ({ name: n, description: n, parameters: SCHEMA, execute: (args: { q: string }) => `${n}:${args.q}` }));
const CALL = Object.freeze({ callId: 'c1', name: 'search', arguments: Object.freeze({ q: 'x' }) });

async function server(): Promise<Server> {
  const s = new Server();
  s.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await s.finish();
  return s;
}

const setup = (ctx: Parameters<NonNullable<Parameters<Agents['create']>[0]['setup']>>[0]): void => {
  const tools = ctx.get(Tools);
  for (const d of defs) tools.register(d);
};

async function polestarLifecycle(warmSchema: boolean): Promise<{ run: (n: number) => Promise<number>; dispose: () => Promise<void> }> {
  const s = await server();
  const app = s.createContext();
  // With a live tool sharing the schema, the registry's interned ajv validator stays
  // compiled; without one, the last tool's disposal drops it and the next agent compiles again.
  if (warmSchema) app.get(Tools).register({ name: 'keep-warm', description: 'x', parameters: SCHEMA, execute: () => 'x' });
  const agents = app.get(Agents);
  // Resident agents share the schema too, so the cold variant keeps none alive.
  if (warmSchema) for (let i = 0; i < RESIDENT; i++) await agents.create({ id: `resident${i}`, setup });
  let k = 0;
  return {
    run: async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const h = await agents.create({ id: `a${k++}`, setup });
        const session = openSession(h.agent);
        const result = await session.turn((turn) => turn.get(Tools).execute(CALL));
        if (!result.isError) sink++;
        await h.dispose();
      }
      return sink;
    },
    dispose: () => s.dispose(),
  };
}

function floorLifecycle(): (n: number) => Promise<number> {
  const registry = new Map<string, Map<string, LifecycleTool>>();
  const fill = (id: string): void => {
    const tools = new Map<string, LifecycleTool>();
    for (const d of defs) tools.set(d.name, Object.freeze({ ...d }));
    registry.set(id, tools);
  };
  for (let i = 0; i < RESIDENT; i++) fill(`resident${i}`);
  let j = 0;
  return async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const id = `a${j++}`;
      fill(id);
      const tool = registry.get(id)?.get('search') as LifecycleTool;
      sink += String(await tool.execute(CALL.arguments)).length;
      registry.delete(id);
    }
    return sink;
  };
}

async function lifecycleRows(): Promise<BenchRow[]> {
  const warm = await polestarLifecycle(true);
  const cold = await polestarLifecycle(false);
  const contenders: Contender[] = [
    { name: 'polestar', run: warm.run },
    { name: 'polestar-cold', run: cold.run },
    { name: 'floor', run: floorLifecycle() },
    ...LIFECYCLE_PEERS.map((p) => ({ name: p.name, run: p.lifecycles(defs) })),
  ];
  const c = await compare(contenders);
  await warm.dispose();
  await cold.dispose();
  const us = (name: string): { min: number; median: number; samples: readonly number[] } => {
    const s = c.ns(name);
    return { min: s.min / 1000, median: s.median / 1000, samples: s.samples.map((x) => x / 1000) };
  };
  const rows: BenchRow[] = [
    row('lifecycle.polestar', `agent lifecycle (create with 5 scoped tools, session, turn running one tool call, dispose), ${RESIDENT} other agents alive`, 'µs/agent', us('polestar')),
    row('lifecycle.polestar-cold', 'same, when no other live tool shares the schema (validator from the released-schema cache)', 'µs/agent', us('polestar-cold')),
    row('lifecycle.floor', 'bare Map floor (5 frozen tools per id, set, call one body, delete)', 'µs/agent', us('floor')),
  ];
  for (const p of LIFECYCLE_PEERS) rows.push(row(`lifecycle.${p.name}`, `same shape in ${p.label}`, 'µs/agent', us(p.name)));
  rows.push(row('lifecycle.polestar/floor', 'lifecycle: polestar / Map floor (same round)', 'x', c.ratio('polestar', 'floor'), { text: '<= 5', max: 5 }));
  for (const p of LIFECYCLE_PEERS) rows.push(row(`lifecycle.${p.name}/polestar`, `lifecycle: ${p.name} / polestar (same round)`, 'x', c.ratio(p.name, 'polestar')));
  return rows;
}

/** The capture tool's schema of the structured task, and one more tool (with a guard) for the task it is weighed against. */
const OUTPUT = { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } }, required: ['title', 'body'] };
const EXTRA: ToolDefinition<{ q: string }> = { name: 'extra', description: 'extra', parameters: OUTPUT, execute: () => 'ok' };

/**
 * A one-task subagent (`agents.runTask`) with 5 scoped tools whose `fn` runs one tool call,
 * three ways in one run: plain; with `output` (fn also calls the capture tool, which
 * commits); and plain plus one more scoped tool and one scoped guard (fn also calls that
 * tool): what `output` is allowed to cost.
 */
async function taskRows(): Promise<BenchRow[]> {
  const s = new Server();
  s.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
  await s.finish();
  const agents = s.createContext().get(Agents);
  // A live tool sharing each schema keeps its validator compiled, as in a service.
  s.createContext().get(Tools).register({ name: 'keep-warm', description: 'x', parameters: SCHEMA, execute: () => 'x' });
  s.createContext().get(Tools).register({ name: 'keep-warm-2', description: 'x', parameters: OUTPUT, execute: () => 'x' });
  const VALUE = Object.freeze({ title: 't', body: 'b' });
  const plain = async (n: number): Promise<number> => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += (await agents.runTask({ setup, fn: async (a) => (await a.ctx.get(Tools).execute(CALL)).content.length })) as number;
    return sink;
  };
  const withOutput = async (n: number): Promise<number> => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const r = await agents.runTask({
        setup,
        output: OUTPUT,
        fn: async (a) => {
          const tools = a.ctx.get(Tools);
          const c = (await tools.execute(CALL)).content.length;
          await tools.execute({ callId: 'c2', name: 'structured_output', arguments: VALUE });
          return c;
        },
      });
      sink += r.result;
    }
    return sink;
  };
  const extraSetup = (ctx: Parameters<typeof setup>[0]): void => {
    setup(ctx);
    const tools = ctx.get(Tools);
    tools.register(EXTRA);
    tools.guard((call) => (call.name === 'never' ? 'no' : undefined));
  };
  const plusToolAndGuard = async (n: number): Promise<number> => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      sink += (await agents.runTask({
        setup: extraSetup,
        fn: async (a) => {
          const tools = a.ctx.get(Tools);
          const c = (await tools.execute(CALL)).content.length;
          await tools.execute({ callId: 'c2', name: 'extra', arguments: VALUE });
          return c;
        },
      })) as number;
    }
    return sink;
  };
  const c = await compare([
    { name: 'task', run: plain },
    { name: 'task-output', run: withOutput },
    { name: 'task+tool+guard', run: plusToolAndGuard },
  ]);
  await s.dispose();
  const us = (name: string): { min: number; median: number; samples: readonly number[] } => {
    const x = c.ns(name);
    return { min: x.min / 1000, median: x.median / 1000, samples: x.samples.map((v) => v / 1000) };
  };
  return [
    row('task.plain', 'agents.runTask with 5 scoped tools, fn runs one tool call', 'µs/task', us('task')),
    row('task.output', 'same with output (capture tool, protected instruction, stop guard), fn also calls the capture tool', 'µs/task', us('task-output')),
    row('task.tool+guard', 'same as plain plus one scoped tool and one scoped guard, fn also calls that tool', 'µs/task', us('task+tool+guard')),
    row('task.output/tool+guard', 'task with output / task with one more tool and guard (same round)', 'x', c.ratio('task-output', 'task+tool+guard'), { text: '<= 1.5', max: 1.5 }),
  ];
}

async function memoryRows(): Promise<BenchRow[]> {
  const N = 5000;
  const s = await server();
  const app = s.createContext();
  const agents = app.get(Agents);
  const before = await settleHeap();
  const handles: AgentHandle[] = [];
  for (let i = 0; i < N; i++) handles.push(await agents.create({ id: `m${i}`, setup }));
  const polestar = ((await settleHeap()) - before) / N;
  await Promise.all(handles.map((h) => h.dispose()));
  handles.length = 0;
  await s.dispose();

  const root = new Container();
  const containers: Container[] = [];
  const b2 = await settleHeap();
  for (let i = 0; i < N; i++) {
    const c = new Container({ parent: root });
    for (const d of defs) c.bind(d.name).toConstantValue(d);
    containers.push(c);
  }
  const inversify = ((await settleHeap()) - b2) / N;
  containers.length = 0;

  const maps = new Map<string, Map<string, ToolDefinition>>();
  const b3 = await settleHeap();
  for (let i = 0; i < N; i++) {
    const tools = new Map<string, ToolDefinition>();
    for (const d of defs) tools.set(d.name, Object.freeze({ ...d }));
    maps.set(`m${i}`, tools);
  }
  const floor = ((await settleHeap()) - b3) / N;
  maps.clear();
  return [
    single('heap.agent5', 'heap per live agent with 5 scoped tools', 'bytes', polestar),
    single('heap.agent5.inversify', 'heap per inversify child container with 5 bindings', 'bytes', inversify),
    single('heap.agent5.floor', 'heap per Map of 5 frozen tools (floor)', 'bytes', floor),
  ];
}

async function loadRows(): Promise<BenchRow[]> {
  const load = await runAgentsLoad(budget().name === 'quick' ? 2_000 : 10_000, 100);
  const n = load.agents.toLocaleString('en-US');
  return [
    single('load.rate', `concurrent create+dispose, ${n} agents (5 tools, session, open turn, racing disposals)`, 'agents/s', load.agentsPerSecond),
    single('load.create', `create phase (${n} concurrent)`, 'ms', load.createMs),
    single('load.dispose', 'dispose phase (racing)', 'ms', load.disposeMs),
    single('load.heap', 'heap per live agent (5 tools, session, open turn)', 'bytes', load.bytesPerLiveAgent, { text: '<= 16384', max: 16 * 1024 }),
    single('load.growth', 'heap growth after disposing everything', 'KB', load.heapGrowth / 1024, { text: '<= 5120', max: 5 * 1024 }),
    single('load.leaks', 'live registrations left after disposing everything (assertNoLeaks)', 'count', load.leaks.length, { text: '0', max: 0 }),
  ];
}

/** Runs the agents benchmark. */
export function run(): Promise<BenchReport> {
  return withLoad('agents', async () => [...(await lifecycleRows()), ...(await taskRows()), ...(await loadRows()), ...(await memoryRows())]);
}

await runIfMain('agents.bench.js', run);
