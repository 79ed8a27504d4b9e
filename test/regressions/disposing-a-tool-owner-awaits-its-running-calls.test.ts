/**
 * Bug: disposing the context that owns a tool's registration (an MCP mount's context, an
 * agent) resolved while calls of that tool made through *other* contexts were still
 * running, so the owner closed resources under a running body.
 * Fixed (SPEC 10.2): the owner's disposal aborts and then awaits every in-flight call of
 * the tools it (or a descendant) registered, before running its own cleanups.
 */
import { Server, Tools, ToolsPlugin, type ToolExecution } from '../../src/index.js';

test("the owner's disposal aborts a call made through another context and awaits its body before its cleanups", async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  const events: string[] = [];
  const mount = app.child();
  mount.onDispose(() => void events.push('client closed'));
  mount.child().get(Tools).register({
    name: 'remote',
    description: 'a call on a client the mount owns',
    parameters: { type: 'object' },
    execute: (_a: unknown, e: ToolExecution) =>
      new Promise((resolve) => {
        e.signal.addEventListener('abort', () =>
          setTimeout(() => {
            events.push('call finished');
            resolve('late');
          }, 20),
        );
      }),
  });
  const turn = app.child();
  const p = turn.get(Tools).execute({ callId: '1', name: 'remote', arguments: {} });
  await new Promise((r) => setImmediate(r));
  await mount.dispose();
  expect(events).toEqual(['call finished', 'client closed']);
  expect((await p).error?.message).toMatch(/^tool "remote" was aborted: /);
  expect(turn.isDisposed).toBe(false);
  await server.dispose();
});
