import 'reflect-metadata';
import { createScope, Out, out, ParamError, Res, ResMut, res, resMut, system, SystemError, token, Unit } from '../../src/index.js';
import { AppConfig, ConversationHistory, Scratchpad, setup, Summary } from './helpers.js';

const Count = token<number>('Count');

test('ctx.run fetches params, calls, stores the output under the output option and resolves to it', async () => {
  const { server, ctx } = await setup();
  ctx.insert(new ConversationHistory());
  ctx.get(ConversationHistory).messages.push('hi');
  const summarize = system([Res(AppConfig), Res(ConversationHistory)], async (config, history) => `${config.agentName}: ${history.messages.length} messages so far`, {
    name: 'summarize',
    output: Summary,
  });
  const out = await ctx.run(summarize);
  expect(out).toBe('claude: 1 messages so far');
  expect(ctx.outputs.get(Summary)).toBe(out);
  await server.dispose();
});

test('the decorator form from the SPEC runs on a turn context and mutates its ResMut', async () => {
  const { server, ctx } = await setup();
  class TurnSystems {
    @system()
    static async takeNotes(@res(AppConfig) config: Res<AppConfig>, @resMut(Scratchpad) scratch: ResMut<Scratchpad>) {
      scratch.notes.push(`Turn started for ${config.agentName}`);
    }
  }
  const turn = ctx.child().child();
  turn.insert(new Scratchpad());
  await expect(turn.run(TurnSystems.takeNotes)).resolves.toBeUndefined();
  expect(turn.get(Scratchpad).notes).toEqual(['Turn started for claude']);
  expect(ctx.get(Scratchpad).notes).toEqual([]);
  expect(turn.outputs.has(Unit)).toBe(true);
  expect(turn.outputs.takeLast()).toEqual({ token: Unit, value: undefined });
  await server.dispose();
});

test('static systems run with the class as this', async () => {
  const { server, ctx } = await setup();
  class S {
    static prefix = 'p:';
    @system()
    static run(@res(AppConfig) c: AppConfig) {
      return this.prefix + c.agentName;
    }
  }
  await expect(ctx.run(S.run)).resolves.toBe('p:claude');
  await server.dispose();
});

describe('output key', () => {
  test('the returned value class, else Unit for undefined; the last one is takeLast', async () => {
    const { server, ctx } = await setup();
    await ctx.run(system([Res(AppConfig)], (c) => new Summary(c.agentName)));
    expect(ctx.outputs.get(Summary).text).toBe('claude');
    await ctx.run(system([], () => undefined));
    expect(ctx.outputs.get(Unit)).toBeUndefined();
    expect(ctx.outputs.has(Unit)).toBe(true);
    expect(ctx.outputs.takeLast()?.token).toBe(Unit);
    await server.dispose();
  });

  test('a primitive without an output option is stored under its wrapper class (String, Number, Boolean)', async () => {
    const { server, ctx } = await setup();
    await ctx.run(system([], () => 'text'));
    await ctx.run(system([], () => 3));
    await ctx.run(system([], async () => true));
    expect(ctx.outputs.get(String)).toBe('text');
    expect(ctx.outputs.get(Number)).toBe(3);
    expect(ctx.outputs.get(Boolean)).toBe(true);
    await server.dispose();
  });

  test('the output option wins over the value class', async () => {
    const { server, ctx } = await setup();
    await ctx.run(system([], () => 5, { output: Count }));
    expect(ctx.outputs.get(Count)).toBe(5);
    expect(ctx.outputs.has(Number)).toBe(false);
    await server.dispose();
  });

  test('null (no class) without an output option rejects with an ExecutionError that says to declare one, and stores nothing', async () => {
    const { server, ctx } = await setup();
    const sys = system([ResMut(Scratchpad)], () => null, { name: 'nothing' });
    const err = (await ctx.run(sys).catch((e: unknown) => e)) as SystemError;
    expect(err).toBeInstanceOf(SystemError);
    expect(err.kind).toBe('ExecutionError');
    expect(err.message).toMatch(/^execution error: nothing: it returned null.*output: MY_TOKEN/);
    expect(ctx.outputs.size).toBe(0);
    expect(() => ctx.getMut(Scratchpad)).not.toThrow();
    await server.dispose();
  });
});

describe('failures', () => {
  test('parameters are fetched in declaration order; the first failure is the ParamError cause', async () => {
    const { server, ctx } = await setup();
    const A = token<string>('A');
    const B = token<string>('B');
    const sys = system([Res(AppConfig), Res(A), ResMut(B)], () => 1, { name: 'ordered' });
    const err = (await ctx.run(sys).catch((e: unknown) => e)) as SystemError;
    expect(err).toBeInstanceOf(SystemError);
    expect(err.kind).toBe('ParamError');
    expect(err.systemName).toBe('ordered');
    expect(err.message.startsWith('parameter error: ')).toBe(true);
    expect(err.cause).toBeInstanceOf(ParamError);
    expect((err.cause as ParamError).token).toBe(A);
    expect((err.cause as ParamError).kind).toBe('ResourceNotFound');
    expect(err.message).toMatch(/resource not found: A/);
    ctx.insert(A, 'a');
    const err2 = (await ctx.run(sys).catch((e: unknown) => e)) as SystemError;
    expect((err2.cause as ParamError).token).toBe(B);
    await server.dispose();
  });

  test('ResMut of a parent local is ResourceNotFound saying ResMut never walks up', async () => {
    const { server, ctx } = await setup();
    const err = (await ctx.child().run(system([ResMut(Scratchpad)], () => 1)).catch((e: unknown) => e)) as SystemError;
    expect((err.cause as ParamError).kind).toBe('ResourceNotFound');
    expect(err.message).toMatch(/ResMut never walks up/);
    await server.dispose();
  });

  test('Out reads this context outputs only, optional yields undefined', async () => {
    const { server, ctx } = await setup();
    const read = system([Out(Count)], (n) => n + 1, { output: Count });
    const err = (await ctx.run(read).catch((e: unknown) => e)) as SystemError;
    expect((err.cause as ParamError).kind).toBe('OutputNotFound');
    ctx.outputs.insert(Count, 1);
    await expect(ctx.run(read)).resolves.toBe(2);
    await expect(ctx.child().run(read)).rejects.toThrow(/output not found: Count/);
    await expect(ctx.child().run(system([Out(Count, { optional: true })], (n) => n ?? 'none'))).resolves.toBe('none');
    await server.dispose();
  });

  test('optional Res yields undefined when missing, and the value when present', async () => {
    const { server, ctx } = await setup();
    const T = token<string>('T');
    const sys = system([Res(T, { optional: true })], (v) => v ?? 'missing');
    await expect(ctx.run(sys)).resolves.toBe('missing');
    ctx.insert(T, 'here');
    await expect(ctx.child().run(sys)).resolves.toBe('here');
    await server.dispose();
  });

  test('decorated optional parameters yield undefined when missing, and the value when present', async () => {
    const { server, ctx } = await setup();
    const T = token<string>('T');
    class S {
      @system()
      static run(@res(T, { optional: true }) t: string | undefined, @out(Count, { optional: true }) n: number | undefined) {
        return `${t ?? 'no T'}/${n ?? 'no Count'}`;
      }
    }
    await expect(ctx.run(S.run)).resolves.toBe('no T/no Count');
    ctx.insert(T, 'T');
    ctx.outputs.insert(Count, 7);
    await expect(ctx.run(S.run)).resolves.toBe('T/7');
    await server.dispose();
  });

  test('a throw in the body is an ExecutionError with the thrown error as cause', async () => {
    const { server, ctx } = await setup();
    const boom = new Error('boom');
    const sync = system([], () => {
      throw boom;
    }, { name: 'syncThrow' });
    const err = (await ctx.run(sync).catch((e: unknown) => e)) as SystemError;
    expect(err.kind).toBe('ExecutionError');
    expect(err.systemName).toBe('syncThrow');
    // the SPEC'd prefix, the system, the thrown message, then the context it ran on
    expect(err.message).toBe('execution error: syncThrow: boom (thrown by its body, running on the context at depth 0)');
    expect(err.cause).toBe(boom);
    const rejecting = system([], async () => {
      await Promise.resolve();
      throw boom;
    }, { name: 'rejecting' });
    await expect(ctx.run(rejecting)).rejects.toMatchObject({ kind: 'ExecutionError', cause: boom });
    // a scoped context (an agent's, say) is named by its scope
    const scope = createScope(ctx.child(), { id: 'researcher' });
    await expect(scope.ctx.run(rejecting)).rejects.toThrow(
      'execution error: rejecting: boom (thrown by its body, running on the context at depth 2 (scope researcher))',
    );
    await server.dispose();
  });

  test('a thrown non-Error is still a SystemError ExecutionError, describing the value', async () => {
    const { server, ctx } = await setup();
    const sys = system([ResMut(Scratchpad)], () => {
      throw 'a string';
    }, { name: 'weird' });
    const err = (await ctx.run(sys).catch((e: unknown) => e)) as SystemError;
    expect(err).toBeInstanceOf(SystemError);
    expect(err.kind).toBe('ExecutionError');
    expect(err.message).toMatch(/^execution error: weird: threw a non-Error value: the string "a string"/);
    expect(err.cause).toBe('a string');
    const rej = system([ResMut(Scratchpad)], () => Promise.reject(42));
    await expect(ctx.run(rej)).rejects.toMatchObject({ kind: 'ExecutionError', cause: 42 });
    expect(ctx.get(Scratchpad)).toBeInstanceOf(Scratchpad); // no write borrow left behind
    expect(ctx.outputs.size).toBe(0);
    await server.dispose();
  });

  test('ctx.run on a disposed context rejects with ContextDisposedError (SPEC 10.7: never a synchronous throw)', async () => {
    const { server, ctx } = await setup();
    const child = ctx.child();
    await child.dispose();
    await expect(child.run(system([], () => 1))).rejects.toThrow(/disposed/);
    await server.dispose();
  });

  test('a context disposed while an async system runs: its disposal awaits the run, whose output can not be stored, so the run rejects', async () => {
    const { server, ctx } = await setup();
    const child = ctx.child();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const p = child.run(system([Res(AppConfig)], async () => {
      await held;
      return 1;
    }, { name: 'late' }));
    const disposing = child.dispose();
    let disposed = false;
    void disposing.then(() => (disposed = true));
    await new Promise((r) => setImmediate(r));
    expect(disposed).toBe(false); // quiescence: the disposal waits for the running system
    release();
    await expect(p).rejects.toThrow(/^execution error: late: its output could not be stored/);
    await disposing;
    await server.dispose();
  });
});
