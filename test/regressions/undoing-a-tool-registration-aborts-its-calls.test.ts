/**
 * Bug: unregistering a tool (its disposer) left its in-flight calls running with no way
 * for the body to know, e.g. an MCP call kept going after the MCP mount was disposed.
 * Fixed (SPEC 10.2): undoing a registration aborts every in-flight call of that tool:
 * the call resolves to EXECUTION_ERROR `tool "x" was aborted: <reason>` and
 * `execution.signal` aborts. Other tools' calls are untouched.
 */
import { Server, Tools, ToolsPlugin, type ToolExecution } from '../../src/index.js';

test("a tool's disposer aborts its in-flight calls and only those", async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  const signals: Record<string, AbortSignal> = {};
  const waiting = (name: string) => ({
    name,
    description: name,
    parameters: { type: 'object' },
    execute: (_a: unknown, e: ToolExecution) => {
      signals[name] = e.signal;
      return new Promise((resolve, reject) => {
        e.signal.addEventListener('abort', () => reject(e.signal.reason));
        setTimeout(() => resolve(`${name} done`), 50);
      });
    },
  });
  const off = app.get(Tools).register(waiting('mcp_search'));
  app.get(Tools).register(waiting('other'));
  const p = app.get(Tools).execute({ callId: '1', name: 'mcp_search', arguments: {} });
  const q = app.get(Tools).execute({ callId: '2', name: 'other', arguments: {} });
  await new Promise((r) => setImmediate(r));
  off();
  const r = await p;
  expect(r.error?.code).toBe('EXECUTION_ERROR');
  expect(r.error?.message).toMatch(/^tool "mcp_search" was aborted: the registration of tool "mcp_search" was undone/);
  expect(signals.mcp_search.aborted).toBe(true);
  expect((await q).content).toBe('other done');
  expect(signals.other.aborted).toBe(false);
  await server.dispose();
});
