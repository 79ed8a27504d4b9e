/**
 * Context-tree benchmark: the per-turn workload of a multi-agent backend, measured on
 * polestar contexts, on one raw inversify Container per context, and on a bare chain of
 * Maps (the floor).
 *
 * Per turn, from a session context (server → agent root → session):
 * `child()`, `insert` a local, `get` a global (4 levels up: turn → session → agent →
 * globals), `get` an agent-level local, `getMut` the turn local, `await dispose()`.
 *
 * Run alone: `npx tsc -p tsconfig.run.json && node --expose-gc .build/bench/context.bench.js`.
 */
import 'reflect-metadata';
import { Container } from 'inversify';
import { Server, type SystemContext } from '../src/index.js';
import { gc, nsPerOp } from './measure.js';
import { runIfMain, type BenchReport, type BenchRow } from './report.js';

class AppConfig {
  constructor(readonly agentName: string) {}
}
class AgentMemory {
  readonly facts: string[] = [];
}
class Scratchpad {
  readonly notes: string[] = [];
}

const scratch = new Scratchpad();
/** One shared resolved promise: what the floor awaits as its "dispose". */
const DONE: Promise<void> = Promise.resolve();

// ------------------------------------------------------------------ timing helpers

// ------------------------------------------------------------------ polestar

async function polestarTree(): Promise<{ server: Server; agent: SystemContext; session: SystemContext }> {
  const server = new Server();
  server.insertGlobal(new AppConfig('researcher'));
  server.registerLocal(AgentMemory);
  await server.finish();
  const agent = server.createContext();
  const session = agent.child();
  return { server, agent, session };
}

function polestarTurns(session: SystemContext): (n: number) => Promise<number> {
  return async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const turn = session.child();
      turn.insert(Scratchpad, scratch);
      sink += turn.get(AppConfig).agentName.length;
      sink += turn.get(AgentMemory).facts.length;
      sink += turn.getMut(Scratchpad).notes.length;
      await turn.dispose();
    }
    return sink;
  };
}

// ------------------------------------------------------------------ raw inversify

function inversifyTree(): { session: Container } {
  const root = new Container();
  root.bind(AppConfig).toConstantValue(new AppConfig('researcher'));
  const agent = new Container({ parent: root });
  agent.bind(AgentMemory).toConstantValue(new AgentMemory());
  const session = new Container({ parent: agent });
  return { session };
}

function inversifyTurns(session: Container): (n: number) => Promise<number> {
  return async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const turn = new Container({ parent: session });
      turn.bind(Scratchpad).toConstantValue(scratch);
      sink += turn.get(AppConfig).agentName.length;
      sink += turn.get(AgentMemory).facts.length;
      sink += turn.get(Scratchpad).notes.length;
      turn.unbindAll();
      await Promise.resolve();
    }
    return sink;
  };
}

// ------------------------------------------------------------------ floor: a bare chain of Maps

interface Node {
  readonly parent: Node | undefined;
  readonly locals: Map<unknown, unknown>;
}

function floorTree(): { globals: Map<unknown, unknown>; session: Node } {
  const globals = new Map<unknown, unknown>([[AppConfig, new AppConfig('researcher')]]);
  const agent: Node = { parent: undefined, locals: new Map<unknown, unknown>([[AgentMemory, new AgentMemory()]]) };
  const session: Node = { parent: agent, locals: new Map() };
  return { globals, session };
}

function floorGet(node: Node, globals: Map<unknown, unknown>, t: unknown): unknown {
  for (let c: Node | undefined = node; c !== undefined; c = c.parent) {
    const v = c.locals.get(t);
    if (v !== undefined) return v;
  }
  const g = globals.get(t);
  if (g === undefined) throw new Error('missing');
  return g;
}

function floorTurns(session: Node, globals: Map<unknown, unknown>, awaitDispose: boolean): (n: number) => Promise<number> | number {
  if (awaitDispose) {
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const turn: Node = { parent: session, locals: new Map() };
        turn.locals.set(Scratchpad, scratch);
        sink += (floorGet(turn, globals, AppConfig) as AppConfig).agentName.length;
        sink += (floorGet(turn, globals, AgentMemory) as AgentMemory).facts.length;
        sink += (turn.locals.get(Scratchpad) as Scratchpad).notes.length;
        turn.locals.clear();
        await DONE;
      }
      return sink;
    };
  }
  return (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const turn: Node = { parent: session, locals: new Map() };
      turn.locals.set(Scratchpad, scratch);
      sink += (floorGet(turn, globals, AppConfig) as AppConfig).agentName.length;
      sink += (floorGet(turn, globals, AgentMemory) as AgentMemory).facts.length;
      sink += (turn.locals.get(Scratchpad) as Scratchpad).notes.length;
      turn.locals.clear();
    }
    return sink;
  };
}

// ------------------------------------------------------------------ measurements

async function getDepth4(): Promise<{ polestar: number; floor: number }> {
  const { server, session } = await polestarTree();
  const turn = session.child();
  const { globals, session: fs } = floorTree();
  const fturn: Node = { parent: fs, locals: new Map() };
  const n = 2_000_000;
  const polestar = await nsPerOp(n, 7, (k) => {
    let s = 0;
    for (let i = 0; i < k; i++) s += turn.get(AppConfig).agentName.length;
    return s;
  });
  const floor = await nsPerOp(n, 7, (k) => {
    let s = 0;
    for (let i = 0; i < k; i++) s += (floorGet(fturn, globals, AppConfig) as AppConfig).agentName.length;
    return s;
  });
  await server.dispose();
  return { polestar, floor };
}

async function heapPerTurn(count: number): Promise<number> {
  const { server, session } = await polestarTree();
  const turns: SystemContext[] = [];
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) {
    const t = session.child();
    t.insert(Scratchpad, scratch);
    turns.push(t);
  }
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  const perTurn = (after - before) / count;
  await server.dispose();
  turns.length = 0;
  gc();
  return perTurn;
}

async function insertWithDescendants(descendants: number): Promise<number> {
  const { server, agent } = await polestarTree();
  const sessions = Math.max(1, Math.floor(Math.sqrt(descendants)));
  let made = 0;
  while (made < descendants) {
    const s = agent.child();
    made++;
    for (let j = 1; j < sessions && made < descendants; j++, made++) s.child();
  }
  const TOKEN_VALUE = new Scratchpad();
  const ns = await nsPerOp(500_000, 7, (k) => {
    for (let i = 0; i < k; i++) agent.insert(Scratchpad, TOKEN_VALUE);
  });
  await server.dispose();
  return ns;
}

/** Runs every measurement and returns the report. */
export async function run(): Promise<BenchReport> {
  const rows: BenchRow[] = [];
  const turnsN = 200_000;

  const p = await polestarTree();
  const polestar = await nsPerOp(turnsN, 7, polestarTurns(p.session));
  await p.server.dispose();

  const inv = inversifyTree();
  const inversify = await nsPerOp(Math.floor(turnsN / 10), 5, inversifyTurns(inv.session));

  const f = floorTree();
  const floorAsync = await nsPerOp(turnsN, 7, floorTurns(f.session, f.globals, true));
  const floorSync = await nsPerOp(turnsN, 7, floorTurns(f.session, f.globals, false));

  rows.push({ metric: 'turn workload: polestar', value: polestar, unit: 'ns/turn' });
  rows.push({ metric: 'turn workload: raw inversify (Container per context)', value: inversify, unit: 'ns/turn' });
  rows.push({ metric: 'turn workload: Map floor, awaiting one shared resolved promise as dispose', value: floorAsync, unit: 'ns/turn' });
  rows.push({ metric: 'turn workload: Map floor, fully synchronous', value: floorSync, unit: 'ns/turn' });
  const speedup = inversify / polestar;
  rows.push({ metric: 'speed-up over raw inversify', value: speedup, unit: 'x', target: '>= 50', ok: speedup >= 50 });
  const vsFloor = polestar / floorAsync;
  rows.push({ metric: 'polestar / floor (awaited dispose)', value: vsFloor, unit: 'x', target: '<= 3', ok: vsFloor <= 3 });
  rows.push({ metric: 'polestar / floor (synchronous floor)', value: polestar / floorSync, unit: 'x' });

  const g = await getDepth4();
  rows.push({ metric: 'get(global) from depth 3 (4 levels up): polestar', value: g.polestar, unit: 'ns/op' });
  rows.push({ metric: 'get(global) from depth 3 (4 levels up): Map floor', value: g.floor, unit: 'ns/op' });
  const gRatio = g.polestar / g.floor;
  rows.push({ metric: 'get at depth 4: polestar / floor', value: gRatio, unit: 'x', target: '<= 2', ok: gRatio <= 2 });

  const liveTurns = 100_000;
  const heap = await heapPerTurn(liveTurns);
  rows.push({
    metric: `heap per live turn context with one local (${liveTurns} live)`,
    value: heap,
    unit: 'bytes',
    target: '<= 1024',
    ok: heap <= 1024,
  });

  const small = await insertWithDescendants(10);
  const large = await insertWithDescendants(10_000);
  rows.push({ metric: 'agent.insert with 10 live descendants', value: small, unit: 'ns/op' });
  rows.push({ metric: 'agent.insert with 10,000 live descendants', value: large, unit: 'ns/op' });
  const insRatio = large / small;
  rows.push({ metric: 'insert cost ratio 10,000 / 10 descendants', value: insRatio, unit: 'x', target: '~1 (<= 1.5)', ok: insRatio <= 1.5 });

  return { name: 'context tree', rows };
}

await runIfMain('context.bench.js', run);
