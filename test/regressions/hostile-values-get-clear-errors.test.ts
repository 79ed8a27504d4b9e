/**
 * Issue 8 #16 (core room). Bug: describing or naming a hostile value for an error message
 * threw the value's own error instead of the clear TypeError / ParamError the call
 * documents: `insert(value)` / `insertGlobal(value)` read `value.constructor`, token checks
 * read a function's `prototype`, messages read a class's `name` and a scope key's
 * `toString` / `id` / `name` — each of which a proxy (or a getter) can make throw.
 * Fixed: every one of those reads is guarded; a value that refuses inspection is
 * described as such.
 */
import { ContextDisposedError, createScope, ParamError, Server, token } from '../../src/index.js';

/** A proxy every trap of which throws. */
function hostile<T extends object>(target: T): T {
  const trap = (): never => {
    throw new Error('trap');
  };
  return new Proxy(target, { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap });
}

async function ctx() {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

test('insert(value) and insertGlobal(value) of a hostile object: a TypeError saying how to pass a token', async () => {
  const server = new Server();
  expect(() => server.insertGlobal(hostile({}))).toThrow(TypeError);
  expect(() => server.insertGlobal(hostile({}))).toThrow(/insertGlobal\(value\): reading the class \(constructor\) of .* threw \(trap\).*token/);
  const { revoke, proxy } = Proxy.revocable({}, {});
  revoke();
  expect(() => server.insertGlobal(proxy)).toThrow(TypeError);
  await server.finish();
  const c = server.createContext();
  expect(() => c.insert(hostile({}))).toThrow(TypeError);
  expect(() => c.insert(hostile({}))).toThrow(/insert\(value\) on a context at depth 0: reading the class/);
  await server.dispose();
});

test('a function proxy whose prototype read throws is "not a token" (TypeError), everywhere a token is expected', async () => {
  const { server, ctx: c } = await ctx();
  const fn = hostile(class Fake {});
  expect(() => c.get(fn as never)).toThrow(TypeError);
  expect(() => c.get(fn as never)).toThrow(/expected a token/);
  expect(() => c.has(fn as never)).toThrow(/expected a token/);
  expect(() => c.insert(fn as never, 1)).toThrow(/expected a token/);
  expect(() => c.insert(fn as never)).toThrow(TypeError);
  await server.dispose();
});

test('a class token whose name getter throws: the ParamError is still thrown, with a placeholder name', async () => {
  const { server, ctx: c } = await ctx();
  class Sneaky {}
  Object.defineProperty(Sneaky, 'name', {
    get(): never {
      throw new Error('trap');
    },
  });
  expect(() => c.get(Sneaky)).toThrow(ParamError);
  expect(() => c.get(Sneaky)).toThrow(/^resource not found: <a class whose name can not be read>/);
  expect(() => c.getMut(Sneaky)).toThrow(ParamError);
  await server.dispose();
});

test('a hostile scope key: messages about its scope context still come out', async () => {
  const { server, ctx: c } = await ctx();
  const scope = createScope(c, hostile({}));
  const T = token<number>('T');
  expect(() => scope.ctx.getMut(T)).toThrow(ParamError);
  expect(() => scope.ctx.getMut(T)).toThrow(/context at depth 1 \(scope <a key that refuses inspection>\)/);
  await scope.dispose();
  expect(() => scope.ctx.get(T)).toThrow(ContextDisposedError);
  await server.dispose();
});
