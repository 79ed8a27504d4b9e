/**
 * Type-level tests of the public API, compiled by `npm run typecheck` (tsconfig.json
 * includes test/). Every `@ts-expect-error` line fails the typecheck if it stops being an
 * error, so these pin what the signatures refuse as well as what they accept. Each block
 * also runs, with a small runtime assertion, so the file is an ordinary jest test.
 *
 * test/system/types.test.ts already covers `system([...], fn)` inference for required and
 * optional `Res`/`Out`, `ResMut` mutability and `ctx.run` of function and decorated
 * systems; this file covers the rest of the surface.
 */
import 'reflect-metadata';
import {
  Agents,
  AgentsPlugin,
  Events,
  ExecutionResult,
  Out,
  Prompts,
  PromptsPlugin,
  Res,
  ResMut,
  Server,
  Tools,
  ToolsPlugin,
  system,
  token,
  type Agent,
  type AnySystem,
  type AgentHandle,
  type Plugin,
  type PromptContext,
  type SystemContext,
  type ToolErrorCode,
  type ToolExecution,
  type ToolResult,
  type Token,
} from '../../src/index.js';
import { createTestServer, runSystem } from '../../src/testing/index.js';

class AppConfig {
  constructor(public agentName = 'claude') {}
}
class Scratchpad {
  notes: string[] = [];
}
class Other {
  other = true;
}
abstract class ModelClient {
  abstract complete(prompt: string): string;
}
class FakeModelClient extends ModelClient {
  complete(prompt: string): string {
    return `fake: ${prompt}`;
  }
}
interface Settings {
  retries: number;
  label: string;
}

const COUNT = token<number>('COUNT');
const SETTINGS = token<Settings>('SETTINGS');

/**
 * Holds lines that must (or must not) compile but would throw or change state if run:
 * the closure is type-checked and never called.
 */
function typeOnly(_lines: () => unknown): void {}

async function finished(...plugins: Plugin[]): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  if (plugins.length > 0) server.addPlugins(...plugins);
  await server.finish();
  return { server, ctx: server.createContext() };
}

test('token<T>() types ctx.insert / get / tryGet / getMut / remove and refuses the wrong value type', async () => {
  const { server, ctx } = await finished();
  ctx.insert(COUNT, 1);
  ctx.insert(SETTINGS, { retries: 2, label: 'x' });
  const n: number = ctx.get(COUNT);
  const m: number | undefined = ctx.tryGet(COUNT);
  const w: number = ctx.getMut(COUNT);
  const s: Settings = ctx.getMut(SETTINGS);
  s.retries += 1; // getMut gives the value itself, mutable
  const prev: number | undefined = ctx.insert(COUNT, 3);

  typeOnly(() => {
    // @ts-expect-error the token says number
    ctx.insert(COUNT, 'one');
    // @ts-expect-error a value missing fields of the token's type
    ctx.insert(SETTINGS, { retries: 1 });
    // @ts-expect-error an empty object is not a Settings (T comes from the token, not the value)
    ctx.insert(SETTINGS, {});
    // @ts-expect-error the output's value must match the token too
    ctx.outputs.insert(COUNT, '1');
    // @ts-expect-error get(COUNT) is a number
    const bad1: string = ctx.get(COUNT);
    // @ts-expect-error tryGet may be undefined
    const bad2: number = ctx.tryGet(COUNT);
    // @ts-expect-error getMut(COUNT) is a number
    const bad3: string = ctx.getMut(COUNT);
    // @ts-expect-error remove may be undefined
    const bad4: number = ctx.remove(COUNT);
    // @ts-expect-error outputs.get(COUNT) is a number
    const bad5: string = ctx.outputs.get(COUNT);
    // @ts-expect-error a string is not a token
    ctx.get('COUNT');
    void [bad1, bad2, bad3, bad4, bad5];
  });

  expect([n, m, w, s.retries, prev]).toEqual([1, 1, 1, 3, 1]);
  await server.dispose();
});

test('class tokens infer the instance type; a value of another class is refused', async () => {
  const { server, ctx } = await finished();
  ctx.insert(new AppConfig('a'));
  ctx.insert(ModelClient, new FakeModelClient()); // abstract class token, subclass value
  const cfg: AppConfig = ctx.get(AppConfig);
  const llm: ModelClient = ctx.get(ModelClient);
  const maybe: Scratchpad | undefined = ctx.tryGet(Scratchpad);

  typeOnly(() => {
    // @ts-expect-error an AppConfig is not a Scratchpad
    const bad1: Scratchpad = ctx.get(AppConfig);
    // @ts-expect-error the value must be an instance of the token's class
    ctx.insert(Scratchpad, new Other());
    // @ts-expect-error an AppConfig is no ModelClient (the class token fixes T)
    ctx.insert(ModelClient, new AppConfig());
    // @ts-expect-error insert(value) needs an object, its class being the token
    ctx.insert(42);
    void bad1;
  });

  expect([cfg.agentName, llm.complete('x'), maybe]).toEqual(['a', 'fake: x', undefined]);
  await server.dispose();
});

test('server.insertGlobal / getGlobal / registerLocal follow the token type', async () => {
  const server = new Server();
  const prev: number | undefined = server.insertGlobal(COUNT, 7);
  server.insertGlobal(new AppConfig('g'));
  server.insertGlobal(ModelClient, new FakeModelClient());
  server.registerLocal(Scratchpad);
  server.registerLocal(SETTINGS, () => ({ retries: 0, label: 'local' }));
  const n: number = server.getGlobal(COUNT);
  const cfg: AppConfig = server.getGlobal(AppConfig);

  typeOnly(() => {
    // @ts-expect-error the token says number
    server.insertGlobal(COUNT, '7');
    // @ts-expect-error {} is not a ModelClient (T comes from the token, not the value)
    server.insertGlobal(ModelClient, {});
    // @ts-expect-error getGlobal(COUNT) is a number
    const bad1: string = server.getGlobal(COUNT);
    // @ts-expect-error the factory must make the token's type
    server.registerLocal(SETTINGS, () => ({ retries: 0 }));
    // @ts-expect-error a contextual global's view must have the token's type
    server.insertGlobalView(COUNT, () => 'view');
    void bad1;
  });

  await server.finish();
  expect([prev, n, cfg.agentName, server.createContext().get(SETTINGS).label]).toEqual([undefined, 7, 'g', 'local']);
  await server.dispose();
});

test('Res<T> and Out<T> are read-only, ResMut<T> is mutable', async () => {
  const r: Res<Settings> = { retries: 1, label: 'r' };
  const o: Out<Settings> = { retries: 1, label: 'o' };
  const w: ResMut<Settings> = { retries: 1, label: 'w' };
  w.retries = 2;
  typeOnly(() => {
    // @ts-expect-error Res<T> is Readonly<T>
    r.retries = 2;
    // @ts-expect-error Out<T> is Readonly<T>
    o.label = 'x';
  });
  const plain: Settings = w; // ResMut<T> is T itself
  // Res<T> still reads like T
  const label: string = r.label;
  expect([plain.retries, label, o.label]).toEqual([2, 'r', 'o']);
});

test('system([...], fn) infers every descriptor, and ctx.run / runSystem give the output type', async () => {
  const both = system(
    [Res(AppConfig), ResMut(Scratchpad), Out(COUNT), Res(SETTINGS, { optional: true }), Out(SETTINGS, { optional: true })],
    (cfg, pad, count, maybeSettings, maybeOut) => {
      const c: Readonly<AppConfig> = cfg;
      pad.notes.push(c.agentName); // ResMut: mutable
      const k: number = count;
      const s: Readonly<Settings> | undefined = maybeSettings;
      const so: Readonly<Settings> | undefined = maybeOut;
      typeOnly(() => {
        // @ts-expect-error Out<number> param is a number, not a string
        const bad: string = count;
        // @ts-expect-error Res(AppConfig) is read-only
        cfg.agentName = 'x';
        // @ts-expect-error an optional Res may be undefined
        void maybeSettings.retries;
        void bad;
      });
      void [s, so];
      return { total: k + pad.notes.length };
    },
  );
  const { server, ctx } = await finished();
  ctx.insert(new Scratchpad());
  ctx.outputs.insert(COUNT, 40);
  ctx.insert(new AppConfig('a'));
  const out: { total: number } = await ctx.run(both);
  typeOnly(async () => {
    // @ts-expect-error run resolves to { total: number }
    const bad: string = await ctx.run(both);
    void bad;
  });
  expect(out.total).toBe(41);

  typeOnly(() => {
    // @ts-expect-error ResMut takes no options (never optional)
    ResMut(Scratchpad, { optional: true });
    // @ts-expect-error a descriptor needs a token
    Res('AppConfig');
  });

  // a system held as AnySystem runs to unknown, not any
  const held: AnySystem = both;
  const heldOut = await ctx.run(held);
  typeOnly(() => {
    // @ts-expect-error the output of an AnySystem is unknown until narrowed
    void heldOut.total;
  });
  expect(heldOut).toEqual({ total: 42 });

  const { output, ctx: rctx } = await runSystem(system([Res(COUNT)], (n) => n * 2), { globals: [[COUNT, 21]] });
  const doubled: number = output;
  expect(doubled).toBe(42);
  await rctx.server.dispose();
  await server.dispose();
});

test('ExecutionResult.output(token) is typed by the token', async () => {
  const { server, ctx } = await finished();
  const make = system([], () => 5, { output: COUNT });
  const result: ExecutionResult = await ctx.execute([make]);
  const n: number | undefined = result.output(COUNT);
  // @ts-expect-error the output may be missing
  const bad1: number = result.output(COUNT);
  // @ts-expect-error output(COUNT) is a number
  const bad2: string | undefined = result.output(COUNT);
  void [bad1, bad2];
  expect(n).toBe(5);
  await server.dispose();
});

test('Tools.register definition typing, Tools.execute result and error.code', async () => {
  const { server, ctx } = await finished(new ToolsPlugin());
  const tools = ctx.get(Tools);
  const undo: () => void = tools.register<{ q: string }>({
    name: 'echo',
    description: 'echoes q',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    execute(args, execution) {
      const q: string = args.q;
      const e: ToolExecution = execution;
      // @ts-expect-error args.q is a string
      const bad: number = args.q;
      void bad;
      return `${q} (${e.callId})`;
    },
    timeoutMs: 1000,
  });
  typeOnly(() => {
    tools.register({
      name: 'bad-timeout',
      description: 'x',
      parameters: {},
      execute: () => 'x',
      // @ts-expect-error timeoutMs is a number
      timeoutMs: '10',
    });
    // @ts-expect-error parameters is a JSON Schema object, not a function
    tools.register({ name: 'bad-params', description: 'x', parameters: () => ({}), execute: () => 'x' });
    // @ts-expect-error execute is required
    tools.register({ name: 'no-execute', description: 'x', parameters: {} });
    // @ts-expect-error callId is required
    void tools.execute({ name: 'echo', arguments: {} });
    tools.register({
      name: 'untyped',
      description: 'x',
      parameters: {},
      // @ts-expect-error undeclared arguments are unknown (not any): declare A or annotate args
      execute: (args) => args.q,
    });
    // annotating the parameter declares A
    tools.register({ name: 'annotated', description: 'x', parameters: {}, execute: ({ q }: { q: string }) => q.toUpperCase() });
  });

  const result: ToolResult = await tools.execute({ callId: 'c1', name: 'echo', arguments: { q: 'hi' } });
  const content: string = result.content;
  const code: ToolErrorCode | undefined = result.error?.code;
  const missing = await tools.execute({ callId: 'c2', name: 'nope', arguments: {} });
  if (missing.error !== undefined) {
    const c: 'UNKNOWN_TOOL' | 'INVALID_ARGS' | 'DENIED' | 'TIMEOUT' | 'EXECUTION_ERROR' = missing.error.code;
    // @ts-expect-error not one of the error codes
    const isOther = missing.error.code === 'NOT_FOUND';
    void [c, isOther];
  }
  expect([content, code, missing.error?.code]).toEqual(['hi (c1)', undefined, 'UNKNOWN_TOOL']);
  undo();
  await server.dispose();
});

test('Prompts.section text functions get the PromptContext and must return a string', async () => {
  const { server, ctx } = await finished(new PromptsPlugin());
  const prompts = ctx.get(Prompts);
  prompts.section({ name: 'a', order: 0, text: 'static' });
  prompts.section({
    name: 'b',
    order: 1,
    text: (context) => {
      const p: PromptContext = context;
      const s: object | undefined = context.scope;
      return `scoped: ${String(p.scope === s)}`;
    },
  });
  prompts.variable('who', () => 'world');
  prompts.variable('later', async () => 'async');
  typeOnly(() => {
    // @ts-expect-error text must return a string
    prompts.section({ name: 'c', order: 2, text: () => 3 });
    // @ts-expect-error order is a number
    prompts.section({ name: 'd', order: '3', text: 'x' });
    // @ts-expect-error a variable provider returns a string (or a promise of one)
    prompts.variable('n', () => 1);
  });
  const a = await prompts.assemble();
  const texts: string[] = a.sections.map((s) => s.text);
  expect(texts).toEqual(['static', 'scoped: true']);
  await server.dispose();
});

test('Events.on listeners and waterfall seeds are typed', async () => {
  const { server, ctx } = await finished(new AgentsPlugin());
  const events = ctx.get(Events);
  const off: () => void = events.on('greet', (value: string, suffix: string) => value + suffix);
  events.on('greet', async (value: string) => value.toUpperCase(), { prepend: true, global: true });
  const out: string = await events.waterfall(undefined, 'greet', 'hi', '!');
  typeOnly(async () => {
    // @ts-expect-error waterfall resolves to the seed's type
    const bad: number = await events.waterfall(undefined, 'greet', 'hi');
    // @ts-expect-error the event name is a string
    events.on(1, () => undefined);
    // @ts-expect-error options.prepend is a boolean
    events.on('x', () => undefined, { prepend: 'yes' });
    void bad;
  });
  const done: Promise<void> = events.emit(undefined, 'greet', 'x', 'y');
  await done;
  off();
  expect(out).toBe('HI!');
  await server.dispose();
});

test('Agents.create options: setup receives the agent SystemContext; handle and agent are typed', async () => {
  const { server, ctx } = await finished(new AgentsPlugin(), new ToolsPlugin());
  const agents = ctx.get(Agents);
  const handle: AgentHandle = await agents.create({
    id: 'a',
    setup: async (agentCtx) => {
      const c: SystemContext = agentCtx;
      c.get(Tools).register({ name: 't', description: 'd', parameters: {}, execute: () => 'ok' });
    },
  });
  const agent: Agent = handle.agent;
  const id: string = agent.id;
  const actx: SystemContext = agent.ctx;
  const sub = await agents.create({ id: 'b', parent: agent });
  typeOnly(() => {
    // @ts-expect-error id is a string
    void agents.create({ id: 1 });
    // @ts-expect-error setup gets a SystemContext, not a string
    void agents.create({ id: 'c', setup: (x: string) => void x });
    // @ts-expect-error parent is an Agent, not an id
    void agents.create({ id: 'd', parent: 'a' });
  });
  const found: Agent | undefined = agents.get('a');
  expect([id, actx === found?.ctx, sub.agent.id]).toEqual(['a', true, 'b']);
  await server.dispose();
});

test('createTestServer globals: a [token, value] pair must match the token type', async () => {
  const server = await createTestServer({
    globals: [[COUNT, 1], [ModelClient, new FakeModelClient()], new AppConfig('t'), [SETTINGS, { retries: 0, label: 'l' }]],
    locals: [Scratchpad, [SETTINGS, () => ({ retries: 1, label: 'x' })]],
  });
  typeOnly(() => {
    // @ts-expect-error the COUNT token holds a number
    void createTestServer({ globals: [[COUNT, 'one']] });
    // @ts-expect-error a ModelClient is expected for the ModelClient token, not an AppConfig
    void createTestServer({ globals: [new AppConfig(), [ModelClient, new AppConfig()]] });
    // @ts-expect-error the factory must make a Settings
    void createTestServer({ locals: [[SETTINGS, () => 1]] });
    // @ts-expect-error runSystem checks its globals the same way
    void runSystem(system([], () => 1), { globals: [[SETTINGS, { retries: 1 }]] });
    // @ts-expect-error and its outputs
    void runSystem(system([], () => 1), { outputs: [[COUNT, 'x']] });
    // @ts-expect-error and its [token, factory] locals
    void runSystem(system([], () => 1), { locals: [new Scratchpad(), [COUNT, () => 'x']] });
  });
  // a list typed loosely elsewhere is still accepted
  const loose: readonly (readonly [Token, unknown])[] = [[COUNT, 2]];
  const other = await createTestServer({ globals: loose });
  expect(other.getGlobal(COUNT)).toBe(2);
  await other.dispose();
  const n: number = server.getGlobal(COUNT);
  expect([n, server.getGlobal(ModelClient).complete('q')]).toEqual([1, 'fake: q']);
  await server.dispose();
});
