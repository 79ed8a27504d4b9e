/**
 * Systems benchmark: the cost of `ctx.run(system)` (parameter fetch with borrows, call,
 * output store) against a hand-written equivalent in the same process, plus
 * `ctx.execute` and `ctx.resolve` against raw inversify and a bare-Map floor.
 *
 * Run alone: `npm run build:run && node .build/bench/systems.bench.js [--quick]`.
 */
import 'reflect-metadata';
import { Container, inject, injectable } from 'inversify';
import { res, resMut, Res, ResMut, Server, system, token, type SystemContext } from '../src/index.js';
import { compare } from './harness.js';
import { row, runIfMain, withLoad, type BenchReport, type BenchRow } from './report.js';

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
export function run(): Promise<BenchReport> {
  return withLoad('systems', measure);
}

async function measure(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { server, turn } = await tree();

  const sync = await compare([
    {
      name: 'run',
      run: async (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += await turn.run(threeParams);
        return s;
      },
    },
    {
      name: 'hand',
      run: async (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += await handWritten(turn);
        return s;
      },
    },
  ]);
  rows.push(row('run.sync', 'ctx.run(system: 2 Res + 1 ResMut, sync body)', 'ns/op', sync.ns('run')));
  rows.push(row('run.hand', 'hand-written get, get, getMut, call, outputs.insert (async fn)', 'ns/op', sync.ns('hand')));
  rows.push(row('run.ratio', 'ctx.run / hand-written (same round)', 'x', sync.ratio('run', 'hand'), { text: '<= 1.6', max: 1.6 }));

  const asyncBody = await compare([
    {
      name: 'run',
      run: async (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += await turn.run(asyncThreeParams);
        return s;
      },
    },
    {
      name: 'hand',
      run: async (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += await handWrittenAsync(turn);
        return s;
      },
    },
  ]);
  rows.push(row('run-async.ratio', 'ctx.run / hand-written, async body (same round)', 'x', asyncBody.ratio('run', 'hand'), { text: '<= 2', max: 2 }));

  const steps = [threeParams, threeParams, threeParams];
  const exec = await compare([
    {
      name: 'execute',
      run: async (k) => {
        for (let i = 0; i < k; i++) await turn.execute(steps);
      },
    },
    {
      name: 'hand3',
      run: async (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += (await handWritten(turn)) + (await handWritten(turn)) + (await handWritten(turn));
        return s;
      },
    },
  ]);
  rows.push(row('execute.3', 'ctx.execute([3 systems]) incl. ExecutionResult', 'ns/op', exec.ns('execute')));
  rows.push(row('execute.ratio', 'ctx.execute([3 systems]) / 3 hand-written runs (same round)', 'x', exec.ratio('execute', 'hand3')));

  // ctx.resolve of a class with three constructor parameters
  const raw = new Container();
  raw.bind(AppConfig).toConstantValue(new AppConfig('researcher'));
  raw.bind(AgentMemory).toConstantValue(new AgentMemory());
  raw.bind(Scratchpad).toConstantValue(new Scratchpad());
  raw.bind(RawWorker).toSelf();
  const map = new Map<unknown, unknown>([
    [AppConfig, new AppConfig('researcher')],
    [AgentMemory, new AgentMemory()],
    [Scratchpad, new Scratchpad()],
  ]);
  const res = await compare([
    {
      name: 'polestar',
      run: (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += turn.resolve(Worker).scratch.count;
        return s;
      },
    },
    {
      name: 'inversify',
      run: (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += raw.get(RawWorker).scratch.count;
        return s;
      },
    },
    {
      name: 'floor',
      run: (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) {
          s += new Worker(map.get(AppConfig) as AppConfig, map.get(AgentMemory) as AgentMemory, map.get(Scratchpad) as Scratchpad).scratch.count;
        }
        return s;
      },
    },
  ]);
  rows.push(row('resolve.polestar', 'ctx.resolve(class with 3 params)', 'ns/op', res.ns('polestar')));
  rows.push(row('resolve.inversify', 'raw inversify container.get(same class, constant bindings)', 'ns/op', res.ns('inversify')));
  rows.push(row('resolve.floor', 'Map floor: new Class(map.get x3)', 'ns/op', res.ns('floor')));
  rows.push(row('resolve.ratio', 'ctx.resolve / raw inversify (same round)', 'x', res.ratio('polestar', 'inversify')));

  await server.dispose();
  return rows;
}

await runIfMain('systems.bench.js', run);
