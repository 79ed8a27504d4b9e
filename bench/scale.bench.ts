/**
 * Scale benchmark (issue 9): one agent's cost must not depend on the other agents.
 *
 * 1. `churn`: `Tools.execute` from an agent, on a server with 1,000 global tools, right
 *    after another agent (5 scoped tools) was created and disposed (untimed), vs the same
 *    call on an identical server with no churn. Both sides time each call alone. A third
 *    side, `elsewhere`, does the same churn on a *separate* server before each call: the
 *    same work between the calls, no state shared with the called server. `churn /
 *    elsewhere` is what the other agents' state itself costs the call (the rest of
 *    `churn / quiet` is the CPU caches the churn's work cooled, wherever it ran). A fourth
 *    side, `cooled`, runs no polestar code between the calls at all: a fixed workload cools
 *    the caches on purpose ({@link coolCaches}: 150 distinct JIT-compiled functions and
 *    128 KB of memory), so `cooled / quiet` shows what cache cooling alone, with no other
 *    agent anywhere, costs the same call: the yardstick `churn / quiet` is read against.
 *    `churn.work` and `churn.cooled-work` say how long the work between calls took.
 * 2. `listeners`: `Tools.execute` from an agent while 10,000 other agents each hold four
 *    scoped `tools/*` listeners (pre-execute, execute, post-execute, result), vs an
 *    identical server with no other agents.
 * 3. `listener-churn`: add, then dispose (in a shuffled order), 40,000 scoped listeners of
 *    one event name (10,000 scopes × 4), single shot, wall time.
 * 4. `schema-heap`: heap after registering and disposing 5,000 tools with distinct
 *    schemas (after full GCs), against the heap before.
 *
 * Rows 1–2 use the fair harness (bench/harness.ts): batches, yields, rounds interleaved,
 * ratios within a round, min / median over rounds.
 *
 * Run: `npm run bench:scale` (or `node --expose-gc .build/bench/scale.bench.js [--quick]`
 * after `npm run build:run`).
 */
import 'reflect-metadata';
import { Agents, AgentsPlugin, Events, Server, Tools, ToolsPlugin, createScope, type Scope, type ToolDefinition, type SystemContext } from '../src/index.js';
import { budget, compare, now, settleHeap, timeOnce, yieldLoop } from './harness.js';
import { RESIDENT } from './peers.js';
import { row, runIfMain, single, withLoad, type BenchReport, type BenchRow } from './report.js';

const SCHEMA = { type: 'object', properties: { q: { type: 'string' } } };
const NAMES = ['search', 'fetch', 'summarize', 'cite', 'note'];
const defs: ToolDefinition[] = NAMES.map((n) => ({ name: n, description: n, parameters: SCHEMA, execute: () => n }));
const CALL = Object.freeze({ callId: 'c1', name: 'search', arguments: Object.freeze({ q: 'x' }) });
const setup = (ctx: SystemContext): void => {
  const tools = ctx.get(Tools);
  for (const d of defs) tools.register(d);
};
const LISTENED = ['tools/pre-execute', 'tools/execute', 'tools/post-execute', 'tools/result'];

async function server(): Promise<{ server: Server; app: SystemContext; agents: Agents }> {
  const s = new Server();
  s.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await s.finish();
  const app = s.createContext();
  return { server: s, app, agents: app.get(Agents) };
}

/** RESIDENT agents with the five tools; returns their Tools views to rotate over. */
async function residents(agents: Agents, prefix: string): Promise<Tools[]> {
  const views: Tools[] = [];
  for (let i = 0; i < RESIDENT; i++) views.push((await agents.create({ id: `${prefix}${i}`, setup })).agent.ctx.get(Tools));
  return views;
}

async function check(views: readonly Tools[]): Promise<void> {
  for (const v of views) {
    const r = await v.execute(CALL);
    if (r.isError) throw new Error(`bench setup: ${JSON.stringify(r)}`);
  }
}

// ------------------------------------------------------------------ 1. churn

/**
 * A fixed-size workload that runs no polestar code and cools the CPU caches as other work
 * between two tool calls does: it runs 150 distinct compiled functions (more machine code
 * than the L1 instruction cache holds) and touches 128 KB of memory (more than the L1 data
 * cache holds). Built once. Its size is a setting, not a model of the churn: the rows
 * report how long each side's between-call work took (`churn.work`, `churn.cooled-work`).
 */
const coolCaches = ((): (() => number) => {
  const fns: ((x: number) => number)[] = [];
  for (let f = 0; f < 150; f++) {
    // distinct source text, so every function has its own machine code
    const fn = new Function('x', `let a = x + ${f}; for (let i = 0; i < 3; i++) { a = (a * ${f + 3}) ^ (a >>> ${(f % 7) + 1}); if (a & ${f}) a += ${f * 7}; else a -= ${f * 5}; a = Math.imul(a, ${f * 13 + 1}) + ${f}; } return a;`);
    fns.push(fn as (x: number) => number);
  }
  const memory = new Int32Array(1 << 15);
  let sink = 0;
  return () => {
    for (const fn of fns) sink ^= fn(sink);
    for (let i = 0; i < memory.length; i += 16) sink ^= memory[i]++;
    return sink;
  };
})();

async function churnRows(): Promise<BenchRow[]> {
  const sides = await Promise.all(
    ['churn', 'quiet', 'elsewhere', 'cooled'].map(async (name) => {
      const s = await server();
      const g = s.app.get(Tools);
      for (let i = 0; i < 1000; i++) g.register({ name: `global_${i}`, description: `global ${i}`, parameters: SCHEMA, execute: () => i });
      const views = await residents(s.agents, 'resident');
      await check(views);
      return { name, ...s, views };
    }),
  );
  // the separate server the `elsewhere` side churns on (same plugins, no global tools needed:
  // the churned agent registers its five scoped tools, as on the `churn` side)
  const apart = await server();
  let other = 0;
  // how long each side's between-call work took (off the call's clock), over every op run
  const work = new Map<string, { ns: number; ops: number }>(sides.map((side) => [side.name, { ns: 0, ops: 0 }]));
  const contenders = sides.map((side) => {
    let k = 0;
    const spent = work.get(side.name) as { ns: number; ops: number };
    return {
      name: side.name,
      selfTimed: true,
      run: async (n: number) => {
        let ns = 0;
        for (let i = 0; i < n; i++) {
          const w0 = now();
          if (side.name === 'cooled') coolCaches();
          else if (side.name !== 'quiet') {
            const h = await (side.name === 'churn' ? side.agents : apart.agents).create({ id: `other${other++}`, setup });
            await h.dispose();
          }
          spent.ns += now() - w0;
          spent.ops++;
          const view = side.views[k++ % RESIDENT];
          const t0 = now();
          await view.execute(CALL);
          ns += now() - t0;
        }
        return ns;
      },
    };
  });
  const c = await compare(contenders, { maxBatch: 2000 });
  for (const side of sides) await side.server.dispose();
  await apart.server.dispose();
  const us = (name: string): { min: number; median: number; samples: readonly number[] } => {
    const s = c.ns(name);
    return { min: s.min / 1000, median: s.median / 1000, samples: s.samples.map((x) => x / 1000) };
  };
  const workUs = (name: string): number => {
    const w = work.get(name) as { ns: number; ops: number };
    return w.ns / Math.max(1, w.ops) / 1000;
  };
  return [
    row('churn.after', 'Tools.execute (1,000 global tools) just after another agent was created and disposed', 'µs/call', us('churn')),
    row('churn.quiet', 'same call, no churn', 'µs/call', us('quiet')),
    row('churn.ratio', 'churn / no churn (same round)', 'x', c.ratio('churn', 'quiet'), { text: '<= 1.5', max: 1.5 }),
    row('churn.elsewhere', 'same call just after an agent was created and disposed on another server', 'µs/call', us('elsewhere')),
    row('churn.shared', 'churn / churn on another server (same round): the cost of sharing a server with the churned agent', 'x', c.ratio('churn', 'elsewhere')),
    row('churn.cooled', 'same call just after a fixed workload that runs no polestar code but cools the CPU caches (150 compiled functions, 128 KB touched)', 'µs/call', us('cooled')),
    row('churn.cooled-ratio', 'cooled / no churn (same round): what that cache cooling alone costs the call', 'x', c.ratio('cooled', 'quiet')),
    single('churn.work', 'the churn before each call (create and dispose another agent), off the clock, mean', 'µs/op', workUs('churn')),
    single('churn.cooled-work', 'the cooling workload before each call, off the clock, mean', 'µs/op', workUs('cooled')),
  ];
}

// ------------------------------------------------------------------ 2. listeners of other agents

async function listenerRows(others: number): Promise<BenchRow[]> {
  const sides = await Promise.all(
    [
      ['crowded', others],
      ['alone', 0],
    ].map(async ([name, count]) => {
      const s = await server();
      const pass = (v: unknown): unknown => v;
      for (let i = 0; i < (count as number); i++) {
        await s.agents.create({
          id: `listener${i}`,
          setup: (ctx) => {
            const events = ctx.get(Events);
            for (const e of LISTENED) events.on(e, pass);
          },
        });
      }
      const views = await residents(s.agents, 'resident');
      await check(views);
      return { name: name as string, ...s, views };
    }),
  );
  const c = await compare(
    sides.map((side) => {
      let k = 0;
      return {
        name: side.name,
        run: async (n: number) => {
          for (let i = 0; i < n; i++) await side.views[k++ % RESIDENT].execute(CALL);
        },
      };
    }),
  );
  for (const side of sides) await side.server.dispose();
  const us = (name: string): { min: number; median: number; samples: readonly number[] } => {
    const s = c.ns(name);
    return { min: s.min / 1000, median: s.median / 1000, samples: s.samples.map((x) => x / 1000) };
  };
  const n = others.toLocaleString('en-US');
  return [
    row('listeners.crowded', `Tools.execute while ${n} other agents each hold 4 scoped tools/* listeners`, 'µs/call', us('crowded')),
    row('listeners.alone', 'same call, no other agents', 'µs/call', us('alone')),
    row('listeners.ratio', `${n} other agents / none (same round)`, 'x', c.ratio('crowded', 'alone'), { text: '<= 1.5', max: 1.5 }),
  ];
}

// ------------------------------------------------------------------ 3. adding and disposing 40,000 scoped listeners

/** A deterministic shuffle (xorshift), so every run disposes in the same "random" order. */
function shuffle<T>(items: T[]): T[] {
  let x = 0x9e3779b9;
  for (let i = items.length - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const j = (x >>> 0) % (i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

async function listenerChurnRows(rounds: number): Promise<BenchRow[]> {
  const SCOPES = 10_000;
  const PER = 4;
  const fn = (): void => undefined;
  let addMs = 0;
  const total = await timeOnce(
    rounds,
    async () => {
      const s = await server();
      const scopes: Scope[] = [];
      for (let i = 0; i < SCOPES; i++) scopes.push(createScope(s.app, { id: `s${i}` }));
      return { ...s, views: scopes.map((sc) => sc.ctx.get(Events)) };
    },
    async (st) => {
      const t0 = now();
      const offs: (() => void)[] = [];
      for (let p = 0; p < PER; p++) for (const v of st.views) offs.push(v.on('agent/created', fn));
      const t1 = now();
      if (st.app.get(Events).listenerCount('agent/created', undefined) !== 0) throw new Error('bench setup: unscoped listeners');
      await yieldLoop();
      shuffle(offs);
      const t2 = now();
      for (const off of offs) off();
      const t3 = now();
      addMs = (t1 - t0) / 1e6;
      return (t1 - t0 + t3 - t2) / 1e6;
    },
    (st) => st.server.dispose(),
  );
  return [
    row('listener-churn.ms', `add, then dispose, ${(SCOPES * PER).toLocaleString('en-US')} scoped listeners of one event name (${SCOPES.toLocaleString('en-US')} scopes × ${PER})`, 'ms', total, { text: '<= 1000', max: 1000 }),
    single('listener-churn.add-ms', 'of which adding (last round)', 'ms', addMs),
  ];
}

// ------------------------------------------------------------------ 4. heap after 5,000 distinct schemas

async function schemaHeapRows(count: number): Promise<BenchRow[]> {
  const s = await server();
  const tools = s.app.get(Tools);
  const distinct = (i: number): ToolDefinition => ({
    name: `distinct_${i}`,
    description: `tool ${i}`,
    parameters: { type: 'object', properties: { [`p${i}`]: { type: 'string', maxLength: 100 + i } }, required: [`p${i}`] },
    execute: () => i,
  });
  // warm-up: the registry, ajv and its caches exist before the baseline
  tools.register(distinct(-1))();
  const before = await settleHeap();
  const offs: (() => void)[] = [];
  for (let i = 0; i < count; i++) offs.push(tools.register(distinct(i)));
  const live = await settleHeap();
  for (const off of offs) off();
  offs.length = 0;
  const after = await settleHeap();
  await s.server.dispose();
  const mb = (b: number): number => b / (1024 * 1024);
  const n = count.toLocaleString('en-US');
  return [
    single('schema-heap.live', `heap while ${n} tools with distinct schemas are registered`, 'MB', mb(live - before)),
    single('schema-heap.after', `heap after registering and disposing ${n} tools with distinct schemas`, 'MB', mb(after - before), { text: '<= 2', max: 2 }),
  ];
}

/** Runs the scale benchmark. */
export function run(): Promise<BenchReport> {
  const quick = budget().name === 'quick';
  return withLoad('scale', async () => [
    ...(await churnRows()),
    ...(await listenerRows(10_000)),
    ...(await listenerChurnRows(quick ? 1 : 3)),
    ...(await schemaHeapRows(5_000)),
  ]);
}

await runIfMain('scale.bench.js', run);
