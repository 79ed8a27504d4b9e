/**
 * Bug (issue 8 #8): a caller's `AbortSignal` missed the policy phase. An already-aborted
 * call still ran `tools/pre-execute`, asked `Approval` (and hung while it was pending)
 * before the signal was looked at.
 * Fixed (SPEC 10.2): an already-aborted call settles at once with EXECUTION_ERROR
 * `tool "x" was aborted: <reason>`; no policy listener, Approval, guard or body runs.
 */
import { jest } from '@jest/globals';
import { Approval, Events, Server, Tools, ToolsPlugin } from '../../src/index.js';

test('an already-aborted call never reaches tools/pre-execute, Approval, guards or the body', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  const approve = jest.fn(() => new Promise<boolean>(() => undefined));
  server.insertGlobal(Approval, { approve });
  await server.finish();
  const app = server.createContext();
  const body = jest.fn(() => 'ran');
  const guard = jest.fn(() => undefined);
  const pre = jest.fn(() => ({ kind: 'ask' as const, reason: 'refunds need a human' }));
  app.get(Tools).register({ name: 'refund', description: 'refund', parameters: { type: 'object' }, execute: body });
  app.get(Tools).guard(guard);
  app.get(Events).on('tools/pre-execute', pre);
  const r = await app.get(Tools).execute({ callId: '1', name: 'refund', arguments: {}, signal: AbortSignal.abort(new Error('user left')) });
  expect(r).toEqual({
    callId: '1',
    content: 'Error: tool "refund" was aborted: user left',
    isError: true,
    error: { code: 'EXECUTION_ERROR', message: 'tool "refund" was aborted: user left' },
  });
  expect(pre).not.toHaveBeenCalled();
  expect(approve).not.toHaveBeenCalled();
  expect(guard).not.toHaveBeenCalled();
  expect(body).not.toHaveBeenCalled();
  await server.dispose();
});
