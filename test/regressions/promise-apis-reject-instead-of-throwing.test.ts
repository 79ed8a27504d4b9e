/**
 * Bug (issue 10, SPEC 10.7): `ctx.run(notASystem)` threw synchronously, so a `.catch`
 * on the returned promise never saw the TypeError; the same for `ctx.execute` of a
 * non-array or a non-step, and for `run` / `execute` / `resolveAsync` on a disposed
 * context (ContextDisposedError). Fixed: every promise-returning method of a context
 * reports every failure by rejecting.
 */
import 'reflect-metadata';
import { injectable } from 'inversify';
import { ContextDisposedError, Server, system } from '../../src/index.js';

@injectable()
class Service {}

async function setup() {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

/** Calls `f`, failing the test if it throws synchronously; returns what it returned. */
function noThrow<T>(f: () => T): T {
  let out: T;
  try {
    out = f();
  } catch (err) {
    throw new Error(`threw synchronously: ${String(err)}`);
  }
  return out;
}

describe('promise-returning context methods reject, never throw', () => {
  test('ctx.run of something that is not a system rejects with a TypeError', async () => {
    const { server, ctx } = await setup();
    function notASystem() {
      return 1;
    }
    await expect(noThrow(() => ctx.run(notASystem))).rejects.toThrow(TypeError);
    await expect(noThrow(() => ctx.run(notASystem))).rejects.toThrow(/notASystem is not a system/);
    await expect(noThrow(() => ctx.run({} as never))).rejects.toThrow(/expected a system/);
    await expect(noThrow(() => ctx.run(undefined as never))).rejects.toThrow(TypeError);
    await server.dispose();
  });

  test('ctx.execute of a non-array or a non-step rejects with a TypeError', async () => {
    const { server, ctx } = await setup();
    await expect(noThrow(() => ctx.execute('x' as never))).rejects.toThrow(/expected an array of steps/);
    await expect(noThrow(() => ctx.execute([system([], () => 1), 'x' as never]))).rejects.toThrow(TypeError);
    await server.dispose();
  });

  test('run, execute and resolveAsync on a disposed context reject with ContextDisposedError', async () => {
    const { server, ctx } = await setup();
    await ctx.dispose();
    const s = system([], () => 1);
    await expect(noThrow(() => ctx.run(s))).rejects.toBeInstanceOf(ContextDisposedError);
    await expect(noThrow(() => ctx.run('junk' as never))).rejects.toBeInstanceOf(ContextDisposedError);
    await expect(noThrow(() => ctx.execute([s]))).rejects.toBeInstanceOf(ContextDisposedError);
    await expect(noThrow(() => ctx.resolveAsync(Service))).rejects.toBeInstanceOf(ContextDisposedError);
    await server.dispose();
  });
});
