/**
 * Bug: a tool body that ignored its abort kept running after its turn was disposed, and
 * nothing said so.
 * Fixed (SPEC 10.2): the disposal waits for it at most `disposeTimeoutMs`, then goes on
 * (cleanups still run) and rejects with an AggregateError naming the call.
 */
import { Server, Tools, ToolsPlugin } from '../../src/index.js';

test('a body that ignores its signal makes the disposal reject after disposeTimeoutMs, naming the call', async () => {
  const server = new Server({ disposeTimeoutMs: 30 });
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({ name: 'stuck', description: 'never settles', parameters: { type: 'object' }, execute: () => new Promise(() => undefined) });
  const turn = app.child();
  let cleaned = false;
  turn.onDispose(() => void (cleaned = true));
  const p = turn.get(Tools).execute({ callId: 'c7', name: 'stuck', arguments: {} });
  await new Promise((r) => setImmediate(r));
  const started = Date.now();
  const err = await turn.dispose().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AggregateError);
  expect((err as Error).message).toMatch(/tool "stuck" \(call c7\)/);
  expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  expect(cleaned).toBe(true);
  expect((await p).error?.code).toBe('EXECUTION_ERROR');
  await server.dispose().catch(() => undefined);
});
