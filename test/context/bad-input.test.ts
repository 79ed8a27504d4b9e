import 'reflect-metadata';
import { ContextDisposedError, ParamError, Server, inspect, token } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

class AppConfig {
  constructor(readonly agentName = 'agent') {}
}
class Scratchpad {
  readonly notes: string[] = [];
}
const API_KEY = token<string>('API_KEY');

/** Everything observable about a context and server, to check that a refused call changed nothing. */
function snapshot(server: Server, ctx: ReturnType<Server['createContext']>) {
  return {
    locals: probe.localValues(ctx),
    globals: probe.globalValues(server),
    outputs: [...ctx.outputs.entries()],
    children: inspect(ctx).children.length,
    disposed: ctx.isDisposed,
  };
}

const notTokens: [string, unknown][] = [
  ['null', null],
  ['undefined', undefined],
  ['a string', 'AppConfig'],
  ['a number', 7],
  ['a boolean', true],
  ['a plain object', { name: 'x' }],
  ['an arrow function', () => new AppConfig()],
  ['a symbol not made by token()', Symbol('API_KEY')],
];

describe('a non-token where a token is expected is a TypeError and changes nothing', () => {
  test.each(notTokens)('%s', async (_label, bad) => {
    const server = new Server();
    server.insertGlobal(new AppConfig());
    await server.finish();
    const ctx = server.createContext();
    ctx.insert(API_KEY, 'k');
    ctx.outputs.insert(API_KEY, 'o');
    const before = snapshot(server, ctx);
    const b = bad as never;
    const calls: (() => unknown)[] = [
      () => ctx.get(b),
      () => ctx.tryGet(b),
      () => ctx.getMut(b),
      () => ctx.has(b),
      () => ctx.hasLocal(b),
      () => ctx.remove(b),
      () => ctx.insert(b, 1 as never),
      () => ctx.outputs.insert(b, 1 as never),
      () => ctx.outputs.get(b),
      () => ctx.outputs.tryGet(b),
      () => ctx.outputs.has(b),
      () => ctx.outputs.remove(b),
      () => server.getGlobal(b),
      () => server.hasGlobal(b),
    ];
    for (const call of calls) {
      expect(call).toThrow(TypeError);
      expect(call).toThrow(/expected a token/);
    }
    expect(snapshot(server, ctx)).toEqual(before);
    await server.dispose();
  });

  test.each(notTokens)('%s as a server setup token', (_label, bad) => {
    const server = new Server();
    expect(() => server.insertGlobal(bad as never, 1 as never)).toThrow(TypeError);
    expect(() => server.registerLocal(bad as never)).toThrow(TypeError);
    expect(() => server.insertGlobalView(bad as never, () => 1)).toThrow(TypeError);
    expect(inspect(server).locals).toEqual([]);
    expect(probe.localFactoryCount(server)).toBe(0);
  });
});

describe('a value without a class of its own, passed alone, is refused with the fix', () => {
  test.each([
    ['null', null, /null has no class/],
    ['a number', 42, /the number 42 has no class/],
    ['a string', 'hello', /the string "hello" has no class/],
    ['a plain object', { a: 1 }, /a plain object has no class of its own/],
    ['a prototype-less object', Object.create(null), /has no class of its own/],
    ['a class itself', AppConfig, /the class AppConfig itself, not an instance/],
    ['a function', () => 1, /not an instance/],
  ])('%s', async (_label, bad, message) => {
    const server = new Server();
    expect(() => server.insertGlobal(bad as never)).toThrow(message);
    expect(() => server.insertGlobal(bad as never)).toThrow(/insertGlobal\(MY_TOKEN, value\)|new AppConfig/);
    expect(inspect(server).locals).toEqual([]);
    await server.finish();
    const ctx = server.createContext();
    expect(() => ctx.insert(bad as never)).toThrow(TypeError);
    expect(() => ctx.insert(bad as never)).toThrow(message);
    expect(ctx.hasLocal(Object)).toBe(false);
    expect(inspect(ctx).locals).toEqual([]);
    await server.dispose();
  });
});

describe('other bad input', () => {
  test('registerLocal with a non-function factory, onDispose with a non-function, addPlugins with a non-plugin', async () => {
    const server = new Server();
    expect(() => server.registerLocal(Scratchpad, 'nope' as never)).toThrow(/factory must be a function/);
    expect(() => server.addPlugins({ id: 'x' } as never)).toThrow(/is not a plugin/);
    expect(() => server.addPlugins(null as never)).toThrow(/is not a plugin/);
    expect(server.hasPlugin('x')).toBe(false);
    expect(probe.localFactoryCount(server)).toBe(0);
    await server.finish();
    const ctx = server.createContext();
    expect(() => ctx.onDispose(42 as never)).toThrow(/needs a function/);
    await server.dispose();
  });

  test('a registerLocal factory returning undefined fails createContext', async () => {
    const server = new Server();
    server.registerLocal(Scratchpad, () => undefined as never);
    await server.finish();
    expect(() => server.createContext()).toThrow(/returned undefined/);
    expect(server.liveContexts).toBe(0);
    await server.dispose();
  });

  test('use after dispose changes nothing and names the call', async () => {
    const server = new Server();
    await server.finish();
    const ctx = server.createContext();
    const turn = ctx.child();
    turn.insert(new Scratchpad());
    await ctx.dispose();
    expect(() => turn.insert(new Scratchpad())).toThrow(ContextDisposedError);
    expect(() => turn.get(Scratchpad)).toThrow(/get\(Scratchpad\) was called on a context at depth 1 that is disposed/);
    expect(() => turn.getMut(null as never)).toThrow(ContextDisposedError);
    expect(() => ctx.child()).toThrow(/child\(\) was called/);
    expect(inspect(ctx).children.length).toBe(0);
    expect(server.liveContexts).toBe(0);
    await server.dispose();
  });
});

describe('borrows recorded on entries (set by running systems)', () => {
  async function setup() {
    const server = new Server();
    await server.finish();
    const parent = server.createContext();
    const ctx = parent.child();
    parent.insert(new Scratchpad());
    ctx.insert(new Scratchpad());
    const entry = probe.localEntry(ctx, Scratchpad);
    if (entry === undefined) throw new Error('no entry');
    return { server, ctx, entry };
  }

  test('get of an entry under a write borrow is a BorrowConflict, not the ancestor value', async () => {
    const { server, ctx, entry } = await setup();
    entry.writing = true;
    let err: unknown;
    try {
      ctx.get(Scratchpad);
    } catch (e) {
      err = e;
    }
    expect((err as ParamError).kind).toBe('BorrowConflict');
    expect((err as Error).message.startsWith('borrow conflict: Scratchpad')).toBe(true);
    expect(() => ctx.tryGet(Scratchpad)).toThrow(/^borrow conflict: Scratchpad/);
    expect(() => ctx.child().get(Scratchpad)).toThrow(/^borrow conflict/);
    expect(() => ctx.insert(new Scratchpad())).toThrow(/^borrow conflict/);
    expect(() => ctx.remove(Scratchpad)).toThrow(/^borrow conflict/);
    entry.writing = false;
    await server.dispose();
  });

  test('getMut of an entry under any borrow is a BorrowConflict; get under read borrows is fine', async () => {
    const { server, ctx, entry } = await setup();
    entry.reads = 2;
    expect(ctx.get(Scratchpad)).toBe(entry.value);
    expect(() => ctx.getMut(Scratchpad)).toThrow(/^borrow conflict: Scratchpad.*2 running system/);
    entry.reads = 0;
    entry.writing = true;
    expect(() => ctx.getMut(Scratchpad)).toThrow(/^borrow conflict: Scratchpad/);
    entry.writing = false;
    expect(ctx.getMut(Scratchpad)).toBe(entry.value);
    await server.dispose();
  });
});
