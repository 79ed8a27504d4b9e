/**
 * Bug: a tool body that returned a plain value synchronously was still treated as running
 * until a later microtask, so an abort queued by the body itself (or by anything that ran
 * first) turned its finished call into `EXECUTION_ERROR` (`was aborted`). The rule is that
 * a call aborted *before its body returns* fails; once it returned, an abort changes
 * nothing. Fixed: a primitive return value is the body's return, at once. A returned
 * promise still counts as running until it settles.
 */
import { Tools } from '../../src/index.js';
import { tool, toolServer } from '../tools/helpers.js';

test('an abort right after a synchronous return leaves the result alone', async () => {
  const { server, app } = await toolServer();
  const controller = new AbortController();
  app.get(Tools).register(
    tool('sync', () => {
      queueMicrotask(() => controller.abort(new Error('too late')));
      return 'done';
    }),
  );
  const r = await app.get(Tools).execute({ callId: '1', name: 'sync', arguments: {}, signal: controller.signal });
  expect(r).toMatchObject({ isError: false, content: 'done', output: 'done' });
  await server.dispose();
});

test('an abort while a returned promise is pending still decides the call', async () => {
  const { server, app } = await toolServer();
  const controller = new AbortController();
  app.get(Tools).register(
    tool('async', () => {
      queueMicrotask(() => controller.abort(new Error('in time')));
      return new Promise<string>((resolve) => setTimeout(() => resolve('late'), 5));
    }),
  );
  const r = await app.get(Tools).execute({ callId: '2', name: 'async', arguments: {}, signal: controller.signal });
  expect(r).toMatchObject({ isError: true, error: { code: 'EXECUTION_ERROR' } });
  expect(r.content).toMatch(/was aborted: in time/);
  await server.dispose();
});
