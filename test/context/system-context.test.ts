import 'reflect-metadata';
import { ParamError, scopeOf, Server, token, type SystemContext, type Token } from '../../src/index.js';

class AppConfig {
  constructor(readonly agentName = 'agent') {}
}
class AgentMemory {
  readonly facts: string[] = [];
}
class Scratchpad {
  readonly notes: string[] = [];
}
const API_KEY = token<string>('API_KEY');

async function tree() {
  const server = new Server();
  server.insertGlobal(new AppConfig('global'));
  server.insertGlobal(API_KEY, 'secret');
  server.registerLocal(AgentMemory);
  await server.finish();
  const agent = server.createContext();
  const session = agent.child();
  const turn = session.child();
  return { server, agent, session, turn };
}

let server: Server;
afterEach(async () => {
  await server?.dispose().catch(() => undefined);
});

describe('child()', () => {
  test('parent, depth, server; no locals, no outputs, same globals', async () => {
    const t = await tree();
    server = t.server;
    expect(t.agent.parent).toBeUndefined();
    expect(t.agent.depth).toBe(0);
    expect(t.session.parent).toBe(t.agent);
    expect(t.turn.depth).toBe(2);
    expect(t.turn.server).toBe(server);
    t.session.outputs.insert(API_KEY, 'out');
    const c = t.session.child();
    expect(c.hasLocal(AgentMemory)).toBe(false);
    expect(c.outputs.size).toBe(0);
    expect(c.get(AppConfig).agentName).toBe('global');
  });
});

describe('insert / get (Res) / shadowing', () => {
  test('insert returns the previous local; a local shadows ancestors and globals for this context and descendants only', async () => {
    const t = await tree();
    server = t.server;
    const sessionCfg = new AppConfig('session');
    expect(t.session.insert(sessionCfg)).toBeUndefined();
    expect(t.session.insert(new AppConfig('session2'))).toBe(sessionCfg);
    expect(t.turn.get(AppConfig).agentName).toBe('session2');
    expect(t.session.get(AppConfig).agentName).toBe('session2');
    expect(t.agent.get(AppConfig).agentName).toBe('global');
    expect(t.agent.child().get(AppConfig).agentName).toBe('global');
    t.turn.insert(API_KEY, 'turn-key');
    expect(t.turn.get(API_KEY)).toBe('turn-key');
    expect(t.session.get(API_KEY)).toBe('secret');
    expect(server.getGlobal(AppConfig).agentName).toBe('global');
  });

  test('nearest ancestor first', async () => {
    const t = await tree();
    server = t.server;
    const mem = t.agent.get(AgentMemory);
    expect(t.turn.get(AgentMemory)).toBe(mem);
    const sessionMem = new AgentMemory();
    t.session.insert(sessionMem);
    expect(t.turn.get(AgentMemory)).toBe(sessionMem);
  });

  test('get of a missing token throws ParamError ResourceNotFound; tryGet returns undefined; has/hasLocal', async () => {
    const t = await tree();
    server = t.server;
    let err: unknown;
    try {
      t.turn.get(Scratchpad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('ResourceNotFound');
    expect((err as ParamError).token).toBe(Scratchpad);
    expect((err as Error).message.startsWith('resource not found: Scratchpad')).toBe(true);
    expect(t.turn.tryGet(Scratchpad)).toBeUndefined();
    expect(t.turn.has(Scratchpad)).toBe(false);
    expect(t.turn.has(AgentMemory)).toBe(true);
    expect(t.turn.has(API_KEY)).toBe(true);
    expect(t.turn.hasLocal(AgentMemory)).toBe(false);
    expect(t.agent.hasLocal(AgentMemory)).toBe(true);
    const T = token<string>('Named');
    expect(() => t.turn.get(T)).toThrow(/^resource not found: Named/);
  });

  test('insert(undefined value) is refused and changes nothing', async () => {
    const t = await tree();
    server = t.server;
    t.turn.insert(API_KEY, 'x');
    expect(() => t.turn.insert(API_KEY, undefined as unknown as string)).toThrow(/can not be undefined/);
    expect(t.turn.get(API_KEY)).toBe('x');
  });

  test('falsy values are real locals', async () => {
    const t = await tree();
    server = t.server;
    const N = token<number>('N');
    const S = token<string>('S');
    const B = token<boolean | null>('B');
    t.turn.insert(N, 0);
    t.turn.insert(S, '');
    t.turn.insert(B, null);
    expect(t.turn.get(N)).toBe(0);
    expect(t.turn.get(S)).toBe('');
    expect(t.turn.get(B)).toBeNull();
    expect(t.turn.getMut(N)).toBe(0);
    expect(t.turn.child().has(B)).toBe(true);
  });
});

describe('getMut (ResMut) and remove', () => {
  test('own locals only', async () => {
    const t = await tree();
    server = t.server;
    const pad = new Scratchpad();
    t.turn.insert(pad);
    expect(t.turn.getMut(Scratchpad)).toBe(pad);
    expect(t.agent.getMut(AgentMemory)).toBe(t.agent.get(AgentMemory));
  });

  test('found in an ancestor: ResourceNotFound saying where and that ResMut never walks up', async () => {
    const t = await tree();
    server = t.server;
    let err: unknown;
    try {
      t.turn.getMut(AgentMemory);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('ResourceNotFound');
    const msg = (err as Error).message;
    expect(msg.startsWith('resource not found: AgentMemory')).toBe(true);
    expect(msg).toMatch(/ancestor context at depth 0/);
    expect(msg).toMatch(/ResMut never walks up/);
  });

  test('found as a global: the hint mentions global and ResMut', async () => {
    const t = await tree();
    server = t.server;
    for (const tok of [AppConfig, API_KEY] as Token[]) {
      let msg = '';
      try {
        t.session.getMut(tok);
      } catch (e) {
        msg = (e as Error).message;
      }
      expect(msg).toMatch(/^resource not found: (AppConfig|API_KEY)/);
      expect(msg).toMatch(/global/);
      expect(msg).toMatch(/ResMut never walks up/);
    }
  });

  test('a class bound only in server.container counts as a global in the ResMut hint', async () => {
    class Llm {}
    const s = new Server();
    server = s;
    s.container.bind(Llm).toConstantValue(new Llm());
    await s.finish();
    const ctx = s.createContext();
    expect(ctx.get(Llm)).toBeInstanceOf(Llm);
    let err: unknown;
    try {
      ctx.getMut(Llm);
    } catch (e) {
      err = e;
    }
    expect((err as ParamError).kind).toBe('ResourceNotFound');
    const msg = (err as Error).message;
    expect(msg.startsWith('resource not found: Llm')).toBe(true);
    expect(msg).toMatch(/global/);
    expect(msg).toMatch(/ResMut never walks up/);
  });

  test('missing everywhere: ResourceNotFound with ResMut hint', async () => {
    const t = await tree();
    server = t.server;
    expect(() => t.turn.getMut(Scratchpad)).toThrow(/^resource not found: Scratchpad.*ResMut never walks up/);
  });

  test('remove returns the own local and leaves ancestors alone', async () => {
    const t = await tree();
    server = t.server;
    const sessionCfg = new AppConfig('session');
    t.session.insert(sessionCfg);
    expect(t.turn.remove(AppConfig)).toBeUndefined();
    expect(t.turn.get(AppConfig)).toBe(sessionCfg);
    expect(t.session.remove(AppConfig)).toBe(sessionCfg);
    expect(t.session.remove(AppConfig)).toBeUndefined();
    expect(t.turn.get(AppConfig).agentName).toBe('global');
    expect(t.agent.remove(AgentMemory)).toBeInstanceOf(AgentMemory);
    expect(t.turn.has(AgentMemory)).toBe(false);
  });
});

describe('outputs', () => {
  const A = token<string>('A');
  const B = token<number>('B');

  test('insert returns the previous; get/tryGet/has/size; never inherited', async () => {
    const t = await tree();
    server = t.server;
    const o = t.session.outputs;
    expect(t.session.outputs).toBe(o);
    expect(o.insert(A, 'a1')).toBeUndefined();
    expect(o.insert(A, 'a2')).toBe('a1');
    o.insert(B, 2);
    expect(o.get(A)).toBe('a2');
    expect(o.tryGet(B)).toBe(2);
    expect(o.has(A)).toBe(true);
    expect(o.size).toBe(2);
    expect(t.session.child().outputs.has(A)).toBe(false);
    expect(t.turn.outputs.size).toBe(0);
    expect(t.agent.outputs.tryGet(A)).toBeUndefined();
    expect([...o.entries()]).toEqual([
      [A, 'a2'],
      [B, 2],
    ]);
  });

  test('get of a missing output throws ParamError OutputNotFound', async () => {
    const t = await tree();
    server = t.server;
    t.session.outputs.insert(A, 'x');
    let err: unknown;
    try {
      t.turn.outputs.get(A);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('OutputNotFound');
    expect((err as Error).message.startsWith('output not found: A')).toBe(true);
  });

  test('takeLast removes and returns the most recent {token, value}; a second call is undefined even if others remain', async () => {
    const t = await tree();
    server = t.server;
    const o = t.turn.outputs;
    expect(o.takeLast()).toBeUndefined();
    o.insert(A, 'a');
    o.insert(B, 1);
    expect(o.takeLast()).toEqual({ token: B, value: 1 });
    expect(o.has(B)).toBe(false);
    expect(o.takeLast()).toBeUndefined();
    expect(o.size).toBe(1);
    expect(o.get(A)).toBe('a');
    o.insert(B, 2);
    o.insert(A, 'again');
    expect(o.takeLast()).toEqual({ token: A, value: 'again' });
    o.insert(A, 'x');
    o.clear();
    expect(o.size).toBe(0);
    expect(o.takeLast()).toBeUndefined();
  });

  test('takeLast returns an output stored as undefined (a Unit-like output)', async () => {
    const t = await tree();
    server = t.server;
    const U = token<undefined>('Unit');
    t.turn.outputs.insert(U, undefined);
    expect(t.turn.outputs.takeLast()).toEqual({ token: U, value: undefined });
  });
});

describe('onDispose / dispose', () => {
  test('cleanups run last registered first; unregister removes one', async () => {
    const t = await tree();
    server = t.server;
    const log: number[] = [];
    t.turn.onDispose(() => void log.push(1));
    const off = t.turn.onDispose(() => void log.push(2));
    t.turn.onDispose(() => void log.push(3));
    off();
    off();
    await t.turn.dispose();
    expect(log).toEqual([3, 1]);
  });

  test('descendants first (newest first), then cleanups LIFO, then disposable locals newest first', async () => {
    const t = await tree();
    server = t.server;
    const log: string[] = [];
    class D {
      constructor(readonly n: string) {}
      [Symbol.dispose]() {
        log.push(`local:${this.n}`);
      }
    }
    class AD {
      async [Symbol.asyncDispose]() {
        await new Promise((r) => setTimeout(r, 2));
        log.push('local:async');
      }
    }
    const s = t.session;
    s.insert(token<D>('d1'), new D('old'));
    s.insert(new AD());
    s.insert(token<D>('d2'), new D('new'));
    s.onDispose(() => void log.push('cleanup:1'));
    s.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 2));
      log.push('cleanup:2');
    });
    const c1 = s.child();
    const c2 = s.child();
    const g = c1.child();
    c1.onDispose(() => void log.push('c1'));
    c2.onDispose(() => void log.push('c2'));
    g.onDispose(() => void log.push('g'));
    t.turn.onDispose(() => void log.push('turn'));
    await s.dispose();
    expect(log).toEqual(['c2', 'g', 'c1', 'turn', 'cleanup:2', 'cleanup:1', 'local:new', 'local:async', 'local:old']);
    expect([s, c1, c2, g, t.turn].every((c) => c.isDisposed)).toBe(true);
    expect(t.agent.isDisposed).toBe(false);
  });

  test('a replaced or removed disposable local is returned, not disposed; a value re-inserted from an ancestor is not disposed by the child', async () => {
    const t = await tree();
    server = t.server;
    const disposed: string[] = [];
    class D {
      constructor(readonly n: string) {}
      [Symbol.dispose]() {
        disposed.push(this.n);
      }
    }
    const T = token<D>('D');
    const first = new D('first');
    t.turn.insert(T, first);
    expect(t.turn.insert(T, new D('second'))).toBe(first);
    const U = token<D>('U');
    t.turn.insert(U, new D('removed'));
    t.turn.remove(U);
    const shared = new D('session-owned');
    t.session.insert(T, shared);
    const child = t.session.child();
    child.insert(token<D>('alias'), child.get(T));
    child.insert(token<D>('alias2'), shared);
    await child.dispose();
    expect(disposed).toEqual([]);
    await t.turn.dispose();
    expect(disposed).toEqual(['second']);
    await t.session.dispose();
    expect(disposed).toEqual(['second', 'session-owned']);
  });

  test('memoized: repeated and concurrent calls share one promise that settles after every async cleanup', async () => {
    const t = await tree();
    server = t.server;
    let done = false;
    t.turn.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 20));
      done = true;
    });
    const p1 = t.session.dispose();
    const p2 = t.turn.dispose();
    const p3 = t.turn[Symbol.asyncDispose]();
    expect(p2).toBe(p3);
    expect(t.turn.isDisposed).toBe(true);
    await p2;
    expect(done).toBe(true);
    await p1;
    expect(t.session.dispose()).toBe(p1);
  });

  test('a parent disposal awaits a child disposal already in flight', async () => {
    const t = await tree();
    server = t.server;
    let done = false;
    t.turn.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 20));
      done = true;
    });
    void t.turn.dispose();
    await t.agent.dispose();
    expect(done).toBe(true);
  });

  test('errors are collected into one AggregateError after all ran', async () => {
    const t = await tree();
    server = t.server;
    const ran: string[] = [];
    class Bad {
      [Symbol.dispose]() {
        ran.push('local');
        throw new Error('local');
      }
    }
    t.session.insert(new Bad());
    t.session.onDispose(() => {
      ran.push('c1');
      throw new Error('c1');
    });
    t.session.onDispose(async () => {
      ran.push('c2');
      throw new Error('c2');
    });
    t.turn.onDispose(() => {
      ran.push('turn');
      throw new Error('turn');
    });
    const err = await t.session.dispose().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(['turn', 'c2', 'c1', 'local']);
    expect(ran).toEqual(['turn', 'c2', 'c1', 'local']);
    await expect(t.session.dispose()).rejects.toBe(err);
  });

  test('await using turn = session.child() disposes the turn at block end', async () => {
    const t = await tree();
    server = t.server;
    const log: string[] = [];
    let kept: SystemContext | undefined;
    {
      await using turn = t.session.child();
      turn.insert(new Scratchpad());
      turn.onDispose(async () => {
        await new Promise((r) => setTimeout(r, 1));
        log.push('turn disposed');
      });
      kept = turn;
      log.push('body');
    }
    expect(log).toEqual(['body', 'turn disposed']);
    expect(kept.isDisposed).toBe(true);
    expect(t.session.isDisposed).toBe(false);
  });

  test('every method throws ContextDisposedError after disposal started, except the listed ones', async () => {
    const t = await tree();
    server = t.server;
    const key = { id: 'k' };
    const { createScope } = await import('../../src/index.js');
    const scope = createScope(t.session, key);
    const ctx = scope.ctx.child();
    ctx.insert(new Scratchpad());
    const outputs = ctx.outputs;
    t.session.onDispose(() => new Promise((r) => setTimeout(r, 10)));
    const pending = t.session.dispose();
    const calls: [string, () => unknown][] = [
      ['child', () => ctx.child()],
      ['insert', () => ctx.insert(new Scratchpad())],
      ['insert2', () => ctx.insert(API_KEY, 'x')],
      ['get', () => ctx.get(AppConfig)],
      ['tryGet', () => ctx.tryGet(AppConfig)],
      ['getMut', () => ctx.getMut(Scratchpad)],
      ['has', () => ctx.has(AppConfig)],
      ['hasLocal', () => ctx.hasLocal(Scratchpad)],
      ['remove', () => ctx.remove(Scratchpad)],
      ['outputs', () => ctx.outputs],
      ['outputs.insert', () => outputs.insert(API_KEY, 'x')],
      ['outputs.get', () => outputs.get(API_KEY)],
      ['outputs.takeLast', () => outputs.takeLast()],
      ['outputs.tryGet', () => outputs.tryGet(API_KEY)],
      ['outputs.has', () => outputs.has(API_KEY)],
      ['outputs.remove', () => outputs.remove(API_KEY)],
      ['outputs.size', () => outputs.size],
      ['outputs.clear', () => outputs.clear()],
      ['outputs.entries', () => outputs.entries()],
      ['onDispose', () => ctx.onDispose(() => undefined)],
      ['resolve', () => ctx.resolve(Scratchpad)],
    ];
    for (const [name, call] of calls) {
      let err: unknown;
      try {
        call();
      } catch (e) {
        err = e;
      }
      expect([name, (err as Error | undefined)?.name]).toEqual([name, 'ContextDisposedError']);
      expect((err as Error).message).toMatch(/disposed/);
    }
    // promise-returning methods reject instead (SPEC 10.7)
    const promised: [string, () => Promise<unknown>][] = [
      ['run', () => ctx.run((() => undefined) as never)],
      ['execute', () => ctx.execute([])],
      ['resolveAsync', () => ctx.resolveAsync(Scratchpad)],
    ];
    for (const [name, call] of promised) {
      const err = await call().then(() => undefined, (e: unknown) => e);
      expect([name, (err as Error | undefined)?.name]).toEqual([name, 'ContextDisposedError']);
      expect((err as Error).message).toMatch(/disposed/);
    }
    expect(ctx.isDisposed).toBe(true);
    expect(ctx.parent).toBe(scope.ctx);
    expect(ctx.depth).toBe(3);
    expect(ctx.server).toBe(server);
    expect(scopeOf(ctx)).toBe(key);
    expect(ctx.dispose()).toBeInstanceOf(Promise);
    expect(ctx[Symbol.asyncDispose]()).toBe(ctx.dispose());
    await pending;
  });
});
