/**
 * Bug: `execution.signal` was `undefined` unless the caller passed a signal or the tool
 * had a `timeoutMs`, so a body could not be stopped by the disposal of its turn.
 * Fixed (SPEC 10.2): it is always an `AbortSignal` (made on first read), not aborted
 * while the call runs normally; observers see the same one.
 */
import { Events, Server, Tools, ToolsPlugin, type ToolExecution } from '../../src/index.js';

test('execution.signal is an AbortSignal for every call', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  const seen: AbortSignal[] = [];
  app.get(Tools).register({
    name: 'plain',
    description: 'no timeout',
    parameters: { type: 'object' },
    execute: (_a: unknown, e: ToolExecution) => {
      seen.push(e.signal);
      return e.signal.aborted ? 'aborted' : 'live';
    },
  });
  const observed: AbortSignal[] = [];
  app.get(Events).on('tools/result', (e: ToolExecution) => void observed.push(e.signal));
  expect((await app.get(Tools).execute({ callId: '1', name: 'plain', arguments: {} })).content).toBe('live');
  expect(seen[0]).toBeInstanceOf(AbortSignal);
  expect(observed[0]).toBe(seen[0]);
  // also for a refused call (no tool)
  await app.get(Tools).execute({ callId: '2', name: 'missing', arguments: {} });
  expect(observed[1]).toBeInstanceOf(AbortSignal);
  expect(observed[1].aborted).toBe(false);
  await server.dispose();
});
