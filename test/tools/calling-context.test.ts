/**
 * SPEC 10.1 for tools: the body, guards and `Approval` receive the calling context (the
 * context whose view `execute` was called through); a `toolSystem` body fetches its
 * parameters from it.
 */
import { jest } from '@jest/globals';
import {
  Approval,
  Events,
  ParamError,
  Res,
  ResMut,
  Server,
  Tools,
  ToolsPlugin,
  createScope,
  toolSystem,
  type SystemContext,
  type ToolExecution,
} from '../../src/index.js';
import { tool, toolServer } from './helpers.js';

class Turn {
  constructor(readonly id: string) {}
}
class Scratch {
  notes: string[] = [];
}
class Missing {}

describe('the calling context', () => {
  test('a global tool body gets the turn it was called through and reads its locals; the execution holds no context', async () => {
    const { server, app } = await toolServer();
    const seen: SystemContext[] = [];
    app.get(Tools).register({
      ...tool('whoami'),
      execute: (_a: unknown, _e: ToolExecution, ctx: SystemContext) => {
        seen.push(ctx);
        return ctx.get(Turn).id;
      },
    });
    const agent = createScope(app, { id: 'agent' });
    const turn = agent.ctx.child();
    turn.insert(new Turn('t1'));
    const r = await turn.get(Tools).execute({ callId: '1', name: 'whoami', arguments: {} });
    expect(r.content).toBe('t1');
    expect(seen[0]).toBe(turn);
    const other = agent.ctx.child();
    other.insert(new Turn('t2'));
    expect((await other.get(Tools).execute({ callId: '2', name: 'whoami', arguments: {} })).content).toBe('t2');
    expect(seen[1]).toBe(other);
    await server.dispose();
  });

  test('guards, Approval and the tools/* waterfalls receive the calling context', async () => {
    const got: Record<string, unknown> = {};
    const server = new Server();
    server.addPlugins(new ToolsPlugin());
    server.insertGlobal(Approval, {
      approve: (_e: ToolExecution, _r: string | undefined, ctx: SystemContext) => {
        got.approve = ctx;
        return true;
      },
    });
    await server.finish();
    const app = server.createContext();
    const turn = app.child();
    app.get(Tools).register(tool('x'));
    app.get(Tools).guard((_e, ctx) => {
      got.guard = ctx;
      return undefined;
    });
    const ev = app.get(Events);
    ev.on('tools/pre-execute', (_d: unknown, _e: ToolExecution, ctx: SystemContext) => {
      got.pre = ctx;
      return { kind: 'ask' };
    });
    ev.on('tools/execute', (next: (e: ToolExecution, c?: SystemContext) => Promise<unknown>, _e: ToolExecution, ctx: SystemContext) => {
      got.exec = ctx;
      return (e: ToolExecution, c?: SystemContext) => {
        got.call = c;
        return next(e, c);
      };
    });
    ev.on('tools/post-execute', (d, _e, _r, ctx) => {
      got.post = ctx;
      return d;
    });
    const r = await turn.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(r.content).toBe('x');
    expect(got).toEqual({ guard: turn, approve: turn, pre: turn, exec: turn, call: turn, post: turn });
    for (const v of Object.values(got)) expect(v).toBe(turn);
    await server.dispose();
  });

  test('the seed call function refuses a context other than the calling one', async () => {
    const { server, app } = await toolServer();
    const body = jest.fn(() => 'ran');
    app.get(Tools).register(tool('x', body));
    const stranger = app.child();
    app.get(Events).on('tools/execute', (next: (e: ToolExecution, c?: SystemContext) => Promise<unknown>) => (e: ToolExecution) => next(e, stranger));
    const r = await app.child().get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(r.error?.code).toBe('EXECUTION_ERROR');
    expect(r.error?.message).toMatch(/calling context/);
    expect(body).not.toHaveBeenCalled();
    await server.dispose();
  });
});

describe('tool systems', () => {
  test('parameters are fetched from the calling context; borrows are held while the body runs', async () => {
    const { server, app } = await toolServer();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    app.get(Tools).register({
      ...tool('note'),
      execute: toolSystem([Res(Turn), ResMut(Scratch)], async (turn: Turn, scratch: Scratch, args: unknown) => {
        await gate;
        scratch.notes.push(`${turn.id}:${JSON.stringify(args)}`);
        return scratch.notes.length;
      }),
    });
    const agent = app.child();
    agent.insert(new Turn('t1'));
    const turn = agent.child();
    const scratch = new Scratch();
    turn.insert(scratch);
    const p = turn.get(Tools).execute({ callId: '1', name: 'note', arguments: { q: 'a' } });
    await new Promise((r) => setImmediate(r));
    // the write borrow on the turn's Scratch is held while the body runs
    expect(() => turn.getMut(Scratch)).toThrow(ParamError);
    release();
    const r = await p;
    expect(r).toMatchObject({ content: '1', isError: false, output: 1 });
    expect(scratch.notes).toEqual(['t1:{"q":"a"}']);
    expect(turn.getMut(Scratch)).toBe(scratch);
    await server.dispose();
  });

  test('a parameter that can not be fetched is EXECUTION_ERROR naming it, and the body does not run', async () => {
    const { server, app } = await toolServer();
    const body = jest.fn(() => 'ran');
    app.get(Tools).register({ ...tool('x'), execute: toolSystem([Res(Missing)], body) });
    const r = await app.child().get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('EXECUTION_ERROR');
    expect(r.error?.message).toMatch(/Res\(Missing\)/);
    expect(r.output).toBeUndefined();
    expect(body).not.toHaveBeenCalled();
    await server.dispose();
  });
});

