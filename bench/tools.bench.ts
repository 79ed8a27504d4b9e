/**
 * Tools-registry benchmark.
 *
 * - `visible(scope)` with 1,000 global and 20 scoped tools, called repeatedly with no
 *   change (the merged view is cached per scope and invalidated on change); floor: a bare
 *   `Map.get` of a precomputed array.
 * - `execute` of a no-op tool with no listeners, minus calling its body directly; and
 *   against the floor a hand-written dispatcher pays: the tool's JSON Schema compiled once
 *   with ajv (the Ajv class and options polestar uses), then per call the validator on
 *   the arguments and the body called directly (`execute.vs-ajv`, same round); and that
 *   floor plus, by hand, the snapshots every call owes (a lossless deep-frozen copy of the
 *   arguments, a frozen execution, a frozen result: `execute.vs-snapshot-floor`).
 * - Heap per agent scope holding five tools (scope context + five frozen records + the
 *   scope's layer); floor: a `Map` of five entries per scope.
 * - The same `execute` traced by `polestar-di/otel` (`instrumentPolestar`), on a tracer
 *   provider with no span processor and on one exporting each span to memory, minus the
 *   untraced call in the same round; and, alone, the cost of OpenTelemetry's
 *   AsyncLocalStorage context with no subscriber. Instrumentation and context manager are
 *   on for each traced batch only (switched off the clock), so the untraced contender runs
 *   with neither; these rows come last in the area, so no other row is timed after code
 *   that was traced.
 *
 * Run alone: `npm run build:run && node --expose-gc .build/bench/tools.bench.js [--quick]`.
 */
import 'reflect-metadata';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { Server, Tools, ToolsPlugin, createScope, snapshotJson, type Scope, type ToolDefinition } from '../src/index.js';
import { createAjv } from '../src/tools/schema/dialects.js';
import { RESIDENT } from './peers.js';
import { compare, now, settleHeap } from './harness.js';
import { row, runIfMain, single, withLoad, type BenchReport, type BenchRow } from './report.js';

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
  const floorMap = new Map<object, readonly unknown[]>([[key, view.visible(key)]]);
  const c = await compare([
    {
      name: 'visible',
      run: (n) => {
        for (let i = 0; i < n; i++) sink += view.visible(key).length;
      },
    },
    {
      name: 'floor',
      run: (n) => {
        for (let i = 0; i < n; i++) sink += (floorMap.get(key) as unknown[]).length;
      },
    },
  ]);
  // after a change the next call rebuilds once
  const rebuild = await compare([
    {
      name: 'rebuild',
      run: (n) => {
        for (let i = 0; i < n; i++) {
          const off = agent.ctx.get(Tools).register(def('churn'));
          sink += view.visible(key).length;
          off();
        }
      },
    },
  ]);
  if (sink === 0) throw new Error('unreachable');
  await s.dispose();
  return [
    row('visible.ns', 'visible(scope), 1,000 global + 20 scoped, no change', 'ns/call', c.ns('visible'), { text: '<= 1000', max: 1000 }),
    row('visible.floor', 'bare Map.get floor', 'ns/call', c.ns('floor')),
    row('visible.ratio', 'visible / floor (same round)', 'x', c.ratio('visible', 'floor')),
    row('visible.rebuild', 'register + visible (rebuild) + unregister, 1,020 tools', 'µs/op', scale(rebuild.ns('rebuild'), 1e-3)),
  ];
}

function scale(s: { min: number; median: number; samples: readonly number[] }, k: number): { min: number; median: number; samples: readonly number[] } {
  return { min: s.min * k, median: s.median * k, samples: s.samples.map((x) => x * k) };
}

async function executeRows(): Promise<BenchRow[]> {
  const s = await server();
  const app = s.createContext();
  let count = 0;
  const body = (): string => {
    count++;
    return 'ok';
  };
  const views: Tools[] = [];
  for (let i = 0; i < RESIDENT; i++) {
    const agent = createScope(app, { id: `agent${i}` });
    agent.ctx.get(Tools).register({ name: 'noop', description: 'does nothing', parameters: params, execute: body });
    views.push(agent.ctx.get(Tools));
  }
  const args = { q: 'x' };
  const call = { callId: 'c', name: 'noop', arguments: args };
  const validate = createAjv('draft-07', { validateSchema: false }).compile(params);
  let k = 0;
  const c = await compare([
    {
      name: 'execute',
      run: async (n) => {
        for (let i = 0; i < n; i++) await views[k++ % RESIDENT].execute(call);
      },
    },
    {
      name: 'direct',
      run: async (n) => {
        for (let i = 0; i < n; i++) await Promise.resolve(body());
      },
    },
    {
      // a hand-written dispatcher: the schema compiled once (as ToolsPlugin compiles it),
      // then per call the validator and the body
      name: 'ajv',
      run: async (n) => {
        for (let i = 0; i < n; i++) {
          if (validate(call.arguments) !== true) throw new Error('bench: the floor refused valid arguments');
          await Promise.resolve(body());
        }
      },
    },
    {
      // the same floor plus what the frozen snapshots cost by themselves, written by hand:
      // the arguments' lossless deep-frozen copy, a frozen execution, a frozen result
      name: 'ajv+snapshots',
      run: async (n) => {
        for (let i = 0; i < n; i++) {
          const copied = snapshotJson(call.arguments, 'tool arguments', 'arguments');
          if (validate(copied) !== true) throw new Error('bench: the floor refused valid arguments');
          const execution = Object.freeze({ callId: call.callId, name: call.name, arguments: copied, scope: undefined, parent: undefined });
          const value = await Promise.resolve(body());
          if (Object.freeze({ callId: execution.callId, content: value, isError: false, output: value }).isError) throw new Error('unreachable');
        }
      },
    },
  ]);
  if (count === 0) throw new Error('unreachable');
  await s.dispose();
  const vsAjv = c.ratio('execute', 'ajv');
  return [
    row('execute.us', 'execute(no-op tool, no listeners)', 'µs/call', scale(c.ns('execute'), 1e-3)),
    row('execute.floor', 'await body() directly (floor)', 'µs/call', scale(c.ns('direct'), 1e-3)),
    row('execute.overhead', 'execute overhead over the body (same round)', 'µs/call', scale(c.difference('execute', 'direct'), 1e-3), { text: '<= 1.5', max: 1.5 }),
    row('execute.ajv-floor', 'ajv-compiled validator on the arguments + await body() (floor)', 'µs/call', scale(c.ns('ajv'), 1e-3)),
    row('execute.vs-ajv', `execute / that floor (same round; max ${Math.max(...vsAjv.samples).toFixed(2)})`, 'x', vsAjv, { text: '<= 2.5', max: 2.5 }),
    row('execute.snapshot-floor', 'that floor + a lossless deep-frozen copy of the arguments, a frozen execution and a frozen result, by hand', 'µs/call', scale(c.ns('ajv+snapshots'), 1e-3)),
    row('execute.vs-snapshot-floor', 'execute / that floor (same round)', 'x', c.ratio('execute', 'ajv+snapshots')),
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
  const before = await settleHeap();
  const scopes: Scope[] = [];
  for (let i = 0; i < N; i++) {
    const scope = createScope(app, { id: `a${i}` });
    const t = scope.ctx.get(Tools);
    for (const d of defs) t.register(d);
    scopes.push(scope);
  }
  const per = ((await settleHeap()) - before) / N;
  if (app.get(Tools).visible(scopes[N - 1].key).length !== 5) throw new Error('bench setup');
  for (const sc of scopes) await sc.dispose();
  await s.dispose();
  // floor: a Map of five entries per scope key
  const before2 = await settleHeap();
  const floor: Map<object, Map<string, ToolDefinition>> = new Map();
  for (let i = 0; i < N; i++) floor.set({ id: `a${i}` }, new Map(defs.map((d) => [d.name, d] as const)));
  const perFloor = ((await settleHeap()) - before2) / N;
  if (floor.size !== N) throw new Error('unreachable');
  return [
    single('heap.scope5', 'heap per agent scope holding five tools', 'bytes', per, { text: '<= 4096', max: 4096 }),
    single('heap.scope5.floor', 'bare Map-of-five floor per scope', 'bytes', perFloor),
  ];
}

async function otelRows(): Promise<BenchRow[]> {
  // loaded here, so that no row before these runs with OpenTelemetry or polestar-di/otel loaded
  const { ROOT_CONTEXT, context: otelContext, createContextKey } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { instrumentPolestar } = await import('../src/otel.js');
  const s = await server();
  const app = s.createContext();
  const body = (): string => 'ok';
  const views: Tools[] = [];
  for (let i = 0; i < RESIDENT; i++) {
    const agent = createScope(app, { id: `agent${i}` });
    agent.ctx.get(Tools).register({ name: 'noop', description: 'does nothing', parameters: params, execute: body });
    views.push(agent.ctx.get(Tools));
  }
  const call = { callId: 'c', name: 'noop', arguments: { q: 'x' } };
  let k = 0;
  let failed = 0;
  const calls = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) if ((await views[k++ % RESIDENT].execute(call)).isError) failed++;
  };
  // As an application that traces does (the examples' --trace helper), the AsyncLocalStorage
  // context manager is registered, so spans nest across await. It is enabled for the traced
  // batches only: once an AsyncLocalStorage has run, Node 20 runs a promise hook on every
  // promise of the process, a cost of OpenTelemetry's context, not of polestar's
  // instrumentation, that `otel-context` shows alone.
  const manager = new AsyncLocalStorageContextManager();
  otelContext.setGlobalContextManager(manager);
  const bare = new BasicTracerProvider();
  const exporter = new InMemorySpanExporter();
  const exporting = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const marker = createContextKey('polestar-bench');
  let exported = 0;
  // Turned on for the timed calls of one batch only (on and off are off the clock), so the
  // untraced contender's batches run with no subscriber and no context manager at all.
  const batch = (on: () => () => void) => async (n: number): Promise<number> => {
    manager.enable();
    const off = on();
    try {
      return await otelContext.with(ROOT_CONTEXT.setValue(marker, true), async () => {
        const t0 = now();
        await calls(n);
        return now() - t0;
      });
    } finally {
      off();
      manager.disable();
    }
  };
  const traced = (tracerProvider: BasicTracerProvider, after: () => void = () => {}): ((n: number) => Promise<number>) =>
    batch(() => {
      const stop = instrumentPolestar({ tracerProvider });
      return () => {
        stop();
        after();
      };
    });
  try {
    const c = await compare([
      { name: 'plain', run: calls },
      { name: 'otel-context', run: batch(() => () => {}), selfTimed: true },
      { name: 'otel', run: traced(bare), selfTimed: true },
      {
        name: 'otel-memory',
        run: traced(exporting, () => {
          exported += exporter.getFinishedSpans().length;
          exporter.reset(); // memory stays flat
        }),
        selfTimed: true,
      },
    ]);
    if (failed > 0) throw new Error(`bench: ${failed} traced no-op calls failed`);
    if (exported === 0) throw new Error('bench setup: the exporting provider received no span');
    return [
      row('execute.otel.us', 'execute(no-op tool), instrumentPolestar on a tracer provider with no span processor', 'µs/call', scale(c.ns('otel'), 1e-3)),
      row('execute.otel-memory.us', 'same, SimpleSpanProcessor + InMemorySpanExporter', 'µs/call', scale(c.ns('otel-memory'), 1e-3)),
      row('execute.otel.untraced', 'the same call untraced (no subscriber, no context manager), same rounds', 'µs/call', scale(c.ns('plain'), 1e-3)),
      row('execute.otel.overhead', 'tracing overhead per call, no span processor (same round)', 'µs/call', scale(c.difference('otel', 'plain'), 1e-3)),
      row('execute.otel-memory.overhead', 'tracing overhead per call, exported to memory (same round)', 'µs/call', scale(c.difference('otel-memory', 'plain'), 1e-3)),
      row('execute.otel-context.overhead', 'of which: OpenTelemetry\'s AsyncLocalStorage context alone, no subscriber (same round)', 'µs/call', scale(c.difference('otel-context', 'plain'), 1e-3)),
    ];
  } finally {
    otelContext.disable();
    await exporting.shutdown();
    await bare.shutdown();
    await s.dispose();
  }
}

/** Runs the tools benchmark (the traced rows last: see {@link otelRows}). */
export function run(): Promise<BenchReport> {
  return withLoad('tools', async () => [...(await visibleRows()), ...(await executeRows()), ...(await heapRows()), ...(await otelRows())]);
}

await runIfMain('tools.bench.js', run);
