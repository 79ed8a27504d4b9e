/**
 * Aborts that happen while a call runs synchronously (its body, or a guard, aborting the
 * call before it returns): the call is `EXECUTION_ERROR` (`was aborted`) at once and the
 * body's later return changes nothing; an abort after a synchronous return changes
 * nothing either.
 */
import { Tools, type SystemContext, type ToolExecution } from '../../src/index.js';
import { tool, toolServer } from './helpers.js';

test('a body that aborts its own caller signal before returning is aborted', async () => {
  const { server, app } = await toolServer();
  const ac = new AbortController();
  let after = false;
  app.get(Tools).register(
    tool('self-abort', () => {
      ac.abort(new Error('changed my mind'));
      after = true;
      return 'late';
    }),
  );
  const r = await app.get(Tools).execute({ callId: '1', name: 'self-abort', arguments: {}, signal: ac.signal });
  expect(after).toBe(true);
  expect(r).toMatchObject({ isError: true, error: { code: 'EXECUTION_ERROR' } });
  expect(r.content).toMatch(/tool "self-abort" was aborted: changed my mind/);
  expect(r.output).toBeUndefined();
  await server.dispose();
});

test('a body that starts the disposal of its calling context before returning is aborted, and the disposal awaits nothing left', async () => {
  const { server, app } = await toolServer();
  const turn = app.child();
  let disposal: Promise<void> | undefined;
  app.get(Tools).register({
    ...tool('leave'),
    execute: (_a: unknown, _e: ToolExecution, ctx?: SystemContext) => {
      disposal = (ctx as SystemContext).dispose();
      return 'late';
    },
  });
  const r = await turn.get(Tools).execute({ callId: '2', name: 'leave', arguments: {} });
  expect(r).toMatchObject({ isError: true, error: { code: 'EXECUTION_ERROR' } });
  expect(r.content).toMatch(/was aborted/);
  await disposal;
  expect(turn.isDisposed).toBe(true);
  await server.dispose();
});

test('a body that aborts and then throws: the abort decides the call', async () => {
  const { server, app } = await toolServer();
  const ac = new AbortController();
  app.get(Tools).register(
    tool('abort-then-throw', () => {
      ac.abort(new Error('first'));
      throw new Error('second');
    }),
  );
  const r = await app.get(Tools).execute({ callId: '3', name: 'abort-then-throw', arguments: {}, signal: ac.signal });
  expect(r.content).toMatch(/was aborted: first/);
  await server.dispose();
});

test('a guard that aborts the caller signal synchronously: aborted at once, the body never runs', async () => {
  const { server, app } = await toolServer();
  const ac = new AbortController();
  let ran = false;
  app.get(Tools).register(tool('guarded', () => void (ran = true)));
  app.get(Tools).guard(() => {
    ac.abort(new Error('policy pulled the plug'));
    return undefined;
  });
  const r = await app.get(Tools).execute({ callId: '4', name: 'guarded', arguments: {}, signal: ac.signal });
  expect(r.content).toMatch(/was aborted: policy pulled the plug/);
  expect(ran).toBe(false);
  await server.dispose();
});

test('every call leaves the in-flight groups: disposing right after finds nothing running', async () => {
  const { server, app } = await toolServer();
  const turn = app.child();
  const ac = new AbortController();
  app.get(Tools).register(tool('plain', () => 'ok'));
  app.get(Tools).register(
    tool('aborting', () => {
      ac.abort('x');
      return 'late';
    }),
  );
  const t = turn.get(Tools);
  expect((await t.execute({ callId: 'a', name: 'plain', arguments: {} })).content).toBe('ok');
  expect((await t.execute({ callId: 'b', name: 'aborting', arguments: {}, signal: ac.signal })).isError).toBe(true);
  // a call still counted in flight would make this disposal wait for its deadline
  const started = Date.now();
  await turn.dispose();
  expect(Date.now() - started).toBeLessThan(1000);
  await server.dispose();
});
