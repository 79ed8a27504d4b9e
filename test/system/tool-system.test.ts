/**
 * SPEC 10.1 (contract C5): `toolSystem(params, fn, options?)` returns a tool body
 * `(args, execution, ctx)` that fetches its parameters from the calling context `ctx`,
 * with the borrows held while it runs (§4, and §10.5 when it waits). Called directly
 * here, as the tools pipeline calls a tool's `execute`.
 */
import 'reflect-metadata';
import {
  ContextDisposedError,
  Out,
  ParamError,
  Res,
  ResMut,
  Server,
  system,
  SystemError,
  token,
  toolSystem,
  type SystemContext,
  type ToolExecution,
} from '../../src/index.js';
import { AppConfig, gate, Scratchpad } from './helpers.js';

class History {
  messages: string[] = ['hello'];
}
const Plan = token<string>('Plan');

function execution(name = 'note', callId = 'c1', signal?: AbortSignal): ToolExecution {
  return Object.freeze({ name, callId, signal, arguments: undefined, scope: undefined, parent: undefined, token: Object.freeze({}) }) as unknown as ToolExecution;
}

async function setup(options?: ConstructorParameters<typeof Server>[0]): Promise<{ server: Server; session: SystemContext; turn: SystemContext }> {
  const server = new Server(options);
  server.insertGlobal(new AppConfig('claude'));
  await server.finish();
  const agent = server.createContext();
  const session = agent.child();
  session.insert(new History());
  const turn = session.child();
  turn.insert(new Scratchpad());
  return { server, session, turn };
}

describe('toolSystem', () => {
  test('fetches Res / ResMut / Out from the calling context, then passes args and execution', async () => {
    const { server, turn } = await setup();
    turn.outputs.insert(Plan, 'the plan');
    const note = toolSystem([Res(History), ResMut(Scratchpad), Res(AppConfig), Out(Plan)], (history, scratch, config, plan, args: { text: string }, exec) => {
      scratch.notes.push(`${exec.callId}: ${args.text}`);
      return `${config.agentName} saw ${history.messages.length} message(s) and ${plan}`;
    });
    expect(typeof note).toBe('function');
    expect(note.params.map((p) => p.token)).toEqual([History, Scratchpad, AppConfig, Plan]);
    await expect(note({ text: 'remember' }, execution(), turn)).resolves.toBe('claude saw 1 message(s) and the plan');
    expect(turn.get(Scratchpad).notes).toEqual(['c1: remember']);
    // it stores no output: it is a tool body, not a system run
    expect(turn.outputs.size).toBe(1);
    await server.dispose();
  });

  test('holds its borrows while the body runs: a conflicting system fails at once, and names the call', async () => {
    const { server, turn } = await setup();
    const g = gate();
    const slow = toolSystem([ResMut(Scratchpad)], async (scratch) => {
      await g.promise;
      scratch.notes.push('done');
      return 'ok';
    });
    const call = slow({}, execution('slow', 'c7'), turn);
    const err = await turn.run(system([Res(Scratchpad)], () => 1, { name: 'reader' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemError);
    expect(((err as SystemError).cause as ParamError).message).toContain('tool "slow" (call c7) (ResMut)');
    g.open();
    await expect(call).resolves.toBe('ok');
    expect(turn.getMut(Scratchpad).notes).toEqual(['done']);
    await server.dispose();
  });

  test('a parameter that can not be fetched rejects naming the parameter, and the body does not run', async () => {
    const { server, session, turn } = await setup();
    let ran = 0;
    const body = toolSystem([Res(History), ResMut(Scratchpad)], () => ++ran);
    // from the session, Scratchpad is not an own local
    const err = await body({}, execution('note', 'c2'), session).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemError);
    expect((err as SystemError).kind).toBe('ParamError');
    expect((err as SystemError).message).toMatch(/^parameter error: tool "note" \(call c2\) → parameter #1 ResMut\(Scratchpad\): resource not found: Scratchpad/);
    expect(((err as SystemError).cause as ParamError).kind).toBe('ResourceNotFound');
    // a borrow conflict is a parameter failure too
    const g = gate();
    const holder = turn.run(system([ResMut(Scratchpad)], async () => {
      await g.promise;
    }, { name: 'holder' }));
    const conflict = await body({}, execution('note', 'c3'), turn).catch((e: unknown) => e);
    expect((conflict as SystemError).message).toMatch(/parameter #1 ResMut\(Scratchpad\): borrow conflict: Scratchpad/);
    expect(ran).toBe(0);
    // the earlier parameter's read borrow was released: the session can take History for writing
    expect(session.getMut(History)).toBeInstanceOf(History);
    g.open();
    await holder;
    await server.dispose();
  });

  test("waits like a system on a 'wait' server, or with { borrows: 'wait' }", async () => {
    for (const [serverMode, option] of [['wait', undefined], ['fail', 'wait']] as const) {
      const { server, turn } = await setup({ borrows: serverMode });
      const g = gate();
      const holder = turn.run(system([ResMut(Scratchpad)], async (s) => {
        await g.promise;
        s.notes.push('holder');
      }, { name: 'holder', borrows: 'fail' }));
      const body = toolSystem([ResMut(Scratchpad)], (s) => s.notes.push('tool'), { borrows: option });
      const call = body({}, execution(), turn);
      await new Promise((r) => setImmediate(r));
      g.open();
      await holder;
      await expect(call).resolves.toBe(2);
      expect(turn.get(Scratchpad).notes).toEqual(['holder', 'tool']);
      await server.dispose();
    }
  });

  test('a waiting call stops waiting when its execution signal aborts (its body never starts later)', async () => {
    const { server, turn } = await setup({ borrows: 'wait' });
    const g = gate();
    const holder = turn.run(system([ResMut(Scratchpad)], async () => {
      await g.promise;
    }, { name: 'holder' }));
    let ran = false;
    const body = toolSystem([ResMut(Scratchpad)], () => (ran = true));
    const ac = new AbortController();
    const call = body({}, execution('t', 'c9', ac.signal), turn).catch((e: unknown) => e);
    ac.abort(new Error('timed out'));
    expect(((await call) as Error).message).toBe('timed out');
    g.open();
    await holder;
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(false);
    expect(turn.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test("the body's throw or rejection is passed on unchanged, and releases the borrows", async () => {
    const { server, turn } = await setup();
    const boom = new Error('boom');
    const sync = toolSystem([ResMut(Scratchpad)], () => {
      throw boom;
    });
    const async_ = toolSystem([ResMut(Scratchpad)], async () => {
      throw boom;
    });
    await expect(sync({}, execution(), turn)).rejects.toBe(boom);
    await expect(async_({}, execution(), turn)).rejects.toBe(boom);
    expect(turn.getMut(Scratchpad)).toBeInstanceOf(Scratchpad);
    await server.dispose();
  });

  test('every failure of a call rejects; bad definitions throw at once', async () => {
    const { server, turn } = await setup();
    const body = toolSystem([Res(History)], () => 1);
    await expect(body({}, execution(), 'not a context' as never)).rejects.toThrow(/must be the calling SystemContext/);
    const child = turn.child();
    await child.dispose();
    await expect(body({}, execution(), child)).rejects.toBeInstanceOf(ContextDisposedError);
    expect(() => toolSystem('x' as never, () => 1)).toThrow(TypeError);
    expect(() => toolSystem([], 'x' as never)).toThrow(TypeError);
    expect(() => toolSystem([Res(History), ResMut(History)], () => 1)).toThrow(/declares both Res\(History\) and ResMut\(History\)/);
    expect(() => toolSystem([{} as never], () => 1)).toThrow(/not a descriptor/);
    expect(() => toolSystem([], () => 1, { borrows: 'later' as never })).toThrow(/borrows must be 'fail' or 'wait'/);
    await server.dispose();
  });

  test('keeps the parameters option for the registration', () => {
    const parameters = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } as const;
    const body = toolSystem([], (args) => args.text, { parameters });
    expect(body.parameters).toBe(parameters);
    expect(toolSystem([], () => 1).parameters).toBeUndefined();
  });
});
