/**
 * Issue 11 / SPEC §11.1. Bug: `format` was not enforced (`"nope"` passed as an email) and
 * ajv printed two `console.warn` lines per format at every compile. Fixed: ajv-formats,
 * logger off: formats are enforced and nothing is printed.
 */
import { jest } from '@jest/globals';
import { Server, Tools, ToolsPlugin } from '../../src/index.js';

test('format is enforced and nothing is printed to the console', async () => {
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => jest.spyOn(console, m).mockImplementation(() => undefined));
  try {
    const server = new Server();
    server.addPlugins(new ToolsPlugin());
    await server.finish();
    const t = server.createContext().get(Tools);
    t.register({
      name: 'mail',
      description: 'd',
      parameters: { type: 'object', properties: { to: { type: 'string', format: 'email' }, link: { type: 'string', format: 'uri' } } },
      execute: () => 'sent',
    });
    expect((await t.execute({ callId: '1', name: 'mail', arguments: { to: 'a@b.co', link: 'https://x.dev' } })).content).toBe('sent');
    expect((await t.execute({ callId: '2', name: 'mail', arguments: { to: 'nope' } })).error?.code).toBe('INVALID_ARGS');
    expect((await t.execute({ callId: '3', name: 'mail', arguments: { link: 'not a uri' } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
    expect(spies.flatMap((s) => s.mock.calls)).toEqual([]);
  } finally {
    spies.forEach((s) => s.mockRestore());
  }
});
