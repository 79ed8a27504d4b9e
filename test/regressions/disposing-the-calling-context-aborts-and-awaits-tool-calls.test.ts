/**
 * Bug: disposing a turn (or its session or agent) neither stopped nor awaited a tool
 * call made through it: `dispose()` resolved while the body was still running.
 * Fixed (SPEC 10.2): the moment the disposal of the calling context (or an ancestor)
 * starts, the call is aborted: it resolves to EXECUTION_ERROR `tool "x" was aborted:
 * <reason>` and `execution.signal` aborts with a `ContextDisposedError`; the disposal then
 * awaits the body before running the context's own cleanups, so a fulfilled `dispose()`
 * means no such body is still running.
 */
import { ContextDisposedError, Server, Tools, ToolsPlugin, createScope, type ToolExecution } from '../../src/index.js';

test.each(['the turn', 'the agent above it'])('disposing %s aborts the call at once and awaits its body', async (which) => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  const events: string[] = [];
  let reason: unknown;
  app.get(Tools).register({
    name: 'fetch',
    description: 'a slow fetch that honours its signal after a while',
    parameters: { type: 'object' },
    execute: (_a: unknown, e: ToolExecution) =>
      new Promise((_resolve, reject) => {
        events.push('body started');
        e.signal.addEventListener('abort', () => {
          reason = e.signal.reason;
          events.push('body aborted');
          // cleaning up takes a while: the disposal waits for it
          setTimeout(() => {
            events.push('body settled');
            reject(new Error('stopped'));
          }, 30);
        });
      }),
  });
  const agent = createScope(app, { id: 'agent' });
  const turn = agent.ctx.child();
  turn.onDispose(() => void events.push('turn cleanup'));
  const p = turn.get(Tools).execute({ callId: '1', name: 'fetch', arguments: {} });
  await new Promise((r) => setImmediate(r));
  const disposed = which === 'the turn' ? turn.dispose() : agent.dispose();
  const r = await p;
  expect(r.error?.code).toBe('EXECUTION_ERROR');
  expect(r.error?.message).toMatch(/^tool "fetch" was aborted: .*disposal of the context at depth/);
  expect(events).toEqual(['body started', 'body aborted']);
  await disposed;
  expect(events).toEqual(['body started', 'body aborted', 'body settled', 'turn cleanup']);
  expect(reason).toBeInstanceOf(ContextDisposedError);
  await server.dispose();
});
