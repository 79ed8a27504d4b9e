import { jest } from '@jest/globals';
import { Agents, AgentsPlugin, ContextDisposedError, Events, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin, createScope, scopeOf, type Plugin } from '../../src/index.js';
import { installEvents } from '../../src/events/events.js';
import { probe } from '../../src/testing/probe.js';

const eventsPlugin: Plugin = { id: 'events', build: (s) => void installEvents(s) };

async function setup(): Promise<{ server: Server; app: ReturnType<Server['createContext']> }> {
  const server = new Server();
  server.addPlugins(eventsPlugin);
  await server.finish();
  return { server, app: server.createContext() };
}

describe('Events', () => {
  test('installEvents is idempotent: one shared bus however many plugins install it', async () => {
    const server = new Server();
    server.addPlugins(eventsPlugin, { id: 'second', build: (s) => void installEvents(s) });
    await server.finish();
    const a = server.createContext();
    const b = server.createContext();
    const heard: string[] = [];
    a.get(Events).on('x', (v: string) => void heard.push(v));
    await b.get(Events).emit(undefined, 'x', 'hello');
    expect(heard).toEqual(['hello']);
    await server.dispose();
  });

  test('ToolsPlugin and PromptsPlugin each install Events alone, and together install it once', async () => {
    for (const plugins of [[new ToolsPlugin()], [new PromptsPlugin()], [new PromptsPlugin(), new ToolsPlugin(), eventsPlugin]]) {
      const server = new Server();
      server.addPlugins(...plugins);
      await server.finish();
      expect(server.createContext().get(Events)).toBeInstanceOf(Events);
      await server.dispose();
    }
    const server = new Server();
    server.addPlugins(new ToolsPlugin(), new PromptsPlugin());
    await server.finish();
    const app = server.createContext();
    const seen: string[] = [];
    app.get(Events).on('tools/result', (e: { name: string }) => void seen.push(e.name));
    app.get(Tools).register({ name: 'x', description: 'x', parameters: { type: 'object' }, execute: () => 'ok' });
    await app.child().get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(seen).toEqual(['x']);
    await server.dispose();
  });

  test('every combination and order of Tools/Prompts/Agents plugins installs one shared Events that each plugin dispatches on', async () => {
    const makers = { tools: () => new ToolsPlugin(), prompts: () => new PromptsPlugin(), agents: () => new AgentsPlugin() };
    type Id = keyof typeof makers;
    const orders: Id[][] = [['tools'], ['prompts'], ['agents'], ['tools', 'prompts'], ['prompts', 'tools'], ['agents', 'tools'], ['prompts', 'agents'],
      ['tools', 'prompts', 'agents'], ['agents', 'prompts', 'tools'], ['prompts', 'agents', 'tools']];
    for (const order of orders) {
      const server = new Server();
      server.addPlugins(...order.map((id) => makers[id]()));
      await server.finish();
      const app = server.createContext();
      const heard: string[] = [];
      const events = app.get(Events);
      events.on('tools/result', () => void heard.push('tools'));
      events.on('prompt/assemble', (a) => {
        heard.push('prompts');
        return a;
      });
      events.on('agent/created', () => void heard.push('agents'));
      if (order.includes('tools')) {
        app.get(Tools).register({ name: 'x', description: 'x', parameters: { type: 'object' }, execute: () => 'ok' });
        await app.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
      } else expect(app.tryGet(Tools)).toBeUndefined();
      if (order.includes('prompts')) await app.get(Prompts).assemble();
      else expect(app.tryGet(Prompts)).toBeUndefined();
      if (order.includes('agents')) await app.get(Agents).create({ id: 'a' });
      else expect(app.tryGet(Agents)).toBeUndefined();
      expect(heard.sort()).toEqual([...order].sort());
      await server.dispose();
    }
  });

  test('flat scopes: a listener of a parent scope does not hear its nested scope, nor the other way round', async () => {
    const { server, app } = await setup();
    const parent = createScope(app, { id: 'P' });
    const child = createScope(parent.ctx.child(), { id: 'C' });
    const heard: string[] = [];
    parent.ctx.get(Events).on('e', () => void heard.push('P'));
    child.ctx.get(Events).on('e', () => void heard.push('C'));
    app.get(Events).on('w', (v: string) => v + 'G');
    parent.ctx.get(Events).on('w', (v: string) => v + 'P');
    child.ctx.get(Events).on('w', (v: string) => v + 'C');
    await app.get(Events).emit(child.key, 'e');
    expect(heard).toEqual(['C']);
    heard.length = 0;
    await app.get(Events).emit(parent.key, 'e');
    expect(heard).toEqual(['P']);
    await expect(app.get(Events).waterfall(child.key, 'w', '')).resolves.toBe('GC');
    await expect(app.get(Events).waterfall(parent.key, 'w', '')).resolves.toBe('GP');
    await server.dispose();
  });

  test('ctx.get(Events) is a view bound to ctx, made once per context', async () => {
    const { server, app } = await setup();
    const v = app.get(Events);
    expect(v).toBeInstanceOf(Events);
    expect(app.get(Events)).toBe(v);
    expect(v.context).toBe(app);
    const child = app.child();
    expect(child.get(Events)).not.toBe(v);
    expect(child.get(Events).context).toBe(child);
    await server.dispose();
  });

  test('an event about scope K reaches unscoped listeners and K listeners only; global hears all', async () => {
    const { server, app } = await setup();
    const A = { id: 'A' };
    const B = { id: 'B' };
    const sa = createScope(app, A);
    const sb = createScope(app, B);
    const heard: string[] = [];
    app.get(Events).on('e', () => void heard.push('unscoped'));
    sa.ctx.get(Events).on('e', () => void heard.push('A'));
    sb.ctx.get(Events).on('e', () => void heard.push('B'));
    sb.ctx.get(Events).on('e', () => void heard.push('B-global'), { global: true });
    await app.get(Events).emit(A, 'e');
    expect(heard).toEqual(['unscoped', 'A', 'B-global']);
    heard.length = 0;
    await app.get(Events).emit(B, 'e');
    expect(heard).toEqual(['unscoped', 'B', 'B-global']);
    heard.length = 0;
    await app.get(Events).emit(undefined, 'e');
    expect(heard).toEqual(['unscoped', 'B-global']);
    heard.length = 0;
    await app.get(Events).emit({}, 'e');
    expect(heard).toEqual(['unscoped', 'B-global']);
    await server.dispose();
  });

  test('a listener registered through a child of a scope context belongs to that scope', async () => {
    const { server, app } = await setup();
    const A = { id: 'A' };
    const turn = createScope(app, A).ctx.child().child();
    expect(scopeOf(turn)).toBe(A);
    const heard: string[] = [];
    turn.get(Events).on('e', () => void heard.push('turn'));
    await app.get(Events).emit({}, 'e');
    expect(heard).toEqual([]);
    await app.get(Events).emit(A, 'e');
    expect(heard).toEqual(['turn']);
    await server.dispose();
  });

  test('waterfall: prepended first, each (value, ...args) feeds the next, async allowed', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    ev.on('w', (v: string, x: string) => `${v}+b${x}`);
    ev.on('w', async (v: string, x: string) => `${v}+c${x}`);
    ev.on('w', (v: string, x: string) => `${v}+a${x}`, { prepend: true });
    ev.on('w', (v: string) => `${v}+first`, { prepend: true });
    await expect(ev.waterfall(undefined, 'w', 'seed', '!')).resolves.toBe('seed+first+a!+b!+c!');
    await expect(ev.waterfall(undefined, 'none', 42)).resolves.toBe(42);
    await server.dispose();
  });

  test('waterfall: a throwing listener rejects and stops the chain', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    const later = jest.fn((v: number) => v + 1);
    ev.on('w', () => {
      throw new Error('boom');
    });
    ev.on('w', later);
    await expect(ev.waterfall(undefined, 'w', 1)).rejects.toThrow('boom');
    expect(later).not.toHaveBeenCalled();
    await server.dispose();
  });

  test('waterfall filters by scope like emit', async () => {
    const { server, app } = await setup();
    const A = {};
    const B = {};
    createScope(app, A).ctx.get(Events).on('w', (v: string) => v + 'A');
    createScope(app, B).ctx.get(Events).on('w', (v: string) => v + 'B');
    app.get(Events).on('w', (v: string) => v + 'G');
    await expect(app.get(Events).waterfall(A, 'w', '')).resolves.toBe('AG');
    await expect(app.get(Events).waterfall(B, 'w', '')).resolves.toBe('BG');
    await expect(app.get(Events).waterfall(undefined, 'w', '')).resolves.toBe('G');
    await server.dispose();
  });

  test('emit: sync listeners run synchronously in order; async ones are awaited in order', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    const order: string[] = [];
    ev.on('e', () => void order.push('1'));
    ev.on('e', () => void order.push('2'));
    const p = ev.emit(undefined, 'e');
    expect(order).toEqual(['1', '2']);
    await p;
    order.length = 0;
    ev.on('e', async () => {
      await new Promise((r) => setTimeout(r, 10));
      order.push('3-async');
    });
    ev.on('e', () => void order.push('4'));
    await ev.emit(undefined, 'e');
    expect(order).toEqual(['1', '2', '3-async', '4']);
    await server.dispose();
  });

  test('emit: a failing listener does not stop the others; emit rejects after all ran', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    const order: string[] = [];
    const boom = new Error('boom');
    ev.on('e', () => {
      throw boom;
    });
    ev.on('e', () => void order.push('after'));
    await expect(ev.emit(undefined, 'e')).rejects.toBe(boom);
    expect(order).toEqual(['after']);
    ev.on('e', async () => {
      throw new Error('second');
    });
    const err = await ev.emit(undefined, 'e').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors).toHaveLength(2);
    expect((err as Error).message).toContain('boom');
    expect((err as Error).message).toContain('second');
    expect(order).toEqual(['after', 'after']);
    await server.dispose();
  });

  test('the disposer removes the listener; idempotent; a removed listener is skipped mid-dispatch', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    const heard: string[] = [];
    let offB: () => void = () => undefined;
    ev.on('e', () => {
      heard.push('a');
      offB();
      ev.on('e', () => void heard.push('added-during'));
    });
    offB = ev.on('e', () => void heard.push('b'));
    await ev.emit(undefined, 'e');
    expect(heard).toEqual(['a']);
    offB();
    expect(ev.listenerCount('e')).toBe(2);
    await server.dispose();
  });

  test('disposing the owning context removes its listeners; a disposed view refuses on()', async () => {
    const { server, app } = await setup();
    const A = { id: 'A' };
    const scope = createScope(app, A);
    const heard: string[] = [];
    const ev = scope.ctx.get(Events);
    ev.on('e', () => void heard.push('scoped'), { global: true });
    const child = app.child();
    child.get(Events).on('e', () => void heard.push('child'));
    expect(probe.leakProbeCount(server)).toBeGreaterThan(0);
    const probes = () => probe.registrationLeaks(server);
    expect(probes()).toEqual(['event listener "e" of scope A']);
    await scope.dispose();
    await child.dispose();
    await app.get(Events).emit(A, 'e');
    expect(heard).toEqual([]);
    expect(probes()).toEqual([]);
    expect(() => ev.on('e', () => undefined)).toThrow(ContextDisposedError);
    await server.dispose();
  });

  test('the disposer unregisters its cleanup from the context (no growth on repeated on/off)', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    const fn = jest.fn();
    for (let i = 0; i < 100; i++) ev.on('e', fn)();
    await app.dispose();
    expect(fn).not.toHaveBeenCalled();
    await server.dispose();
  });

  test('bad input is a TypeError naming the call', async () => {
    const { server, app } = await setup();
    const ev = app.get(Events);
    expect(() => ev.on('', () => undefined)).toThrow(/non-empty string/);
    expect(() => ev.on('e', 'nope' as never)).toThrow(/listener must be a function/);
    expect(() => ev.on('e', () => undefined, 5 as never)).toThrow(/options must be an object/);
    await expect(ev.emit('A' as never, 'e')).rejects.toThrow(/scope must be/);
    await expect(ev.emit(app as never, 'e')).rejects.toThrow(/scopeOf\(ctx\)/);
    await expect(ev.waterfall(undefined, 3 as never, 1)).rejects.toThrow(/non-empty string/);
    expect(ev.listenerCount('e')).toBe(0);
    await server.dispose();
  });
});
