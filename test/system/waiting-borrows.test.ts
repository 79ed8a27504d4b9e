/**
 * SPEC 10.5: waiting borrows. `new Server({ borrows, borrowTimeoutMs })`, the per-system
 * `{ borrows, borrowTimeoutMs }` options, `ctx.withMut` / `ctx.withRes`.
 */
import 'reflect-metadata';
import {
  ContextDisposedError,
  ParamError,
  Res,
  res,
  ResMut,
  resMut,
  Server,
  system,
  SystemError,
  token,
  type Param,
  type SystemContext,
} from '../../src/index.js';
import { AppConfig, gate, Scratchpad, type Gate } from './helpers.js';

const Memory = token<{ facts: string[] }>('Memory');
const Log = token<string[]>('Log');

type ServerOptions = ConstructorParameters<typeof Server>[0];

async function setup(options?: ServerOptions): Promise<{ server: Server; ctx: SystemContext; log: string[] }> {
  const server = new Server(options);
  server.insertGlobal(new AppConfig('claude'));
  await server.finish();
  const ctx = server.createContext();
  ctx.insert(new Scratchpad());
  ctx.insert(Memory, { facts: [] });
  const log: string[] = [];
  ctx.insert(Log, log);
  return { server, ctx, log };
}

/** A system that logs its start, holds its params until `g` opens, then logs its end. */
function holding(params: readonly Param[], g: Gate, name: string, log: string[], options: { borrows?: 'fail' | 'wait'; borrowTimeoutMs?: number } = {}) {
  return system(params, async () => {
    log.push(`${name}:start`);
    await g.promise;
    log.push(`${name}:end`);
    return name;
  }, { name, output: token<string>(name), ...options });
}

/** Lets every pending promise job and timer-free continuation run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

function causeOf(err: unknown): ParamError {
  expect(err).toBeInstanceOf(SystemError);
  const cause = (err as SystemError).cause;
  expect(cause).toBeInstanceOf(ParamError);
  return cause as ParamError;
}

describe("'fail' (the default) keeps §4's rule", () => {
  test('a conflict fails at once, and its message names the holder and the wait option', async () => {
    const { server, ctx, log } = await setup();
    expect(server.options.borrows).toBe('fail');
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const err = await ctx.run(system([Res(Scratchpad)], () => 1, { name: 'reader' })).catch((e: unknown) => e);
    const cause = causeOf(err);
    expect(cause.kind).toBe('BorrowConflict');
    expect(cause.message).toMatch(/^borrow conflict: Scratchpad \(system "writer" \(ResMut\) holds ResMut<Scratchpad>/);
    expect(cause.message).toContain("borrows: 'wait'");
    const err2 = await ctx.run(system([ResMut(Scratchpad)], () => 1, { name: 'w2' })).catch((e: unknown) => e);
    expect(causeOf(err2).message).toMatch(/^borrow conflict: Scratchpad \(system "writer" \(ResMut\) holds ResMut<Scratchpad> on this context/);
    g.open();
    await writer;
    await server.dispose();
  });

  test('a per-system { borrows: "fail" } fails at once on a "wait" server', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const err = await ctx.run(system([Res(Scratchpad)], () => 1, { name: 'impatient', borrows: 'fail' })).catch((e: unknown) => e);
    expect(causeOf(err).kind).toBe('BorrowConflict');
    g.open();
    await writer;
    await server.dispose();
  });
});

describe("'wait'", () => {
  test('on a "wait" server a conflicting run waits for the holder, then runs', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const reader = ctx.run(system([Res(Scratchpad)], (s) => {
      log.push('reader');
      return s.notes.length;
    }, { name: 'reader', output: token<number>('n') }));
    await flush();
    expect(log).toEqual(['writer:start']);
    g.open();
    await expect(reader).resolves.toBe(0);
    expect(log).toEqual(['writer:start', 'writer:end', 'reader']);
    await writer;
    await server.dispose();
  });

  test('a per-system { borrows: "wait" } waits on a "fail" server; so does @system({ borrows: "wait" })', async () => {
    const { server, ctx, log } = await setup();
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const patient = system([ResMut(Scratchpad)], (s) => s.notes.push('patient'), { borrows: 'wait', output: token<number>('p') });
    class Decorated {
      @system({ borrows: 'wait', output: token<number>('d') })
      static note(@resMut(Scratchpad) s: Scratchpad, @res(AppConfig) c: AppConfig) {
        return s.notes.push(c.agentName);
      }
    }
    const a = ctx.run(patient);
    const b = ctx.run(Decorated.note);
    await flush();
    expect(ctx.getMut).toBeDefined();
    g.open();
    await Promise.all([writer, a, b]);
    // FIFO: the first waiter first
    expect(ctx.get(Scratchpad).notes).toEqual(['patient', 'claude']);
    await server.dispose();
  });

  test('every parameter is resolved first: a missing one fails at once, whatever else is busy', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const Missing = token<string>('Missing');
    let settled = false;
    const err = ctx.run(system([ResMut(Scratchpad), Res(Missing)], () => 1, { name: 'needy' })).catch((e: unknown) => e).finally(() => (settled = true));
    await flush();
    expect(settled).toBe(true);
    const cause = causeOf(await err);
    expect(cause.kind).toBe('ResourceNotFound');
    expect((await err as SystemError).message).toMatch(/^parameter error: system "needy" → parameter #1 Res\(Missing\): resource not found: Missing/);
    g.open();
    await writer;
    await server.dispose();
  });

  test('it holds none of its borrows while it waits, and takes them all at once', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    // waits for Scratchpad; Memory is free but must not be held meanwhile
    const both = ctx.run(system([ResMut(Memory), ResMut(Scratchpad)], (m, s) => {
      m.facts.push('both');
      s.notes.push('both');
    }, { name: 'both' }));
    await flush();
    expect(() => ctx.getMut(Memory)).not.toThrow();
    await expect(ctx.run(system([ResMut(Memory)], (m) => m.facts.push('other'), { name: 'other', borrows: 'fail', output: token<number>('o') }))).resolves.toBe(1);
    g.open();
    await Promise.all([writer, both]);
    expect(ctx.get(Memory).facts).toEqual(['other', 'both']);
    await server.dispose();
  });

  test('FIFO per entry: a reader does not overtake a queued writer', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g1 = gate();
    const reader1 = ctx.run(holding([Res(Scratchpad)], g1, 'reader1', log));
    const gw = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], gw, 'writer', log)); // queued behind reader1
    const g2 = gate();
    const reader2 = ctx.run(holding([Res(Scratchpad)], g2, 'reader2', log)); // must queue behind the writer
    await flush();
    expect(log).toEqual(['reader1:start']);
    g1.open();
    await flush();
    expect(log).toEqual(['reader1:start', 'reader1:end', 'writer:start']);
    gw.open();
    g2.open();
    await Promise.all([reader1, writer, reader2]);
    expect(log).toEqual(['reader1:start', 'reader1:end', 'writer:start', 'writer:end', 'reader2:start', 'reader2:end']);
    await server.dispose();
  });

  test('readers share: queued readers are granted together', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const gw = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], gw, 'writer', log));
    const g = gate();
    const readers = [1, 2, 3].map((i) => ctx.run(holding([Res(Scratchpad)], g, `r${i}`, log)));
    await flush();
    gw.open();
    await flush();
    expect(log).toEqual(['writer:start', 'writer:end', 'r1:start', 'r2:start', 'r3:start']);
    g.open();
    await Promise.all([writer, ...readers]);
    await server.dispose();
  });

  test("only waiting acquirers queue: 'fail' runs and get/getMut may pass a queued writer", async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g1 = gate();
    const reader1 = ctx.run(holding([Res(Scratchpad)], g1, 'reader1', log));
    const gw = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], gw, 'writer', log));
    await flush();
    expect(ctx.get(Scratchpad)).toBeInstanceOf(Scratchpad);
    await expect(ctx.run(system([Res(Scratchpad)], () => 'passed', { borrows: 'fail', output: token<string>('x') }))).resolves.toBe('passed');
    g1.open();
    gw.open();
    await Promise.all([reader1, writer]);
    await server.dispose();
  });

  test('after borrowTimeoutMs it fails with BorrowConflict naming the holding system(s)', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait', borrowTimeoutMs: 30 });
    const g = gate();
    const r1 = ctx.run(holding([Res(Scratchpad)], g, 'reader1', log));
    const r2 = ctx.child().run(holding([Res(Scratchpad)], g, 'reader2', log));
    const err = await ctx.run(system([ResMut(Scratchpad)], () => 1, { name: 'writer' })).catch((e: unknown) => e);
    const cause = causeOf(err);
    expect(cause.kind).toBe('BorrowConflict');
    expect(cause.token).toBe(Scratchpad);
    expect(cause.message).toMatch(/^borrow conflict: Scratchpad \(system "writer" waited 30 ms for ResMut<Scratchpad>/);
    expect(cause.message).toContain('system "reader1" (Res)');
    expect(cause.message).toContain('system "reader2" (Res)');
    expect((err as SystemError).message).toMatch(/^parameter error: system "writer" → parameter #0 ResMut\(Scratchpad\): borrow conflict: Scratchpad/);
    // the per-system option wins over the server's
    const quick = await ctx.run(system([ResMut(Scratchpad)], () => 1, { name: 'w', borrowTimeoutMs: 0 })).catch((e: unknown) => e);
    expect(causeOf(quick).message).toMatch(/system "w" waited 0 ms for ResMut<Scratchpad>/);
    g.open();
    await Promise.all([r1, r2]);
    // nothing is left queued or borrowed
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test('a waiter that gives up lets the waiters behind it in', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g = gate();
    const reader = ctx.run(holding([Res(Scratchpad)], g, 'reader', log));
    // a writer that times out, queued ahead of a reader that could share with the holder
    const writer = ctx.run(system([ResMut(Scratchpad)], () => 1, { name: 'writer', borrowTimeoutMs: 20 })).catch((e: unknown) => e);
    const reader2 = ctx.run(system([Res(Scratchpad)], () => log.push('reader2'), { name: 'reader2', output: token<number>('r2') }));
    // not granted at once: it queued behind the writer (a grant at once would have run it already)
    expect(log).toEqual(['reader:start']);
    causeOf(await writer);
    await reader2;
    expect(log).toEqual(['reader:start', 'reader2']);
    g.open();
    await reader;
    await server.dispose();
  });

  test('what a parameter resolves to is checked again when granted (a shadowing local inserted meanwhile)', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const child = ctx.child();
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const reader = child.run(system([Res(Scratchpad)], (s) => s.notes.join(','), { name: 'reader', output: token<string>('r') }));
    await flush();
    const mine = new Scratchpad();
    mine.notes.push('child');
    child.insert(mine);
    g.open();
    await expect(reader).resolves.toBe('child');
    await writer;
    await server.dispose();
  });

  test('a waiter rejects at once with ContextDisposedError when its context\'s disposal starts', async () => {
    const { server, ctx, log } = await setup({ borrows: 'wait' });
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const turn = ctx.child();
    const waiting = turn.run(system([Res(Scratchpad)], () => 1, { name: 'reader' })).catch((e: unknown) => e);
    const viaWith = turn.withRes(Scratchpad, () => 1).catch((e: unknown) => e);
    await flush();
    const disposing = turn.dispose();
    let settled = false;
    void waiting.finally(() => (settled = true));
    await flush();
    expect(settled).toBe(true);
    expect(await waiting).toBeInstanceOf(ContextDisposedError);
    expect(await viaWith).toBeInstanceOf(ContextDisposedError);
    await disposing;
    g.open();
    await writer;
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test('a nested wait on a borrow held by its own run is not detected: it fails after the timeout, naming the holder', async () => {
    const Here = token<SystemContext>('Here');
    const server = new Server({ borrows: 'wait', borrowTimeoutMs: 20 });
    server.insertGlobalView(Here, (c) => c);
    await server.finish();
    const ctx = server.createContext();
    ctx.insert(new Scratchpad());
    const outer = system([ResMut(Scratchpad), Res(Here)], async (_s, here) => {
      return await here.withMut(Scratchpad, () => 'never');
    }, { name: 'outer', output: token<string>('o') });
    const err = await ctx.run(outer).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemError);
    expect((err as SystemError).kind).toBe('ExecutionError');
    const inner = (err as SystemError).cause as ParamError;
    expect(inner).toBeInstanceOf(ParamError);
    expect(inner.kind).toBe('BorrowConflict');
    expect(inner.message).toMatch(/withMut\(Scratchpad\) callback waited 20 ms for ResMut<Scratchpad>.*held by system "outer" \(ResMut\)/);
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test('options are checked at definition', () => {
    expect(() => system([], () => 1, { borrows: 'sometimes' as never })).toThrow(/options.borrows must be 'fail' or 'wait'/);
    expect(() => system([], () => 1, { borrowTimeoutMs: -1 })).toThrow(/borrowTimeoutMs must be a number of milliseconds from 0 to 2147483647/);
    expect(() => system([], () => 1, { borrowTimeoutMs: Infinity })).toThrow(TypeError);
    expect(() => system([], () => 1, { borrowTimeoutMs: Number.NaN })).toThrow(TypeError);
  });
});

describe('ctx.withMut / ctx.withRes', () => {
  test('hold the borrow for the callback, resolve to its result, and wait for a holder', async () => {
    const { server, ctx, log } = await setup();
    await expect(ctx.withMut(Scratchpad, (s) => s.notes.push('a'))).resolves.toBe(1);
    const g = gate();
    const holding1 = ctx.withMut(Scratchpad, async (s) => {
      log.push('with:start');
      expect(() => ctx.get(Scratchpad)).toThrow(/borrow conflict/);
      await g.promise;
      s.notes.push('b');
      log.push('with:end');
      return 'held';
    });
    // a 'fail' run conflicts with it at once, and names it
    const err = await ctx.run(system([Res(Scratchpad)], () => 1, { name: 'reader' })).catch((e: unknown) => e);
    expect(causeOf(err).message).toContain('withMut(Scratchpad) callback (ResMut)');
    // withRes waits
    const reading = ctx.withRes(Scratchpad, (s) => {
      log.push('res');
      return s.notes.length;
    });
    await flush();
    expect(log).toEqual(['with:start']);
    g.open();
    await expect(holding1).resolves.toBe('held');
    await expect(reading).resolves.toBe(2);
    expect(log).toEqual(['with:start', 'with:end', 'res']);
    await server.dispose();
  });

  test('withRes follows the Res rule (ancestors, globals; container globals take no borrow); withMut the ResMut rule', async () => {
    const { server, ctx } = await setup();
    const child = ctx.child();
    await expect(child.withRes(AppConfig, (c) => c.agentName)).resolves.toBe('claude');
    await expect(child.withRes(Scratchpad, (s) => s.notes.length)).resolves.toBe(0);
    const err = await child.withMut(Scratchpad, () => 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('ResourceNotFound');
    expect((err as ParamError).message).toMatch(/ResMut never walks up/);
    await server.dispose();
  });

  test('every failure rejects: bad token, bad fn, bad options, a disposed context, a throwing callback', async () => {
    const { server, ctx } = await setup();
    const call = (f: () => Promise<unknown>) => {
      let p: Promise<unknown> = Promise.resolve('threw synchronously');
      expect(() => (p = f())).not.toThrow();
      return p.catch((e: unknown) => e);
    };
    expect(await call(() => ctx.withMut('nope' as never, () => 1))).toBeInstanceOf(TypeError);
    expect(await call(() => ctx.withMut(Scratchpad, 'nope' as never))).toBeInstanceOf(TypeError);
    expect(await call(() => ctx.withRes(Scratchpad, () => 1, { timeoutMs: -5 }))).toBeInstanceOf(TypeError);
    expect(await call(() => ctx.withRes(Scratchpad, () => 1, 7 as never))).toBeInstanceOf(TypeError);
    const boom = new Error('boom');
    expect(await call(() => ctx.withMut(Scratchpad, () => {
      throw boom;
    }))).toBe(boom);
    expect(await call(() => ctx.withMut(Scratchpad, async () => {
      throw boom;
    }))).toBe(boom);
    // nothing stays borrowed after the failures
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    const child = ctx.child();
    await child.dispose();
    expect(await call(() => child.withRes(AppConfig, () => 1))).toBeInstanceOf(ContextDisposedError);
    await server.dispose();
  });

  test('timeoutMs bounds the wait and the error names the holder', async () => {
    const { server, ctx, log } = await setup();
    const g = gate();
    const writer = ctx.run(holding([ResMut(Scratchpad)], g, 'writer', log));
    const err = await ctx.withRes(Scratchpad, () => 1, { timeoutMs: 15 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('BorrowConflict');
    expect((err as ParamError).message).toMatch(/^borrow conflict: Scratchpad \(withRes\(Scratchpad\) callback waited 15 ms for Res<Scratchpad> .*held by system "writer" \(ResMut\)/);
    g.open();
    await writer;
    await server.dispose();
  });
});
