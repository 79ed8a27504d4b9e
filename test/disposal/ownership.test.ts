import { isDisposable } from '../../src/index.js';
import { disposeValue } from '../../src/disposal/disposable.js';
import { Finalizers as Ownership } from '../../src/lifetime/finalizers.js';
import { settle } from '../../src/lifetime/settle.js';
import { throwCollected } from '../../src/lifetime/errors.js';
import { ownedBy } from '../../src/disposal/owned.js';
import { ContextDisposedError, Server } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

describe('Ownership', () => {
  test('drains last registered first, awaiting each', async () => {
    const o = new Ownership();
    const log: string[] = [];
    o.add(() => void log.push('a'));
    o.add(async () => {
      await new Promise((r) => setTimeout(r, 5));
      log.push('b');
    });
    o.add(() => void log.push('c'));
    expect(o.size).toBe(3);
    await o.drain([]);
    expect(log).toEqual(['c', 'b', 'a']);
    expect(o.size).toBe(0);
  });

  test('unregister removes one without running it; twice is harmless; after drain is harmless', async () => {
    const o = new Ownership();
    const log: number[] = [];
    const offs = [1, 2, 3, 4].map((n) => o.add(() => void log.push(n)));
    offs[1]();
    offs[1]();
    expect(o.size).toBe(3);
    await o.drain([]);
    expect(log).toEqual([4, 3, 1]);
    offs[0]();
    expect(o.size).toBe(0);
  });

  test('cleanups registered while draining run too', async () => {
    const o = new Ownership();
    const log: string[] = [];
    o.add(() => {
      log.push('first');
      o.add(() => void log.push('late'));
    });
    await o.drain([]);
    expect(log).toEqual(['first', 'late']);
  });

  test('a cleanup unregistering another during drain prevents it from running', async () => {
    const o = new Ownership();
    const log: string[] = [];
    const off = o.add(() => void log.push('never'));
    o.add(() => off());
    await o.drain([]);
    expect(log).toEqual([]);
  });

  test('errors are collected, every cleanup still runs', async () => {
    const o = new Ownership();
    const errors: unknown[] = [];
    const log: string[] = [];
    o.add(() => void log.push('ran'));
    o.add(() => {
      throw new Error('sync');
    });
    o.add(() => Promise.reject(new Error('async')));
    await o.drain(errors);
    expect(log).toEqual(['ran']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['async', 'sync']);
  });

  test('registering and unregistering forever does not grow the stack (compaction keeps order)', async () => {
    const o = new Ownership();
    const log: number[] = [];
    o.add(() => void log.push(-1));
    for (let i = 0; i < 100_000; i++) o.add(() => void log.push(i))();
    o.add(() => void log.push(1));
    expect(o.size).toBe(2);
    expect(probe.cleanupSlots(o)).toBeLessThan(100);
    await o.drain([]);
    expect(log).toEqual([1, -1]);
  });

  // No timing assertion (the machine is shared; PLAN.md): drain pops each slot once, so
  // 10,000 cleanups run once each, last registered first, and leave no slot behind.
  test('10,000 cleanups drain once each, last registered first, leaving no slot', async () => {
    const o = new Ownership();
    const order: number[] = [];
    for (let i = 0; i < 10_000; i++) o.add(() => void order.push(i));
    await o.drain([]);
    expect(order).toHaveLength(10_000);
    expect(order.every((v, i) => v === 9_999 - i)).toBe(true);
    expect(o.size).toBe(0);
    expect(probe.cleanupSlots(o)).toBe(0);
  });
});

describe('helpers', () => {
  test('isDisposable / disposeValue prefer Symbol.asyncDispose', async () => {
    const log: string[] = [];
    const both = {
      [Symbol.dispose]: () => void log.push('sync'),
      [Symbol.asyncDispose]: async () => void log.push('async'),
    };
    expect(isDisposable(both)).toBe(true);
    expect(isDisposable({})).toBe(false);
    expect(isDisposable(null)).toBe(false);
    expect(isDisposable(3)).toBe(false);
    await disposeValue(both);
    expect(log).toEqual(['async']);
  });

  test('throwCollected flattens nested disposal AggregateErrors through settle', async () => {
    const errors: unknown[] = [];
    await settle(() => throwCollected([new Error('a'), new Error('b')], 'inner'), errors);
    await settle(() => {
      throw new AggregateError([new Error('user')], 'user aggregate');
    }, errors);
    expect(errors).toHaveLength(3);
    expect((errors[2] as AggregateError).message).toBe('user aggregate');
    expect(() => throwCollected([], 'x')).not.toThrow();
    expect(() => throwCollected(errors, 'outer')).toThrow(/3 error\(s\) while disposing outer: a; b; user aggregate/);
  });
});

describe('ownedBy (how registries tie an undo to a context)', () => {
  async function root() {
    const server = new Server();
    await server.finish();
    return { server, ctx: server.createContext() };
  }

  test('the owner disposal runs the undo once; a disposer called afterwards does nothing', async () => {
    const { server, ctx } = await root();
    let undone = 0;
    const off = ownedBy(ctx, () => void undone++);
    await ctx.dispose();
    expect(undone).toBe(1);
    off();
    off();
    expect(undone).toBe(1);
    await server.dispose();
  });

  test('the disposer runs the undo now, once, and drops it from the owner', async () => {
    const { server, ctx } = await root();
    let undone = 0;
    const off = ownedBy(ctx, () => void undone++);
    off();
    off();
    expect(undone).toBe(1);
    await ctx.dispose();
    expect(undone).toBe(1);
    await server.dispose();
  });

  test('a disposed owner refuses: the undo runs at once and the ContextDisposedError is rethrown', async () => {
    const { server, ctx } = await root();
    await ctx.dispose();
    let undone = 0;
    expect(() => ownedBy(ctx, () => void undone++)).toThrow(ContextDisposedError);
    expect(undone).toBe(1);
    await server.dispose();
  });
});
