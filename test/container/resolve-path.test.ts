// An error thrown while ctx.resolve(Class) builds a class names the resolution path, from
// the class asked for to the token that failed, as a field and in the message.
import 'reflect-metadata';
import { inject, injectable, LazyServiceIdentifier, postConstruct } from 'inversify';
import { out, ParamError, res, resMut, ResMut, Server, system, token, type SystemContext } from '../../src/index.js';

const ApiKey = token<string>('ApiKey');
const Plan = token<string>('Plan');
class Scratchpad {
  notes: string[] = [];
}

@injectable()
class Client {
  constructor(@inject(ApiKey) readonly key: string) {}
}
@injectable()
class Service {
  constructor(@inject(Client) readonly client: Client) {}
}
@injectable()
class Handler {
  constructor(@inject(Service) readonly service: Service) {}
}

async function setup(): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

function thrown(f: () => unknown): ParamError {
  try {
    f();
  } catch (err) {
    if (err instanceof ParamError) return err;
    throw err;
  }
  throw new Error('expected a ParamError, nothing was thrown');
}

describe('ctx.resolve errors name the resolution path', () => {
  test('a missing token three classes deep: the field, and the message keeps its fix', async () => {
    const { server, ctx } = await setup();
    const err = thrown(() => ctx.resolve(Handler));
    expect(err.kind).toBe('ResourceNotFound');
    expect(err.token).toBe(ApiKey);
    expect(err.path).toEqual(['Handler', 'Service', 'Client', 'ApiKey']);
    expect(Object.isFrozen(err.path)).toBe(true);
    expect(err.message).toMatch(/^resource not found: ApiKey \(resolving Handler → Service → Client → ApiKey\) \(needed by a class built with ctx\.resolve\(\)/);
    expect(err.message).toContain('insert ApiKey into the context or a global, or bind it in server.container');
    // asked for one level down, the path starts there
    expect(thrown(() => ctx.resolve(Client)).path).toEqual(['Client', 'ApiKey']);
    // once the token is there, the same graph builds
    ctx.insert(ApiKey, 'secret');
    expect(ctx.resolve(Handler).service.client.key).toBe('secret');
    await server.dispose();
  });

  test('a sibling that was built is not on the path', async () => {
    const Missing = token<number>('Missing');
    @injectable()
    class Fine {}
    @injectable()
    class Broken {
      constructor(@inject(Missing) readonly n: number) {}
    }
    @injectable()
    class Both {
      constructor(@inject(Fine) readonly fine: Fine, @inject(Broken) readonly broken: Broken) {}
    }
    const { server, ctx } = await setup();
    expect(thrown(() => ctx.resolve(Both)).path).toEqual(['Both', 'Broken', 'Missing']);
    await server.dispose();
  });

  test('@resMut, @out and borrow conflicts keep their kind and hint, with the path', async () => {
    @injectable()
    class Writer {
      constructor(@resMut(Scratchpad) readonly pad: Scratchpad) {}
    }
    @injectable()
    class Planner {
      constructor(@out(Plan) readonly plan: string) {}
    }
    @injectable()
    class Desk {
      constructor(@inject(Writer) readonly writer: Writer, @inject(Planner) readonly planner: Planner) {}
    }
    const { server, ctx } = await setup();
    ctx.insert(new Scratchpad());
    const child = ctx.child();
    const missing = thrown(() => child.resolve(Desk));
    expect(missing.kind).toBe('ResourceNotFound');
    expect(missing.path).toEqual(['Desk', 'Writer', 'Scratchpad']);
    expect(missing.message).toMatch(/^resource not found: Scratchpad \(resolving Desk → Writer → Scratchpad\) \(.*ResMut never walks up/);

    const noPlan = thrown(() => ctx.resolve(Desk));
    expect(noPlan.kind).toBe('OutputNotFound');
    expect(noPlan.path).toEqual(['Desk', 'Planner', 'Plan']);
    expect(noPlan.message).toMatch(/^output not found: Plan \(resolving Desk → Planner → Plan\)/);

    ctx.outputs.insert(Plan, 'the plan');
    let open!: () => void;
    const held = ctx.run(system([ResMut(Scratchpad)], () => new Promise<void>((r) => (open = r))));
    const conflict = thrown(() => ctx.resolve(Desk));
    expect(conflict.kind).toBe('BorrowConflict');
    expect(conflict.path).toEqual(['Desk', 'Writer', 'Scratchpad']);
    expect(conflict.message).toMatch(/^borrow conflict: Scratchpad \(resolving Desk → Writer → Scratchpad\)/);
    open();
    await held;
    expect(ctx.resolve(Desk).planner.plan).toBe('the plan');
    await server.dispose();
  });

  test('resolveAsync rejects with the same path, also after an async activation ran first', async () => {
    @injectable()
    class Index {
      ready = false;
      @postConstruct()
      async init(): Promise<void> {
        await new Promise((r) => setTimeout(r, 2));
        this.ready = true;
      }
    }
    @injectable()
    class Researcher {
      constructor(@inject(Index) readonly index: Index, @inject(Service) readonly service: Service) {}
    }
    const { server, ctx } = await setup();
    const direct = await ctx.resolveAsync(Handler).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(ParamError);
    expect((direct as ParamError).path).toEqual(['Handler', 'Service', 'Client', 'ApiKey']);
    const late = await ctx.resolveAsync(Researcher).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(ParamError);
    expect((late as ParamError).path).toEqual(['Researcher', 'Service', 'Client', 'ApiKey']);
    expect((late as ParamError).message).toMatch(/^resource not found: ApiKey \(resolving Researcher → Service → Client → ApiKey\)/);
    await server.dispose();
  });

  test('other fetches have no path, and their messages are unchanged', async () => {
    const { server, ctx } = await setup();
    const err = thrown(() => ctx.get(ApiKey));
    expect(err.path).toBeUndefined();
    expect(err.message).toMatch(/^resource not found: ApiKey( \(|$)/);
    expect(err.message).not.toContain('resolving');
    expect(new ParamError('ResourceNotFound', ApiKey, 'insert it').message).toBe('resource not found: ApiKey (insert it)');
    expect(new ParamError('ResourceNotFound', ApiKey, 'insert it', ['Client', 'ApiKey']).message).toBe(
      'resource not found: ApiKey (resolving Client → ApiKey) (insert it)',
    );
    await server.dispose();
  });

  test('a cycle under an outer class is still a TypeError naming the cycle', async () => {
    @injectable()
    class Left {
      constructor(@inject(new LazyServiceIdentifier(() => Right)) readonly right: unknown) {}
    }
    @injectable()
    class Right {
      constructor(@res(Left) readonly left: Left) {}
    }
    @injectable()
    class Outer {
      constructor(@inject(Left) readonly left: Left) {}
    }
    const { server, ctx } = await setup();
    expect(() => ctx.resolve(Outer)).toThrow(TypeError);
    expect(() => ctx.resolve(Outer)).toThrow(/^ctx\.resolve\(Left\): circular dependency Left → Right → Left; break the cycle/);
    await server.dispose();
  });
});
