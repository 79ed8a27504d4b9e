import 'reflect-metadata';
import { inject, injectable, LazyServiceIdentifier, postConstruct } from 'inversify';
import { out, ParamError, res, resMut, Server, system, ResMut, token, type SystemContext } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

class AppConfig {
  constructor(public agentName = 'global') {}
}
class Scratchpad {
  notes: string[] = [];
}
const API_KEY = token<string>('API_KEY');
const Plan = token<string>('Plan');

async function setup(): Promise<{ server: Server; root: SystemContext }> {
  const server = new Server();
  server.insertGlobal(new AppConfig('global'));
  server.insertGlobal(API_KEY, 'secret');
  await server.finish();
  return { server, root: server.createContext() };
}

@injectable()
class Agent {
  constructor(
    @res(AppConfig) readonly config: AppConfig,
    @inject(API_KEY) readonly key: string,
    @resMut(Scratchpad) readonly scratch: Scratchpad,
    @out(Plan) readonly plan: string,
    @res(token<number>('Absent'), { optional: true }) readonly absent: number | undefined,
    @out(token<string>('NoOut'), { optional: true }) readonly noOut: string | undefined,
  ) {}
}

describe('ctx.resolve', () => {
  test('constructor parameters follow the system parameter rules', async () => {
    const { server, root } = await setup();
    const turn = root.child();
    turn.insert(new Scratchpad());
    turn.outputs.insert(Plan, 'the plan');
    const a = turn.resolve(Agent);
    expect(a).toBeInstanceOf(Agent);
    expect(a.config.agentName).toBe('global');
    expect(a.key).toBe('secret');
    expect(a.scratch).toBe(turn.get(Scratchpad));
    expect(a.plan).toBe('the plan');
    expect(a.absent).toBeUndefined();
    expect(a.noOut).toBeUndefined();
    // transient: a new instance every time
    expect(turn.resolve(Agent)).not.toBe(a);
    await server.dispose();
  });

  test('@res and @inject take the nearest local (the Res rule)', async () => {
    const { server, root } = await setup();
    const session = root.child();
    session.insert(new AppConfig('session'));
    session.insert(API_KEY, 'session key');
    const turn = session.child();
    turn.insert(new Scratchpad());
    turn.outputs.insert(Plan, 'p');
    const a = turn.resolve(Agent);
    expect(a.config.agentName).toBe('session');
    expect(a.key).toBe('session key');
    // the same class from the root sees the globals
    root.insert(new Scratchpad());
    root.outputs.insert(Plan, 'p');
    expect(root.resolve(Agent).config.agentName).toBe('global');
    await server.dispose();
  });

  test('@resMut never walks up, @out reads only this context; misses are ParamErrors', async () => {
    const { server, root } = await setup();
    root.insert(new Scratchpad());
    root.outputs.insert(Plan, 'p');
    const child = root.child();
    expect(() => child.resolve(Agent)).toThrow(ParamError);
    expect(() => child.resolve(Agent)).toThrow(/resource not found: Scratchpad.*ResMut never walks up/);
    child.insert(new Scratchpad());
    expect(() => child.resolve(Agent)).toThrow(/output not found: Plan/);
    await server.dispose();
  });

  test('@resMut of a borrowed local is a BorrowConflict', async () => {
    const { server, root } = await setup();
    root.insert(new Scratchpad());
    root.outputs.insert(Plan, 'p');
    let open!: () => void;
    const held = root.run(system([ResMut(Scratchpad)], () => new Promise<void>((r) => (open = r))));
    expect(() => root.resolve(Agent)).toThrow(/borrow conflict: Scratchpad/);
    open();
    await held;
    expect(root.resolve(Agent)).toBeInstanceOf(Agent);
    await server.dispose();
  });

  test('an unbound class dependency is built through ctx.resolve with the same rules', async () => {
    @injectable()
    class Memory {
      constructor(@res(AppConfig) readonly config: AppConfig) {}
    }
    @injectable()
    class Planner {
      constructor(@inject(Memory) readonly memory: Memory, @res(Memory) readonly memory2: Memory) {}
    }
    const { server, root } = await setup();
    const turn = root.child();
    turn.insert(new AppConfig('turn'));
    const p = turn.resolve(Planner);
    expect(p.memory).toBeInstanceOf(Memory);
    expect(p.memory.config.agentName).toBe('turn');
    // an existing local wins over building one
    const mine = new Memory(new AppConfig('mine'));
    turn.insert(mine);
    expect(turn.resolve(Planner).memory).toBe(mine);
    await server.dispose();
  });

  test('a missing token dependency is a ParamError naming it; a non-class is a TypeError', async () => {
    const Missing = token<string>('Missing');
    @injectable()
    class NeedsMissing {
      constructor(@inject(Missing) readonly m: string) {}
    }
    const { server, root } = await setup();
    expect(() => root.resolve(NeedsMissing)).toThrow(/resource not found: Missing/);
    expect(() => root.resolve((() => 1) as never)).toThrow(/expected a class/);
    await server.dispose();
  });

  test('a dependency cycle is a TypeError naming the path', async () => {
    @injectable()
    class Left {
      constructor(@inject(new LazyServiceIdentifier(() => Right)) readonly right: unknown) {}
    }
    @injectable()
    class Right {
      constructor(@res(Left) readonly left: Left) {}
    }
    const { server, root } = await setup();
    expect(() => root.resolve(Right)).toThrow(/circular dependency Right → Left → Right/);
    await server.dispose();
  });

  test('@postConstruct still runs, and so do activation handlers of global bindings', async () => {
    @injectable()
    class WithInit {
      ready = false;
      constructor(@res(AppConfig) readonly config: AppConfig) {}
      @postConstruct()
      init() {
        this.ready = this.config.agentName === 'global';
      }
    }
    class Llm {
      activated = 0;
    }
    const server = new Server();
    server.insertGlobal(new AppConfig());
    server.container.bind(Llm).toSelf().inSingletonScope();
    server.container.onActivation(Llm, (_c, llm) => {
      llm.activated++;
      return llm;
    });
    await server.finish();
    const ctx = server.createContext().child();
    expect(ctx.resolve(WithInit).ready).toBe(true);
    const llm = ctx.resolve(Llm);
    expect(llm.activated).toBe(1);
    expect(ctx.resolve(Llm)).toBe(llm);
    expect(llm.activated).toBe(1);
    await server.dispose();
  });

  test('resolveAsync awaits async activation', async () => {
    @injectable()
    class Slow {
      value = 0;
      @postConstruct()
      async init() {
        await new Promise((r) => setTimeout(r, 5));
        this.value = 42;
      }
    }
    const { server, root } = await setup();
    const s = await root.resolveAsync(Slow);
    expect(s.value).toBe(42);
    expect(() => root.resolve(Slow)).toThrow();
    await server.dispose();
  });

  test('a disposed context can not resolve', async () => {
    const { server, root } = await setup();
    const c = root.child();
    c.resolve(AppConfig);
    await c.dispose();
    expect(() => c.resolve(AppConfig)).toThrow(/disposed/);
    await server.dispose();
  });
});

describe('isolation of global bindings', () => {
  test('a global singleton first resolved through a turn context does not capture the turn locals', async () => {
    @injectable()
    class Llm {
      constructor(@inject(AppConfig) readonly config: AppConfig, @inject(API_KEY) readonly key: string) {}
    }
    @injectable()
    class TurnService {
      constructor(@inject(Llm) readonly llm: Llm, @res(AppConfig) readonly config: AppConfig) {}
    }
    const server = new Server();
    server.insertGlobal(new AppConfig('global'));
    server.insertGlobal(API_KEY, 'global key');
    server.container.bind(Llm).toSelf().inSingletonScope();
    await server.finish();
    const turn = server.createContext().child();
    turn.insert(new AppConfig('turn'));
    turn.insert(API_KEY, 'turn key');
    // first resolution of the singleton happens through the turn, directly and as a dependency
    const svc = turn.resolve(TurnService);
    expect(svc.config.agentName).toBe('turn');
    expect(svc.llm.config.agentName).toBe('global');
    expect(svc.llm.key).toBe('global key');
    const direct = turn.resolve(Llm);
    expect(direct).toBe(svc.llm);
    expect(server.container.get(Llm)).toBe(direct);
    // another context gets the same shared instance
    const other = server.createContext();
    other.insert(API_KEY, 'other key');
    expect(other.resolve(Llm)).toBe(direct);
    await server.dispose();
  });

  test('a global class that depends on a local only fails instead of capturing it', async () => {
    @injectable()
    class NeedsScratch {
      constructor(@inject(Scratchpad) readonly s: Scratchpad) {}
    }
    const server = new Server();
    server.container.bind(NeedsScratch).toSelf().inSingletonScope();
    await server.finish();
    const ctx = server.createContext();
    ctx.insert(new Scratchpad());
    expect(() => ctx.resolve(NeedsScratch)).toThrow();
    await server.dispose();
  });

  test('context containers are separate: a class resolved in one context never sees another context locals', async () => {
    @injectable()
    class Reader {
      constructor(@res(AppConfig) readonly config: AppConfig) {}
    }
    const { server, root } = await setup();
    const a = root.child();
    const b = root.child();
    a.insert(new AppConfig('a'));
    b.insert(new AppConfig('b'));
    expect(a.resolve(Reader).config.agentName).toBe('a');
    expect(b.resolve(Reader).config.agentName).toBe('b');
    expect(root.resolve(Reader).config.agentName).toBe('global');
    expect(probe.diContainer(a)).not.toBe(probe.diContainer(b));
    await server.dispose();
  });
});
