/**
 * Context-tree benchmark: the per-turn workload of a multi-agent backend, on polestar
 * contexts, on raw inversify and three peer containers (tsyringe, awilix, typed-inject),
 * and on a bare chain of Maps (the floor).
 *
 * Per turn, from a session (server/root → agent → session): make a child, insert a local,
 * get a global 4 levels up (turn → session → agent → globals), get an agent-level local,
 * get the turn local mutably (`getMut`; a plain get for the peers), dispose the child
 * (awaited). Every contender keeps {@link RESIDENT} agent trees alive and rotates turns
 * over them, as a server holding several agents would.
 *
 * Run alone: `npm run build:run && node --expose-gc .build/bench/context.bench.js [--quick]`.
 */
import 'reflect-metadata';
import { Server, type SystemContext } from '../src/index.js';
import { compare, settleHeap, type Contender } from './harness.js';
import { row, runIfMain, single, withLoad, type BenchReport, type BenchRow } from './report.js';
import { TURN_PEERS, AppConfig, AgentMemory, Scratchpad, RESIDENT } from './peers.js';

const scratch = new Scratchpad();
/** One shared resolved promise: what the floor awaits as its "dispose". */
const DONE: Promise<void> = Promise.resolve();

// ------------------------------------------------------------------ polestar

async function polestarServer(): Promise<{ server: Server; sessions: SystemContext[] }> {
  const server = new Server();
  server.insertGlobal(new AppConfig('researcher'));
  server.registerLocal(AgentMemory);
  await server.finish();
  const sessions: SystemContext[] = [];
  for (let i = 0; i < RESIDENT; i++) sessions.push(server.createContext().child());
  return { server, sessions };
}

function polestarTurns(sessions: readonly SystemContext[]): (n: number) => Promise<number> {
  let k = 0;
  return async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      const turn = sessions[k++ % RESIDENT].child();
      turn.insert(Scratchpad, scratch);
      sink += turn.get(AppConfig).agentName.length;
      sink += turn.get(AgentMemory).facts.length;
      sink += turn.getMut(Scratchpad).notes.length;
      await turn.dispose();
    }
    return sink;
  };
}

// ------------------------------------------------------------------ floor: a bare chain of Maps

interface Node {
  readonly parent: Node | undefined;
  readonly locals: Map<unknown, unknown>;
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

function floorTree(): { globals: Map<unknown, unknown>; sessions: Node[] } {
  const globals = new Map<unknown, unknown>([[AppConfig, new AppConfig('researcher')]]);
  const sessions: Node[] = [];
  for (let i = 0; i < RESIDENT; i++) {
    const agent: Node = { parent: undefined, locals: new Map<unknown, unknown>([[AgentMemory, new AgentMemory()]]) };
    sessions.push({ parent: agent, locals: new Map() });
  }
  return { globals, sessions };
}

function floorTurns(sessions: readonly Node[], globals: Map<unknown, unknown>, awaitDispose: boolean): (n: number) => unknown {
  let k = 0;
  const one = (): number => {
    const turn: Node = { parent: sessions[k++ % RESIDENT], locals: new Map() };
    turn.locals.set(Scratchpad, scratch);
    let sink = (floorGet(turn, globals, AppConfig) as AppConfig).agentName.length;
    sink += (floorGet(turn, globals, AgentMemory) as AgentMemory).facts.length;
    sink += (turn.locals.get(Scratchpad) as Scratchpad).notes.length;
    turn.locals.clear();
    return sink;
  };
  if (awaitDispose) {
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        sink += one();
        await DONE;
      }
      return sink;
    };
  }
  return (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += one();
    return sink;
  };
}

// ------------------------------------------------------------------ rows

async function turnRows(): Promise<BenchRow[]> {
  const p = await polestarServer();
  const f = floorTree();
  const peers = await Promise.all(TURN_PEERS.map(async (peer) => ({ name: peer.name, label: peer.label, run: await peer.turns() })));
  const contenders: Contender[] = [
    { name: 'polestar', run: polestarTurns(p.sessions) },
    { name: 'floor', run: floorTurns(f.sessions, f.globals, true) },
    { name: 'floor-sync', run: floorTurns(f.sessions, f.globals, false) },
    ...peers.map((peer) => ({ name: peer.name, run: peer.run })),
  ];
  const c = await compare(contenders);
  await p.server.dispose();
  const rows: BenchRow[] = [
    row('turn.polestar', 'turn workload: polestar', 'ns/turn', c.ns('polestar')),
    row('turn.floor', 'turn workload: Map-chain floor, awaiting one shared resolved promise as dispose', 'ns/turn', c.ns('floor')),
    row('turn.floor-sync', 'turn workload: Map-chain floor, fully synchronous', 'ns/turn', c.ns('floor-sync')),
  ];
  for (const peer of peers) rows.push(row(`turn.${peer.name}`, `turn workload: ${peer.label}`, 'ns/turn', c.ns(peer.name)));
  rows.push(row('turn.polestar/floor', 'per-turn: polestar / floor (same round)', 'x', c.ratio('polestar', 'floor'), { text: '<= 1.4', max: 1.4 }));
  rows.push(row('turn.polestar/floor-sync', 'per-turn: polestar / synchronous floor', 'x', c.ratio('polestar', 'floor-sync')));
  for (const peer of peers) rows.push(row(`turn.${peer.name}/polestar`, `per-turn: ${peer.name} / polestar (same round)`, 'x', c.ratio(peer.name, 'polestar')));
  return rows;
}

async function getDepth4Rows(): Promise<BenchRow[]> {
  const { server, sessions } = await polestarServer();
  const turn = sessions[0].child();
  const f = floorTree();
  const fturn: Node = { parent: f.sessions[0], locals: new Map() };
  const c = await compare([
    {
      name: 'polestar',
      run: (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += turn.get(AppConfig).agentName.length;
        return s;
      },
    },
    {
      name: 'floor',
      run: (k) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += (floorGet(fturn, f.globals, AppConfig) as AppConfig).agentName.length;
        return s;
      },
    },
  ]);
  await server.dispose();
  return [
    row('get4.polestar', 'get(global) from a turn, 4 levels up: polestar', 'ns/op', c.ns('polestar')),
    row('get4.floor', 'get(global) from a turn, 4 levels up: Map floor', 'ns/op', c.ns('floor')),
    row('get4.polestar/floor', 'get at depth 4: polestar / floor', 'x', c.ratio('polestar', 'floor'), { text: '<= 2', max: 2 }),
  ];
}

async function heapPerTurnRow(count: number): Promise<BenchRow> {
  const { server, sessions } = await polestarServer();
  const turns: SystemContext[] = [];
  const before = await settleHeap();
  for (let i = 0; i < count; i++) {
    const t = sessions[0].child();
    t.insert(Scratchpad, scratch);
    turns.push(t);
  }
  const perTurn = ((await settleHeap()) - before) / count;
  await server.dispose();
  turns.length = 0;
  return single('heap.turn', `heap per live turn context with one local (${count.toLocaleString('en-US')} live)`, 'bytes', perTurn, { text: '<= 1024', max: 1024 });
}

async function insertRows(): Promise<BenchRow[]> {
  const trees = await Promise.all(
    [10, 10_000].map(async (descendants) => {
      const { server, sessions } = await polestarServer();
      const agent = sessions[0].parent as SystemContext;
      const fan = Math.max(1, Math.floor(Math.sqrt(descendants)));
      let made = 0;
      while (made < descendants) {
        const s = agent.child();
        made++;
        for (let j = 1; j < fan && made < descendants; j++, made++) s.child();
      }
      return { server, agent };
    }),
  );
  const value = new Scratchpad();
  const c = await compare(
    trees.map((t, i) => ({
      name: i === 0 ? 'small' : 'large',
      run: (k: number) => {
        for (let j = 0; j < k; j++) t.agent.insert(Scratchpad, value);
      },
    })),
  );
  for (const t of trees) await t.server.dispose();
  return [
    row('insert.10', 'agent.insert with 10 live descendants', 'ns/op', c.ns('small')),
    row('insert.10000', 'agent.insert with 10,000 live descendants', 'ns/op', c.ns('large')),
    row('insert.ratio', 'insert cost, 10,000 / 10 descendants (same round)', 'x', c.ratio('large', 'small'), { text: '<= 1.5', max: 1.5 }),
  ];
}

/** Runs every measurement and returns the report. */
export function run(): Promise<BenchReport> {
  return withLoad('context tree', async () => [...(await turnRows()), ...(await getDepth4Rows()), await heapPerTurnRow(100_000), ...(await insertRows())]);
}

await runIfMain('context.bench.js', run);
