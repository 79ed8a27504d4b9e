/**
 * Bug: a tool body that returned a plain value synchronously was still treated as running
 * until a later microtask, so an abort queued by the body itself (or by anything that ran
 * first) turned its finished call into `EXECUTION_ERROR` (`was aborted`). The rule is that
 * a call aborted *before its body returns* fails; once it returned, an abort changes
 * nothing. Fixed: a return value that is not a thenable (a primitive, a plain object, an
 * array) is the body's return, at once. A returned promise or thenable still counts as
 * running until it settles; a thenable's `then` is read once.
 */
import { Tools } from '../../src/index.js';
import { tool, toolServer } from '../tools/helpers.js';

for (const [label, value, content] of [
  ['a primitive', 'done', 'done'],
  ['a plain object', { ok: true, then: 5 }, '{"ok":true,"then":5}'],
  ['an array', [1, 2], '[1,2]'],
] as const) {
  test(`an abort right after a synchronous return of ${label} leaves the result alone`, async () => {
    const { server, app } = await toolServer();
    const controller = new AbortController();
    app.get(Tools).register(
      tool('sync', () => {
        queueMicrotask(() => controller.abort(new Error('too late')));
        return value;
      }),
    );
    const r = await app.get(Tools).execute({ callId: '1', name: 'sync', arguments: {}, signal: controller.signal });
    expect(r).toMatchObject({ isError: false, content, output: value });
    await server.dispose();
  });
}

test("a returned thenable is adopted (its then read once) and counts as running until it settles", async () => {
  const { server, app } = await toolServer();
  let reads = 0;
  const thenable = {
    get then() {
      reads++;
      return (resolve: (v: string) => void) => setTimeout(() => resolve('adopted'), 1);
    },
  };
  app.get(Tools).register(tool('thenable', () => thenable));
  const ok = await app.get(Tools).execute({ callId: '1', name: 'thenable', arguments: {} });
  expect(ok).toMatchObject({ isError: false, content: 'adopted' });
  expect(reads).toBe(1);
  const controller = new AbortController();
  app.get(Tools).register(
    tool('pending-thenable', () => {
      queueMicrotask(() => controller.abort(new Error('in time')));
      return thenable;
    }),
  );
  const aborted = await app.get(Tools).execute({ callId: '2', name: 'pending-thenable', arguments: {}, signal: controller.signal });
  expect(aborted.content).toMatch(/was aborted: in time/);
  const broken = {
    get then(): never {
      throw new Error('no then for you');
    },
  };
  app.get(Tools).register(tool('broken', () => broken));
  const failed = await app.get(Tools).execute({ callId: '3', name: 'broken', arguments: {} });
  expect(failed).toMatchObject({ isError: true, error: { code: 'EXECUTION_ERROR' } });
  expect(failed.content).toMatch(/no then for you/);
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
