/**
 * Systems benchmark: the cost of `ctx.run(system)` (parameter fetch with borrows, call,
 * output store) against a hand-written equivalent in the same process, plus
 * `ctx.execute` and `ctx.resolve` against raw inversify and a bare-Map floor.
 *
 * Run alone: `npx tsc -p tsconfig.run.json && node --expose-gc .build/bench/systems.bench.js`.
 */
import 'reflect-metadata';
import { Container, inject, injectable } from 'inversify';
import { res, resMut, Res, ResMut, Server, system, token, type SystemContext } from '../src/index.js';
import { gc, now, nsPerOp } from './measure.js';
import { runIfMain, type BenchReport, type BenchRow } from './report.js';

class AppConfig {
  constructor(readonly agentName: string) {}
}
class AgentMemory {
  readonly facts: string[] = [];
}
class Scratchpad {
  count = 0;
}
const Note = token<number>('Note');

@injectable()
class Worker {
  constructor(
    @res(AppConfig) readonly config: AppConfig,
    @res(AgentMemory) readonly memory: AgentMemory,
    @resMut(Scratchpad) readonly scratch: Scratchpad,
  ) {}
}

@injectable()
class RawWorker {
  constructor(
    @inject(AppConfig) readonly config: AppConfig,
    @inject(AgentMemory) readonly memory: AgentMemory,
    @inject(Scratchpad) readonly scratch: Scratchpad,
  ) {}
}

// ------------------------------------------------------------------ timing helpers

/** Median ns per op of `a` and of `b`, measured in alternating rounds so drift hits both. */
async function pair(n: number, rounds: number, a: (n: number) => unknown, b: (n: number) => unknown): Promise<[number, number]> {
  gc();
  await a(Math.min(n, 20_000));
  await b(Math.min(n, 20_000));
  const sa: number[] = [];
  const sb: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = now();
    await a(n);
    sa.push((now() - t0) / n);
    t0 = now();
    await b(n);
    sb.push((now() - t0) / n);
  }
  sa.sort((x, y) => x - y);
  sb.sort((x, y) => x - y);
  return [sa[Math.floor(rounds / 2)], sb[Math.floor(rounds / 2)]];
}

// ------------------------------------------------------------------ the workload

/** The body both variants call. */
function body(config: Readonly<AppConfig>, memory: Readonly<AgentMemory>, scratch: Scratchpad): number {
  scratch.count++;
  return config.agentName.length + memory.facts.length + scratch.count;
}

const threeParams = system([Res(AppConfig), Res(AgentMemory), ResMut(Scratchpad)], body, { name: 'threeParams', output: Note });
const asyncThreeParams = system([Res(AppConfig), Res(AgentMemory), ResMut(Scratchpad)], async (c, m, s) => body(c, m, s), { name: 'async', output: Note });

/** The hand-written equivalent of `ctx.run(threeParams)`: get, get, getMut, call, outputs.insert. */
async function handWritten(ctx: SystemContext): Promise<number> {
  const config = ctx.get(AppConfig);
  const memory = ctx.get(AgentMemory);
  const scratch = ctx.getMut(Scratchpad);
  const out = body(config, memory, scratch);
  ctx.outputs.insert(Note, out);
  return out;
}

async function handWrittenAsync(ctx: SystemContext): Promise<number> {
  const config = ctx.get(AppConfig);
  const memory = ctx.get(AgentMemory);
  const scratch = ctx.getMut(Scratchpad);
  const out = await (async () => body(config, memory, scratch))();
  ctx.outputs.insert(Note, out);
  return out;
}

async function tree(): Promise<{ server: Server; turn: SystemContext }> {
  const server = new Server();
  server.insertGlobal(new AppConfig('researcher'));
  server.registerLocal(AgentMemory);
  await server.finish();
  const agent = server.createContext();
  const turn = agent.child().child();
  turn.insert(new Scratchpad());
  return { server, turn };
}

/** Runs every measurement and returns the report. */
export async function run(): Promise<BenchReport> {
  const rows: BenchRow[] = [];
  const { server, turn } = await tree();
  const n = 500_000;

  const [runNs, handNs] = await pair(
    n,
    9,
    async (k) => {
      let s = 0;
      for (let i = 0; i < k; i++) s += await turn.run(threeParams);
      return s;
    },
    async (k) => {
      let s = 0;
      for (let i = 0; i < k; i++) s += await handWritten(turn);
      return s;
    },
  );
  const ratio = runNs / handNs;
  rows.push({ metric: 'ctx.run(system: 2 Res + 1 ResMut, sync body)', value: runNs, unit: 'ns/op' });
  rows.push({ metric: 'hand-written get, get, getMut, call, outputs.insert (async fn)', value: handNs, unit: 'ns/op' });
  rows.push({ metric: 'ctx.run / hand-written', value: ratio, unit: 'x', target: '<= 2', ok: ratio <= 2 });

  const [runAsyncNs, handAsyncNs] = await pair(
    n,
    9,
    async (k) => {
      let s = 0;
      for (let i = 0; i < k; i++) s += await turn.run(asyncThreeParams);
      return s;
    },
    async (k) => {
      let s = 0;
      for (let i = 0; i < k; i++) s += await handWrittenAsync(turn);
      return s;
    },
  );
  const ratioAsync = runAsyncNs / handAsyncNs;
  rows.push({ metric: 'ctx.run(same system, async body)', value: runAsyncNs, unit: 'ns/op' });
  rows.push({ metric: 'hand-written with an async body', value: handAsyncNs, unit: 'ns/op' });
  rows.push({ metric: 'ctx.run / hand-written (async body)', value: ratioAsync, unit: 'x', target: '<= 2', ok: ratioAsync <= 2 });

  const steps = [threeParams, threeParams, threeParams];
  const execNs = await nsPerOp(n / 5, 7, async (k) => {
    for (let i = 0; i < k; i++) await turn.execute(steps);
  });
  rows.push({ metric: 'ctx.execute([3 systems]) incl. ExecutionResult', value: execNs, unit: 'ns/op' });
  rows.push({ metric: 'ctx.execute([3 systems]) / 3 hand-written runs', value: execNs / (3 * handNs), unit: 'x' });

  // ctx.resolve of a class with three constructor parameters
  const resolveNs = await nsPerOp(n / 5, 7, (k) => {
    let s = 0;
    for (let i = 0; i < k; i++) s += turn.resolve(Worker).scratch.count;
    return s;
  });
  const raw = new Container();
  raw.bind(AppConfig).toConstantValue(new AppConfig('researcher'));
  raw.bind(AgentMemory).toConstantValue(new AgentMemory());
  raw.bind(Scratchpad).toConstantValue(new Scratchpad());
  raw.bind(RawWorker).toSelf();
  const rawNs = await nsPerOp(n / 5, 7, (k) => {
    let s = 0;
    for (let i = 0; i < k; i++) s += raw.get(RawWorker).scratch.count;
    return s;
  });
  const map = new Map<unknown, unknown>([
    [AppConfig, new AppConfig('researcher')],
    [AgentMemory, new AgentMemory()],
    [Scratchpad, new Scratchpad()],
  ]);
  const floorNs = await nsPerOp(n, 7, (k) => {
    let s = 0;
    for (let i = 0; i < k; i++) {
      s += new Worker(map.get(AppConfig) as AppConfig, map.get(AgentMemory) as AgentMemory, map.get(Scratchpad) as Scratchpad).scratch.count;
    }
    return s;
  });
  rows.push({ metric: 'ctx.resolve(class with 3 params)', value: resolveNs, unit: 'ns/op' });
  rows.push({ metric: 'raw inversify container.get(same class, constant bindings)', value: rawNs, unit: 'ns/op' });
  rows.push({ metric: 'Map floor: new Class(map.get x3)', value: floorNs, unit: 'ns/op' });
  rows.push({ metric: 'ctx.resolve / raw inversify', value: resolveNs / rawNs, unit: 'x' });

  await server.dispose();
  return { name: 'systems', rows };
}

await runIfMain('systems.bench.js', run);
