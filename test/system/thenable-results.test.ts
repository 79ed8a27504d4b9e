/**
 * What counts as a promise is the same for `ctx.run`, `ctx.withMut` / `ctx.withRes` and a
 * context's cleanups: anything, object or function, with a callable `then`. Such a result
 * keeps the borrows until it settles (and `ctx.run` stores what it settled to); anything
 * else, a function without `then` or an object whose `then` is not callable, is a plain
 * value, and the borrows are given back at once.
 */
import { ResMut, Server, system, token, type SystemContext } from '../../src/index.js';
import { gate, Scratchpad, type Gate } from './helpers.js';

const Note = token<unknown>('Note');

/** A function that is also a thenable: it settles to `value` once `g` opens. */
function thenableFunction(g: Gate, value: unknown): (() => string) & PromiseLike<unknown> {
  const f = (): string => 'called';
  return Object.assign(f, {
    then<A = unknown, B = never>(ok?: ((v: unknown) => A | PromiseLike<A>) | null, bad?: ((e: unknown) => B | PromiseLike<B>) | null): PromiseLike<A | B> {
      return g.promise.then(() => value).then(ok, bad);
    },
  });
}

/** An object that is also a thenable, settling to `value` once `g` opens. */
function thenableObject(g: Gate, value: unknown): PromiseLike<unknown> {
  return { then: (ok, bad) => g.promise.then(() => value).then(ok, bad) };
}

async function setup(borrows: 'fail' | 'wait'): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server({ borrows });
  await server.finish();
  const ctx = server.createContext();
  ctx.insert(new Scratchpad());
  return { server, ctx };
}

/** Whether the write borrow of the context's Scratchpad is free now. */
function scratchpadFree(ctx: SystemContext): boolean {
  try {
    ctx.getMut(Scratchpad);
    return true;
  } catch {
    return false;
  }
}

const thenables = [
  ['a function with a callable then', thenableFunction],
  ['an object with a callable then', thenableObject],
] as const;

describe.each(['fail', 'wait'] as const)("borrows: '%s'", (borrows) => {
  describe.each(thenables)('%s', (_what, make) => {
    test('ctx.run holds the borrow until it settles and stores what it settled to', async () => {
      const { server, ctx } = await setup(borrows);
      const g = gate();
      const run = ctx.run(system([ResMut(Scratchpad)], () => make(g, 'settled'), { name: 'thenable', output: Note }));
      await Promise.resolve();
      expect(scratchpadFree(ctx)).toBe(false);
      g.open();
      await expect(run).resolves.toBe('settled');
      expect(ctx.outputs.get(Note)).toBe('settled');
      expect(scratchpadFree(ctx)).toBe(true);
      await server.dispose();
    });

    test('ctx.withMut and ctx.withRes hold the borrow until it settles and resolve to what it settled to', async () => {
      const { server, ctx } = await setup(borrows);
      const g = gate();
      const mut = ctx.withMut(Scratchpad, () => make(g, 'mut'));
      const res = ctx.withRes(Scratchpad, () => make(g, 'res'));
      await Promise.resolve();
      expect(scratchpadFree(ctx)).toBe(false);
      g.open();
      await expect(mut).resolves.toBe('mut');
      await expect(res).resolves.toBe('res');
      expect(scratchpadFree(ctx)).toBe(true);
      await server.dispose();
    });

    test("a context's cleanup is awaited until it settles", async () => {
      const { server, ctx } = await setup(borrows);
      const g = gate();
      const child = ctx.child();
      child.onDispose(() => make(g, undefined));
      let disposed = false;
      const disposal = child.dispose().then(() => (disposed = true));
      await new Promise((r) => setTimeout(r, 5));
      expect(disposed).toBe(false);
      g.open();
      await disposal;
      expect(disposed).toBe(true);
      await server.dispose();
    });
  });

  test('a function without then, and an object whose then is not callable, are values: the borrows are given back at once', async () => {
    const { server, ctx } = await setup(borrows);
    const plain = (): string => 'called';
    const notThenable = { then: 'not a function' };
    for (const value of [plain, notThenable]) {
      const run = ctx.run(system([ResMut(Scratchpad)], () => value, { name: 'value', output: Note }));
      expect(scratchpadFree(ctx)).toBe(true);
      await expect(run).resolves.toBe(value);
      expect(ctx.outputs.get(Note)).toBe(value);
      const mut = ctx.withMut(Scratchpad, () => value);
      expect(scratchpadFree(ctx)).toBe(true);
      await expect(mut).resolves.toBe(value);
    }
    await server.dispose();
  });
});
