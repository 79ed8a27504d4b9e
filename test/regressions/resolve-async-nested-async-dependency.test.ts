/**
 * Bug: ctx.resolveAsync(Outer) rejected with inversify's "Unexpected asynchronous
 * service" when Outer's class dependency (itself built with ctx.resolve, not a resource)
 * has an async @postConstruct: the dependency was always built synchronously, so
 * resolveAsync only worked for async activation on the outermost class. With a raw
 * inversify container, getAsync(Outer) awaits the nested activation. Fixed: during
 * resolveAsync, a class dependency is built with resolveAsync too; cycles are still a
 * TypeError naming the path, and a plain resolve() of the same classes still refuses.
 */
import { inject, injectable, LazyServiceIdentifier, postConstruct } from 'inversify';
import { Server, res } from '../../src/index.js';

class AppConfig {
  constructor(readonly agentName = 'claude') {}
}

@injectable()
class VectorIndex {
  ready = false;
  constructor(@res(AppConfig) readonly config: AppConfig) {}
  @postConstruct()
  async init(): Promise<void> {
    await new Promise((r) => setTimeout(r, 2));
    this.ready = true;
  }
}

@injectable()
class Retriever {
  constructor(@inject(VectorIndex) readonly index: VectorIndex) {}
}

@injectable()
class Researcher {
  constructor(
    @inject(Retriever) readonly retriever: Retriever,
    @res(AppConfig) readonly config: AppConfig,
  ) {}
}

async function setup() {
  const server = new Server();
  await server.finish();
  const ctx = server.createContext();
  ctx.insert(new AppConfig('researcher'));
  return { server, ctx };
}

describe('ctx.resolveAsync awaits async activation of nested class dependencies', () => {
  test('one and two levels deep, with the context resources still injected', async () => {
    const { server, ctx } = await setup();
    const retriever = await ctx.resolveAsync(Retriever);
    expect(retriever.index).toBeInstanceOf(VectorIndex);
    expect(retriever.index.ready).toBe(true);
    const researcher = await ctx.resolveAsync(Researcher);
    expect(researcher.retriever.index.ready).toBe(true);
    expect(researcher.retriever.index.config.agentName).toBe('researcher');
    expect(researcher.config).toBe(ctx.get(AppConfig));
    // the synchronous form still refuses a graph with async activation
    expect(() => ctx.resolve(Researcher)).toThrow();
    await server.dispose();
  });

  test('a cycle is still a TypeError naming the path', async () => {
    @injectable()
    class Left {
      constructor(@inject(new LazyServiceIdentifier(() => Right)) readonly right: unknown) {}
    }
    @injectable()
    class Right {
      constructor(@res(Left) readonly left: Left) {}
    }
    const { server, ctx } = await setup();
    await expect(ctx.resolveAsync(Right)).rejects.toThrow(/circular dependency Right → Left → Right/);
    await server.dispose();
  });
});
