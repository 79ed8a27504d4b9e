import 'reflect-metadata';
import {
  ExecutionResult,
  inspect,
  loop,
  Out,
  parallel,
  ParamError,
  Res,
  ResMut,
  Server,
  system,
  SystemError,
  token,
  Unit,
  type SystemContext,
} from '../../src/index.js';

class AppConfig {
  agentName = 'claude';
}
class Scratchpad {
  notes: string[] = [];
}
class Counter {
  n = 0;
}
const A = token<string>('A');
const B = token<string>('B');
const C = token<string>('C');
/** A contextual global whose view is the asking context itself: lets a system see where it runs. */
const Here = token<SystemContext>('Here');

async function setup(): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server();
  server.insertGlobal(new AppConfig());
  server.insertGlobalView(Here, (c) => c);
  await server.finish();
  const ctx = server.createContext();
  ctx.insert(new Scratchpad());
  return { server, ctx };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

function liveChildren(ctx: SystemContext): number {
  return inspect(ctx).children.length;
}

describe('sequential execution', () => {
  test('steps run in order on ctx; the final output is moved out, the others stay', async () => {
    const { server, ctx } = await setup();
    const order: string[] = [];
    const a = system([ResMut(Scratchpad)], (s) => {
      s.notes.push('a');
      order.push('a');
      return 'from a';
    }, { output: A });
    const b = system([Out(A)], async (fromA) => {
      order.push('b');
      return `${fromA} then b`;
    }, { output: B });
    const result = await ctx.execute([a, b]);
    expect(order).toEqual(['a', 'b']);
    expect(result).toBeInstanceOf(ExecutionResult);
    expect(result.hasOutput).toBe(true);
    expect(result.outputToken).toBe(B);
    expect(result.value).toBe('from a then b');
    expect(result.output(B)).toBe('from a then b');
    expect(result.output(A)).toBeUndefined();
    expect(result.systemsExecuted).toBe(2);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof result.runId).toBe('string');
    expect(ctx.outputs.has(B)).toBe(false);
    expect(ctx.outputs.get(A)).toBe('from a');
    // execute never clears outputs
    const again = await ctx.execute([system([], () => 'c', { output: C })]);
    expect(again.runId).not.toBe(result.runId);
    expect(ctx.outputs.get(A)).toBe('from a');
    await server.dispose();
  });

  test('runId is a fixed UUID per execution and JSON.stringify shows it', async () => {
    const { server, ctx } = await setup();
    const result = await ctx.execute([system([], () => 'a', { output: A })]);
    expect(result.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(result.runId).toBe(result.runId);
    expect(Object.isFrozen(result)).toBe(true);
    expect(JSON.parse(JSON.stringify(result))).toEqual({ runId: result.runId, systemsExecuted: 1, durationMs: result.durationMs, hasOutput: true, value: 'a' });
    await server.dispose();
  });

  test('a context disposed between steps rejects the execution; later steps never run', async () => {
    const { server, ctx } = await setup();
    const child = ctx.child();
    const g = gate();
    const ran: string[] = [];
    const first = system([], async () => {
      await g.promise;
    });
    const later = system([], () => ran.push('later'));
    const running = child.execute([first, later]);
    const disposing = child.dispose(); // awaits the running step
    g.open();
    await expect(running).rejects.toThrow(/disposed/);
    await disposing;
    expect(ran).toEqual([]);
    await server.dispose();
  });

  test('durationMs measures the whole execution', async () => {
    const { server, ctx } = await setup();
    const wait = system([], () => new Promise<void>((r) => setTimeout(r, 30)));
    const result = await ctx.execute([wait]);
    expect(result.durationMs).toBeGreaterThanOrEqual(25);
    expect(result.durationMs).toBeLessThan(10_000);
    await server.dispose();
  });

  test('an empty execution has no output; a Unit output is still the final output', async () => {
    const { server, ctx } = await setup();
    const empty = await ctx.execute([]);
    expect(empty.hasOutput).toBe(false);
    expect(empty.outputToken).toBeUndefined();
    expect(empty.systemsExecuted).toBe(0);
    const unit = await ctx.execute([system([], () => undefined)]);
    expect(unit.hasOutput).toBe(true);
    expect(unit.outputToken).toBe(Unit);
    expect(unit.output(Unit)).toBeUndefined();
    await server.dispose();
  });

  test('a failing step rejects with its SystemError; earlier outputs stay and nothing is taken', async () => {
    const { server, ctx } = await setup();
    const ran: string[] = [];
    const ok = system([], () => 'a', { output: A });
    const bad = system([Res(token<string>('Nope'))], () => 1, { name: 'bad' });
    const never = system([], () => ran.push('never'));
    const err = await ctx.execute([ok, bad, never]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemError);
    expect((err as SystemError).systemName).toBe('bad');
    expect(ran).toEqual([]);
    expect(ctx.outputs.get(A)).toBe('a');
    await server.dispose();
  });

  test('a non-step is a TypeError, rejected before anything runs (parallel/loop, being synchronous, throw)', async () => {
    const { server, ctx } = await setup();
    const ran: string[] = [];
    const ok = system([], () => ran.push('ok'));
    await expect(ctx.execute([ok, (() => 1) as never])).rejects.toThrow(/step #1: the function .* is not a system/);
    await expect(ctx.execute([ok, 'x' as never])).rejects.toThrow(TypeError);
    await expect(ctx.execute('x' as never)).rejects.toThrow(/expected an array of steps/);
    expect(() => parallel([ok], [{} as never])).toThrow(/branch #1, step #0/);
    expect(() => parallel()).toThrow(/at least one branch/);
    expect(() => loop([ok], {} as never)).toThrow(/until must be a function/);
    expect(() => loop([ok], { until: () => true, maxIterations: -1 })).toThrow(/non-negative integer/);
    expect(() => loop([ok], { until: () => true, maxIterations: Infinity })).toThrow(/non-negative integer/);
    expect(() => loop([42 as never], { until: () => true })).toThrow(TypeError);
    expect(ran).toEqual([]);
    await server.dispose();
  });
});

describe('parallel', () => {
  test('branches run concurrently, each in its own child context of ctx', async () => {
    const { server, ctx } = await setup();
    const g = gate();
    const seen: Readonly<SystemContext>[] = [];
    // branch 0 waits for branch 1: this only finishes when they run at the same time
    const waiter = system([Res(Here)], async (here) => {
      seen[0] = here;
      await g.promise;
      return 'waited';
    }, { output: A });
    const opener = system([Res(Here)], (here) => {
      seen[1] = here;
      g.open();
      return 'opened';
    }, { output: B });
    const result = await ctx.execute([parallel([waiter], [opener])]);
    expect(seen[0]).not.toBe(ctx);
    expect(seen[1]).not.toBe(ctx);
    expect(seen[0]).not.toBe(seen[1]);
    expect(seen[0].parent).toBe(ctx);
    expect(seen[1].parent).toBe(ctx);
    // disposed after success
    expect(seen[0].isDisposed).toBe(true);
    expect(seen[1].isDisposed).toBe(true);
    expect(liveChildren(ctx)).toBe(0);
    expect(result.systemsExecuted).toBe(2);
    expect(ctx.outputs.get(A)).toBe('waited');
    expect(result.output(B)).toBe('opened');
    await server.dispose();
  });

  test('a branch reads the parent through Res but can not ResMut its locals', async () => {
    const { server, ctx } = await setup();
    const read = system([Res(Scratchpad), Res(AppConfig)], (s, c) => `${s.notes.length}:${c.agentName}`, { output: A });
    await expect(ctx.execute([parallel([read])])).resolves.toMatchObject({ value: '0:claude' });
    const write = system([ResMut(Scratchpad)], (s) => s.notes.push('x'), { name: 'write' });
    const err = (await ctx.execute([parallel([write])]).catch((e: unknown) => e)) as SystemError;
    expect(err).toBeInstanceOf(SystemError);
    expect(err.kind).toBe('ParamError');
    expect((err.cause as ParamError).kind).toBe('ResourceNotFound');
    expect(err.message).toMatch(/ResMut never walks up/);
    expect(ctx.get(Scratchpad).notes).toEqual([]);
    expect(liveChildren(ctx)).toBe(0);
    await server.dispose();
  });

  test('concurrent branches hold read borrows on the parent entry; a parent ResMut meanwhile conflicts', async () => {
    const { server, ctx } = await setup();
    const g = gate();
    const hold = system([Res(Scratchpad)], async () => {
      await g.promise;
    });
    const running = ctx.execute([parallel([hold], [hold])]);
    await Promise.resolve();
    expect(() => ctx.getMut(Scratchpad)).toThrow(/borrow conflict: Scratchpad \(2 running/);
    g.open();
    await running;
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test('a branch does not see the parent outputs', async () => {
    const { server, ctx } = await setup();
    ctx.outputs.insert(A, 'parent');
    const readA = system([Out(A)], (a) => a, { name: 'readA' });
    const err = (await ctx.execute([parallel([readA])]).catch((e: unknown) => e)) as SystemError;
    expect((err.cause as ParamError).kind).toBe('OutputNotFound');
    await server.dispose();
  });

  test('outputs merge in branch order, a later branch winning on the same token', async () => {
    const { server, ctx } = await setup();
    const slow = system([], async () => {
      await new Promise((r) => setTimeout(r, 20));
      return 'slow first branch';
    }, { output: A });
    const fast = system([], () => 'fast second branch', { output: A });
    const onlyFirst = system([], () => 'b', { output: B });
    const result = await ctx.execute([parallel([slow, onlyFirst], [fast])]);
    // the second branch wins even though it finished first, and its output is the last
    expect(result.outputToken).toBe(A);
    expect(result.value).toBe('fast second branch');
    expect(ctx.outputs.get(B)).toBe('b');
    const r2 = await ctx.execute([parallel([fast], [slow])]);
    expect(r2.value).toBe('slow first branch');
    await server.dispose();
  });

  test('on a branch failure: every branch settles, branch contexts are disposed, nothing merges, the first failure in branch order rejects', async () => {
    const { server, ctx } = await setup();
    const seen: Readonly<SystemContext>[] = [];
    let slowFinished = false;
    const slow = system([Res(Here)], async (here) => {
      seen.push(here);
      await new Promise((r) => setTimeout(r, 20));
      slowFinished = true;
      return 'slow';
    }, { output: A });
    const failsLater = system([], async () => {
      await new Promise((r) => setTimeout(r, 5));
      throw new Error('second');
    }, { name: 'failsLater' });
    const failsNow = system([Res(Here)], (here) => {
      seen.push(here);
      throw new Error('third');
    }, { name: 'failsNow' });
    const err = (await ctx.execute([parallel([slow], [failsLater], [failsNow])]).catch((e: unknown) => e)) as SystemError;
    expect(err.systemName).toBe('failsLater');
    expect(slowFinished).toBe(true);
    expect(seen).toHaveLength(2);
    for (const c of seen) expect(c.isDisposed).toBe(true);
    expect(liveChildren(ctx)).toBe(0);
    expect(ctx.outputs.has(A)).toBe(false);
    await server.dispose();
  });

  test('nested parallel and loops inside branches run on the branch context', async () => {
    const { server, ctx } = await setup();
    const N = token<number>('n');
    const bump = system([ResMut(Counter)], (c) => ++c.n, { output: N });
    // each branch makes its own Counter local through a system that inserts it
    const insertCounter = system([Res(Here)], (here) => {
      here.insert(new Counter());
    });
    const untilArgs: SystemContext[] = [];
    const result = await ctx.execute([
      parallel(
        [insertCounter, loop([bump], { until: (c) => (untilArgs.push(c), c.get(Counter).n >= 3) })],
        [insertCounter, parallel([system([], () => 'inner', { output: C })])],
      ),
    ]);
    expect(result.systemsExecuted).toBe(2 + 3 + 1);
    expect(result.outputToken).toBe(C);
    expect(ctx.outputs.get(N)).toBe(3);
    expect(ctx.has(Counter)).toBe(false);
    expect(new Set(untilArgs).size).toBe(1);
    expect(untilArgs[0].parent).toBe(ctx);
    expect(liveChildren(ctx)).toBe(0);
    await server.dispose();
  });
});

describe('loop', () => {
  test('until is checked before each iteration with the context; the body runs until it holds', async () => {
    const { server, ctx } = await setup();
    ctx.insert(new Counter());
    const checks: number[] = [];
    const bump = system([ResMut(Counter)], (c) => ++c.n, { output: token<number>('n') });
    const result = await ctx.execute([
      loop([bump], {
        until: (c) => {
          expect(c).toBe(ctx);
          checks.push(c.get(Counter).n);
          return c.get(Counter).n >= 3;
        },
      }),
    ]);
    expect(checks).toEqual([0, 1, 2, 3]);
    expect(result.systemsExecuted).toBe(3);
    expect(result.value).toBe(3);
    // until true at once: the body never runs
    const none = await ctx.execute([loop([bump], { until: () => true })]);
    expect(none.systemsExecuted).toBe(0);
    expect(ctx.get(Counter).n).toBe(3);
    await server.dispose();
  });

  test('the body runs at most maxIterations times; starting one more fails with SystemError and leaves no borrow', async () => {
    const { server, ctx } = await setup();
    ctx.insert(new Counter());
    const bump = system([ResMut(Counter)], (c) => {
      c.n++;
    });
    const err = (await ctx.execute([loop([bump], { until: () => false, maxIterations: 5 })]).catch((e: unknown) => e)) as SystemError;
    expect(err).toBeInstanceOf(SystemError);
    expect(err.kind).toBe('ExecutionError');
    expect(err.systemName).toBe('loop');
    expect(err.message).toMatch(/^execution error: loop: the body already ran maxIterations \(5\) times/);
    expect(ctx.get(Counter).n).toBe(5);
    expect(ctx.getMut(Counter)).toBeInstanceOf(Counter);
    // maxIterations: 0 allows no iteration at all
    await expect(ctx.execute([loop([bump], { until: () => false, maxIterations: 0 })])).rejects.toThrow(/maxIterations \(0\)/);
    expect(ctx.get(Counter).n).toBe(5);
    await server.dispose();
  });

  test('until is checked before the attempt to start one more: a loop that is done after exactly maxIterations succeeds', async () => {
    const { server, ctx } = await setup();
    ctx.insert(new Counter());
    const bump = system([ResMut(Counter)], (c) => ++c.n, { output: token<number>('n') });
    const result = await ctx.execute([loop([bump], { until: (c) => c.get(Counter).n >= 3, maxIterations: 3 })]);
    expect(result.systemsExecuted).toBe(3);
    expect(result.value).toBe(3);
    await server.dispose();
  });

  test('an async until is awaited: a promise of false continues, a promise of true stops', async () => {
    const { server, ctx } = await setup();
    ctx.insert(new Counter());
    const bump = system([ResMut(Counter)], (c) => ++c.n, { output: token<number>('n') });
    const result = await ctx.execute([loop([bump], { until: async (c) => c.get(Counter).n >= 2 })]);
    expect(result.systemsExecuted).toBe(2);
    expect(ctx.get(Counter).n).toBe(2);
    await server.dispose();
  });

  test('the default bound is 1000 iterations', async () => {
    const { server, ctx } = await setup();
    ctx.insert(new Counter());
    const bump = system([ResMut(Counter)], (c) => {
      c.n++;
    });
    await expect(ctx.execute([loop([bump], { until: () => false, name: 'forever' })])).rejects.toThrow(/^execution error: forever: .*maxIterations \(1000\)/);
    expect(ctx.get(Counter).n).toBe(1000);
    await server.dispose();
  });

  test('an until that throws is a SystemError with the thrown value as cause', async () => {
    const { server, ctx } = await setup();
    const boom = new Error('cannot decide');
    const err = (await ctx.execute([loop([system([], () => 1)], {
      until: () => {
        throw boom;
      },
    })]).catch((e: unknown) => e)) as SystemError;
    expect(err).toBeInstanceOf(SystemError);
    expect(err.kind).toBe('ExecutionError');
    expect(err.cause).toBe(boom);
    expect(err.message).toMatch(/until\(ctx\) threw after 0 iteration\(s\): cannot decide/);
    const err2 = await ctx.execute([loop([], { until: () => Promise.reject('nope') })]).catch((e: unknown) => e);
    expect(err2).toMatchObject({ name: 'SystemError', cause: 'nope' });
    await server.dispose();
  });

  test('a never-ending loop inside a parallel branch leaves no branch context alive', async () => {
    const { server, ctx } = await setup();
    const seen: Readonly<SystemContext>[] = [];
    const look = system([Res(Here)], (here) => {
      seen.push(here);
    });
    await expect(ctx.execute([parallel([loop([look], { until: () => false, maxIterations: 3 })], [look])])).rejects.toThrow(SystemError);
    expect(seen).toHaveLength(4);
    for (const c of seen) expect(c.isDisposed).toBe(true);
    expect(liveChildren(ctx)).toBe(0);
    await server.dispose();
  });
});
