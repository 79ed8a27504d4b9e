import 'reflect-metadata';
import { inject, injectable } from 'inversify';
import { ParamError, Server, ServerBuildError, ServerError, token, type Plugin } from '../../src/index.js';

class AppConfig {
  constructor(readonly agentName = 'agent') {}
}
class ConversationHistory {
  readonly messages: string[] = [];
}
class AgentMemory {
  constructor(readonly facts: string[] = []) {}
}
const API_KEY = token<string>('API_KEY');

function plugin(id: string, log: string[], extra: Partial<Plugin> = {}): Plugin {
  return {
    id,
    build: () => void log.push(`build:${id}`),
    ready: async () => {
      log.push(`ready-start:${id}`);
      await new Promise((r) => setTimeout(r, 2));
      log.push(`ready-end:${id}`);
    },
    cleanup: () => void log.push(`cleanup:${id}`),
    ...extra,
  };
}

describe('globals', () => {
  test('insertGlobal by value and by token; returns the previous global', async () => {
    const server = new Server();
    const first = new AppConfig('a');
    expect(server.insertGlobal(first)).toBeUndefined();
    expect(server.insertGlobal(new AppConfig('b'))).toBe(first);
    expect(server.insertGlobal(API_KEY, 'secret')).toBeUndefined();
    expect(server.insertGlobal(API_KEY, 'other')).toBe('secret');
    expect(server.getGlobal(AppConfig).agentName).toBe('b');
    expect(server.getGlobal(API_KEY)).toBe('other');
    expect(server.hasGlobal(API_KEY)).toBe(true);
    expect(server.hasGlobal(AgentMemory)).toBe(false);
    expect(() => server.getGlobal(AgentMemory)).toThrow(ParamError);
    await server.finish();
    const ctx = server.createContext().child().child();
    expect(ctx.get(AppConfig).agentName).toBe('b');
    expect(ctx.get(API_KEY)).toBe('other');
    await server.dispose();
  });
});

describe('locals', () => {
  test('each root context gets its own instance, the factory runs once per root, children get none', async () => {
    const server = new Server();
    let calls = 0;
    server.registerLocal(ConversationHistory);
    server.registerLocal(AgentMemory, () => {
      calls++;
      return new AgentMemory([]);
    });
    await server.finish();
    const a = server.createContext();
    const b = server.createContext();
    expect(calls).toBe(2);
    expect(a.get(AgentMemory)).not.toBe(b.get(AgentMemory));
    expect(a.get(ConversationHistory)).toBeInstanceOf(ConversationHistory);
    a.getMut(ConversationHistory).messages.push('hi');
    expect(b.get(ConversationHistory).messages).toEqual([]);
    const session = a.child();
    expect(session.hasLocal(AgentMemory)).toBe(false);
    expect(session.get(AgentMemory)).toBe(a.get(AgentMemory));
    session.child().get(AgentMemory);
    expect(calls).toBe(2);
    await server.dispose();
  });

  test('a token() local needs a factory', () => {
    const T = token<number[]>('T');
    const server = new Server();
    expect(() => server.registerLocal(T)).toThrow(/pass a factory/);
    server.registerLocal(T, () => []);
  });

  test('a second registerLocal of one token is refused', () => {
    const server = new Server();
    server.registerLocal(AgentMemory);
    expect(() => server.registerLocal(AgentMemory)).toThrow(ServerError);
  });

  test('a throwing factory fails createContext with ServerError and disposes what was made', async () => {
    class Res implements Disposable {
      disposed = false;
      [Symbol.dispose]() {
        this.disposed = true;
      }
    }
    const made: Res[] = [];
    const server = new Server();
    server.registerLocal(Res, () => {
      const r = new Res();
      made.push(r);
      return r;
    });
    server.registerLocal(AgentMemory, () => {
      throw new Error('boom');
    });
    await server.finish();
    expect(() => server.createContext()).toThrow(/factory of AgentMemory threw: boom/);
    await new Promise((r) => setTimeout(r, 0));
    expect(made[0].disposed).toBe(true);
    expect(server.liveContexts).toBe(0);
    await server.dispose();
  });
});

describe('plugins', () => {
  test('build in dependency order whatever the order added; ready sequential in the same order; cleanup reversed', async () => {
    const log: string[] = [];
    const server = new Server();
    server.addPlugins(
      plugin('agents', log, { dependencies: ['tools', 'prompts'] }),
      plugin('prompts', log, { dependencies: ['tools'] }),
      plugin('tools', log),
    );
    expect(server.hasPlugin('tools')).toBe(true);
    expect(server.hasPlugin('nope')).toBe(false);
    await server.finish();
    expect(log).toEqual([
      'build:tools',
      'build:prompts',
      'build:agents',
      'ready-start:tools',
      'ready-end:tools',
      'ready-start:prompts',
      'ready-end:prompts',
      'ready-start:agents',
      'ready-end:agents',
    ]);
    log.length = 0;
    await server.dispose();
    expect(log).toEqual(['cleanup:agents', 'cleanup:prompts', 'cleanup:tools']);
  });

  test('independent plugins keep the order they were added in', async () => {
    const log: string[] = [];
    const server = new Server();
    server.addPlugins(plugin('b', log), plugin('a', log));
    server.addPlugins(plugin('c', log, { dependencies: ['a'] }));
    await server.finish();
    expect(log.filter((l) => l.startsWith('build'))).toEqual(['build:b', 'build:a', 'build:c']);
    await server.dispose();
  });

  test('a duplicate id is refused and nothing of that call is added', () => {
    const server = new Server();
    server.addPlugins(plugin('tools', []));
    expect(() => server.addPlugins(plugin('tools', []))).toThrow("Plugin 'tools' was already added.");
    expect(() => server.addPlugins(plugin('x', []), plugin('x', []))).toThrow("Plugin 'x' was already added.");
    expect(server.hasPlugin('x')).toBe(false);
  });

  test('a missing dependency rejects with ServerBuildError naming both plugins', async () => {
    const server = new Server();
    server.addPlugins(plugin('agents', [], { dependencies: ['tools'] }));
    const err = await server.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerBuildError);
    expect((err as Error).message).toMatch(/not satisfied/);
    expect((err as Error).message).toMatch(/agents/);
    expect((err as Error).message).toMatch(/tools/);
  });

  test('a cycle rejects with ServerBuildError "Circular dependency" and the ids', async () => {
    const server = new Server();
    server.addPlugins(plugin('a', [], { dependencies: ['b'] }), plugin('b', [], { dependencies: ['c'] }), plugin('c', [], { dependencies: ['a'] }));
    const err = await server.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerBuildError);
    expect((err as Error).message).toMatch(/Circular dependency/);
    for (const id of ['a', 'b', 'c']) expect((err as Error).message).toContain(`${id}`);
  });

  test('a plugin that throws in build rejects with ServerBuildError', async () => {
    const server = new Server();
    server.addPlugins({ id: 'bad', build: () => Promise.reject(new Error('nope')) });
    await expect(server.finish()).rejects.toThrow(ServerBuildError);
  });

  test('a second finish() rejects (already called)', async () => {
    const server = new Server();
    await server.finish();
    await expect(server.finish()).rejects.toThrow(/already called/);
    const other = new Server();
    const first = other.finish();
    await expect(other.finish()).rejects.toThrow(/already called/);
    await first;
  });

  test('build may insert globals and register locals; ready may create contexts; addPlugins during finish is refused', async () => {
    const server = new Server();
    let seen: string | undefined;
    server.addPlugins({
      id: 'setup',
      build: (s) => {
        s.insertGlobal(new AppConfig('from-plugin'));
        s.registerLocal(AgentMemory);
        expect(() => s.addPlugins(plugin('late', []))).toThrow(/while finish\(\) is running/);
      },
      ready: (s) => {
        const ctx = s.createContext();
        seen = ctx.get(AppConfig).agentName;
        expect(ctx.hasLocal(AgentMemory)).toBe(true);
      },
    });
    await server.finish();
    expect(seen).toBe('from-plugin');
    expect(server.hasPlugin('late')).toBe(false);
    expect(server.liveContexts).toBe(1);
    await server.dispose();
  });
});

describe('sealing', () => {
  test('after finish(), insertGlobal, registerLocal and addPlugins throw ServerError mentioning finished', async () => {
    const server = new Server();
    await server.finish();
    expect(server.isFinished).toBe(true);
    for (const call of [
      () => server.insertGlobal(new AppConfig()),
      () => server.insertGlobal(API_KEY, 'x'),
      () => server.registerLocal(AgentMemory),
      () => server.addPlugins(plugin('p', [])),
      () => server.insertGlobalView(API_KEY, () => 'x'),
    ]) {
      expect(call).toThrow(ServerError);
      expect(call).toThrow(/finished/);
    }
    expect(server.hasGlobal(API_KEY)).toBe(false);
    await server.dispose();
    for (const call of [() => server.insertGlobal(API_KEY, 'x'), () => server.registerLocal(AgentMemory), () => server.addPlugins(plugin('p', []))]) {
      expect(call).toThrow(ServerError);
      expect(call).toThrow(/finished/);
    }
    expect(server.isFinished).toBe(true);
  });

  test('createContext() before finish() throws ServerError mentioning finish()', async () => {
    const server = new Server();
    expect(() => server.createContext()).toThrow(ServerError);
    expect(() => server.createContext()).toThrow(/finish\(\)/);
    let during: unknown;
    server.addPlugins({
      id: 'p',
      build: (s) => {
        try {
          s.createContext();
        } catch (e) {
          during = e;
        }
      },
    });
    await server.finish();
    expect((during as Error).message).toMatch(/finish\(\)/);
    await server.dispose();
    expect(() => server.createContext()).toThrow(ServerError);
  });
});

describe('server.container', () => {
  test('a class bound there is a global ctx.get resolves, with singleton scope and activation hooks', async () => {
    abstract class Llm {
      abstract complete(): string;
    }
    const activations: string[] = [];
    @injectable()
    class OpenAiLlm extends Llm {
      constructor(@inject(API_KEY) readonly key: string) {
        super();
      }
      complete() {
        return `ok:${this.key}`;
      }
    }
    const server = new Server();
    server.insertGlobal(API_KEY, 'secret');
    server.container.bind(Llm).to(OpenAiLlm).inSingletonScope();
    server.container.onActivation(Llm, (_c, v) => {
      activations.push('activated');
      return v;
    });
    const Clock = token<{ now: number }>('Clock');
    let n = 0;
    server.container.bind(Clock).toDynamicValue(() => ({ now: ++n }));
    await server.finish();
    const a = server.createContext().child();
    const b = server.createContext().child().child();
    expect(a.get(Llm)).toBe(b.get(Llm));
    expect(a.get(Llm).complete()).toBe('ok:secret');
    expect(activations).toEqual(['activated']);
    expect(a.has(Llm)).toBe(true);
    expect(server.hasGlobal(Llm)).toBe(true);
    expect(server.getGlobal(Llm)).toBe(a.get(Llm));
    expect(a.get(Clock).now).toBe(1);
    expect(a.get(Clock).now).toBe(2);
    expect(a.tryGet(Clock)?.now).toBe(3);
    await server.dispose();
  });

  test('dispose() unbinds the container so deactivation of singletons runs exactly once', async () => {
    @injectable()
    class Db {
      closed = 0;
    }
    const server = new Server();
    server.container.bind(Db).toSelf().inSingletonScope().onDeactivation((d) => {
      d.closed++;
    });
    await server.finish();
    const ctx = server.createContext();
    const db = ctx.child().get(Db);
    await ctx.dispose();
    expect(db.closed).toBe(0);
    await Promise.all([server.dispose(), server.dispose()]);
    await server.dispose();
    expect(db.closed).toBe(1);
  });
});

describe('dispose()', () => {
  test('order: contexts newest first, plugin cleanup reversed, disposable globals newest first, then container unbind', async () => {
    const log: string[] = [];
    class G {
      constructor(readonly name: string) {}
      [Symbol.dispose]() {
        log.push(`global:${this.name}`);
      }
    }
    class G2 {
      async [Symbol.asyncDispose]() {
        await new Promise((r) => setTimeout(r, 1));
        log.push('global:async');
      }
    }
    @injectable()
    class Singleton {}
    const server = new Server();
    server.insertGlobal(new G('old'));
    server.insertGlobal(new G2());
    server.insertGlobal(token<G>('other'), new G('newest'));
    server.container.bind(Singleton).toSelf().inSingletonScope().onDeactivation(() => void log.push('deactivate'));
    server.addPlugins(plugin('p1', []), { ...plugin('p2', [], { dependencies: ['p1'] }), cleanup: () => void log.push('cleanup:p2') });
    server.addPlugins({ id: 'p3', build: () => undefined, cleanup: () => void log.push('cleanup:p3') });
    await server.finish();
    const c1 = server.createContext();
    const c2 = server.createContext();
    c1.onDispose(() => void log.push('ctx1'));
    c2.onDispose(() => void log.push('ctx2'));
    c2.get(Singleton);
    await server.dispose();
    expect(log).toEqual(['ctx2', 'ctx1', 'cleanup:p3', 'cleanup:p2', 'global:newest', 'global:async', 'global:old', 'deactivate']);
    expect(c1.isDisposed && c2.isDisposed).toBe(true);
    expect(server.isDisposed).toBe(true);
  });

  test('each step is awaited before the next: contexts one after another newest first, async cleanups in reverse build order, then globals', async () => {
    const log: string[] = [];
    const cleanedWith: Server[] = [];
    const tick = () => new Promise((r) => setTimeout(r, 2));
    const asyncPlugin = (id: string, dependencies: string[] = []): Plugin => ({
      id,
      dependencies,
      build: () => undefined,
      cleanup: async (s) => {
        cleanedWith.push(s);
        log.push(`cleanup-start:${id}`);
        await tick();
        log.push(`cleanup-end:${id}`);
      },
    });
    class G {
      async [Symbol.asyncDispose]() {
        log.push('global');
      }
    }
    const server = new Server();
    server.insertGlobal(new G());
    server.addPlugins(asyncPlugin('b', ['a']), asyncPlugin('a'));
    await server.finish();
    for (const name of ['c1', 'c2', 'c3']) {
      server.createContext().onDispose(async () => {
        log.push(`${name}-start`);
        await tick();
        log.push(`${name}-end`);
      });
    }
    await server.dispose();
    expect(log).toEqual([
      'c3-start',
      'c3-end',
      'c2-start',
      'c2-end',
      'c1-start',
      'c1-end',
      'cleanup-start:b',
      'cleanup-end:b',
      'cleanup-start:a',
      'cleanup-end:a',
      'global',
    ]);
    expect(cleanedWith).toEqual([server, server]);
  });

  test('a global inserted under several tokens is disposed once', async () => {
    let disposed = 0;
    class Pool {
      [Symbol.dispose]() {
        disposed++;
      }
    }
    const pool = new Pool();
    const server = new Server();
    server.insertGlobal(pool);
    server.insertGlobal(token<Pool>('alias'), pool);
    await server.finish();
    await server.dispose();
    expect(disposed).toBe(1);
  });

  test('idempotent; concurrent calls share one promise; [Symbol.asyncDispose] too', async () => {
    let cleanups = 0;
    const server = new Server();
    server.addPlugins({ id: 'p', build: () => undefined, cleanup: () => void cleanups++ });
    await server.finish();
    const p1 = server.dispose();
    const p2 = server.dispose();
    expect(p1).toBe(p2);
    expect(server[Symbol.asyncDispose]()).toBe(p1);
    await p1;
    await server.dispose();
    expect(cleanups).toBe(1);
  });

  test('await using disposes the server', async () => {
    const log: string[] = [];
    {
      await using server = new Server();
      server.addPlugins({ id: 'p', build: () => undefined, cleanup: () => void log.push('cleanup') });
      await server.finish();
    }
    expect(log).toEqual(['cleanup']);
  });

  test('errors from several disposers reject together as one AggregateError after every disposer ran', async () => {
    const ran: string[] = [];
    class Bad {
      [Symbol.dispose]() {
        ran.push('global');
        throw new Error('global failed');
      }
    }
    const server = new Server();
    server.insertGlobal(new Bad());
    server.addPlugins({
      id: 'p',
      build: () => undefined,
      cleanup: () => {
        ran.push('cleanup');
        throw new Error('cleanup failed');
      },
    });
    await server.finish();
    const ctx = server.createContext();
    ctx.onDispose(() => {
      ran.push('ctx');
      return Promise.reject(new Error('ctx failed'));
    });
    const err = await server.dispose().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(['ctx failed', 'cleanup failed', 'global failed']);
    expect(ran).toEqual(['ctx', 'cleanup', 'global']);
    await expect(server.dispose()).rejects.toBe(err);
  });

  test('dispose() while finish() awaits a plugin: finish stops and rejects, the server stays disposed, built plugins are cleaned up', async () => {
    const log: string[] = [];
    let release!: () => void;
    const server = new Server();
    server.addPlugins(
      { id: 'slow', build: () => new Promise<void>((r) => (release = r)), cleanup: () => void log.push('cleanup:slow') },
      { id: 'next', build: () => void log.push('build:next'), ready: () => void log.push('ready:next') },
    );
    const finishing = server.finish();
    const disposing = server.dispose();
    release();
    await expect(finishing).rejects.toThrow(/dispose\(\) was called/);
    await disposing;
    expect(log).toEqual(['cleanup:slow']);
    expect(server.isDisposed).toBe(true);
    expect(() => server.createContext()).toThrow(ServerError);
    expect(() => server.insertGlobal(API_KEY, 'x')).toThrow(/disposed/);
    expect(server.liveContexts).toBe(0);
  });

  test('dispose() while a ready() is pending: later ready() calls do not run and the server is not sealed', async () => {
    const log: string[] = [];
    let release!: () => void;
    const server = new Server();
    server.addPlugins(
      { id: 'a', build: () => undefined, ready: () => new Promise<void>((r) => (release = r)) },
      { id: 'b', build: () => undefined, ready: () => void log.push('ready:b'), cleanup: () => void log.push('cleanup:b') },
    );
    const finishing = server.finish();
    await new Promise((r) => setTimeout(r, 0));
    const disposing = server.dispose();
    release();
    await expect(finishing).rejects.toThrow(ServerError);
    await disposing;
    expect(log).toEqual(['cleanup:b']);
    expect(server.isDisposed).toBe(true);
    expect(() => server.createContext()).toThrow(/disposed/);
    expect(() => server.createContext()).toThrow(/create a new Server/); // the message says the fix
  });

  test('disposing a server that never finished is fine and refuses later use', async () => {
    const server = new Server();
    server.insertGlobal(new AppConfig());
    await server.dispose();
    expect(() => server.insertGlobal(API_KEY, 'x')).toThrow(/disposed/);
    expect(server.isFinished).toBe(false);
    await expect(server.finish()).rejects.toThrow(/already called/);
  });
});
