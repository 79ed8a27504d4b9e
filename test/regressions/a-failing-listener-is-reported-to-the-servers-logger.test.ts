/**
 * A failing `tools/result` observer was reported with `console.warn`, whatever logging the
 * application used. Fixed: it goes to `new Server({ logger })` (the console only by default).
 */
import { jest } from '@jest/globals';
import { Events, Server, Tools, ToolsPlugin } from '../../src/index.js';

test("a failing tools/result observer goes to the server's logger, not to the console", async () => {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const reported: unknown[][] = [];
  try {
    const server = new Server({ logger: { warn: (...a: unknown[]) => void reported.push(a), error: () => undefined } });
    server.addPlugins(new ToolsPlugin());
    await server.finish();
    const app = server.createContext();
    app.get(Tools).register({ name: 'x', description: 'x', parameters: { type: 'object' }, execute: () => 'ok' });
    const crash = new Error('observer crashed');
    app.get(Events).on('tools/result', () => {
      throw crash;
    });
    await app.get(Tools).execute({ callId: '1', name: 'x', arguments: {} });
    expect(reported).toEqual([['[polestar] a tools/result observer of "x" (call 1) failed', crash]]);
    expect(warn).not.toHaveBeenCalled();
    await server.dispose();
  } finally {
    warn.mockRestore();
  }
});
