/**
 * The borrow runner behind `ctx.run`, tool systems and `ctx.withMut` / `ctx.withRes`:
 * a parameter that can not be fetched reads the same way whichever runs it
 * (`parameter error: <who> → parameter #<i> ResMut(T): <why>`), under the `'fail'` rule,
 * under the `'wait'` rule and after a wait timed out; and every runner gives its borrows
 * back, whether its work returned, threw or rejected.
 */
import 'reflect-metadata';
import { ParamError, Res, ResMut, Server, system, SystemError, token, toolSystem, type SystemContext, type ToolExecution } from '../../src/index.js';
import { AppConfig, gate, Scratchpad } from './helpers.js';

const Missing = token<string>('Missing');

function execution(name: string, callId: string): ToolExecution {
  return Object.freeze({ name, callId, arguments: undefined, scope: undefined, parent: undefined, token: Object.freeze({}) }) as unknown as ToolExecution;
}

async function setup(options?: ConstructorParameters<typeof Server>[0]): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server(options);
  server.insertGlobal(new AppConfig('claude'));
  await server.finish();
  const ctx = server.createContext();
  ctx.insert(new Scratchpad());
  return { server, ctx };
}

function failureOf(err: unknown): SystemError {
  expect(err).toBeInstanceOf(SystemError);
  expect((err as SystemError).kind).toBe('ParamError');
  expect((err as SystemError).cause).toBeInstanceOf(ParamError);
  return err as SystemError;
}

describe.each(['fail', 'wait'] as const)("one message for a parameter that can not be fetched (borrows: '%s')", (borrows) => {
  test('ctx.run names the system and the parameter', async () => {
    const { server, ctx } = await setup({ borrows });
    const err = failureOf(await ctx.run(system([Res(AppConfig), Res(Missing)], () => 1, { name: 'needy' })).catch((e: unknown) => e));
    expect(err.message).toMatch(/^parameter error: system "needy" → parameter #1 Res\(Missing\): resource not found: Missing/);
    expect(err.systemName).toBe('needy');
    await server.dispose();
  });

  test('a tool system names the call and the parameter', async () => {
    const { server, ctx } = await setup({ borrows });
    const body = toolSystem([Res(AppConfig), Res(Missing)], () => 1);
    const err = failureOf(await body({}, execution('lookup', 'c7'), ctx).catch((e: unknown) => e));
    expect(err.message).toMatch(/^parameter error: tool "lookup" \(call c7\) → parameter #1 Res\(Missing\): resource not found: Missing/);
    await server.dispose();
  });

  test('a conflict on the fifth parameter is numbered as such', async () => {
    const { server, ctx } = await setup({ borrows, borrowTimeoutMs: 20 });
    const g = gate();
    const holder = ctx.run(system([ResMut(Scratchpad)], async () => g.promise, { name: 'holder' }));
    const five = system([Res(AppConfig), Res(AppConfig), Res(AppConfig), Res(AppConfig), Res(Scratchpad)], () => 1, { name: 'five' });
    const err = failureOf(await ctx.run(five).catch((e: unknown) => e));
    expect(err.message).toMatch(/^parameter error: system "five" → parameter #4 Res\(Scratchpad\): borrow conflict: Scratchpad/);
    g.open();
    await holder;
    await server.dispose();
  });
});

test("a wait that timed out reads the same way for ctx.run and a tool system; withMut rejects with the BorrowConflict itself", async () => {
  const { server, ctx } = await setup({ borrows: 'wait', borrowTimeoutMs: 20 });
  const g = gate();
  const holder = ctx.run(system([ResMut(Scratchpad)], async () => g.promise, { name: 'holder' }));
  const run = failureOf(await ctx.run(system([Res(AppConfig), Res(Scratchpad)], () => 1, { name: 'reader' })).catch((e: unknown) => e));
  expect(run.message).toMatch(/^parameter error: system "reader" → parameter #1 Res\(Scratchpad\): borrow conflict: Scratchpad \(system "reader" waited 20 ms/);
  const tool = failureOf(await toolSystem([Res(Scratchpad)], () => 1)({}, execution('peek', 'c1'), ctx).catch((e: unknown) => e));
  expect(tool.message).toMatch(/^parameter error: tool "peek" \(call c1\) → parameter #0 Res\(Scratchpad\): borrow conflict: Scratchpad \(tool "peek" \(call c1\) waited 20 ms/);
  const withRes = await ctx.withRes(Scratchpad, () => 1).catch((e: unknown) => e);
  expect(withRes).toBeInstanceOf(ParamError);
  expect((withRes as ParamError).message).toMatch(/^borrow conflict: Scratchpad \(withRes\(Scratchpad\) callback waited 20 ms/);
  g.open();
  await holder;
  await server.dispose();
});

describe.each(['fail', 'wait'] as const)("every runner gives its borrows back (borrows: '%s')", (borrows) => {
  const outcomes: Record<'returned' | 'threw' | 'resolved' | 'rejected', () => unknown> = {
    returned: () => 1,
    threw: () => {
      throw new Error('boom');
    },
    resolved: async () => 1,
    rejected: async () => {
      throw new Error('boom');
    },
  };

  test.each(Object.keys(outcomes) as (keyof typeof outcomes)[])('when the work %s', async (outcome) => {
    const { server, ctx } = await setup({ borrows });
    const fn = outcomes[outcome];
    await ctx.run(system([ResMut(Scratchpad)], fn, { name: 'work', output: token<number>('Out') })).catch(() => undefined);
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await toolSystem([ResMut(Scratchpad)], fn)({}, execution('work', 'c1'), ctx).catch(() => undefined);
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await ctx.withMut(Scratchpad, fn).catch(() => undefined);
    expect(ctx.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });
});
