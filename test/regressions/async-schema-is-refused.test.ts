/**
 * Issue 8 #2. Bug: a root-level `"$async": true` in a tool schema switched argument
 * validation off (ajv compiled an asynchronous validator whose promise is truthy), and
 * one invalid call left an unhandled rejection that kills the process. Fixed: `"$async"`
 * anywhere in a schema is refused at register with a TypeError naming the tool and the
 * path, and a validator's promise can never escape.
 */
import { Server, Tools, ToolsPlugin } from '../../src/index.js';

test.each([
  ['at the root', { $async: true, type: 'object', properties: { n: { type: 'number' } } }, 'parameters.$async'],
  ['in a property', { type: 'object', properties: { n: { $async: true, type: 'number' } } }, 'parameters.properties.n.$async'],
  ['set to false', { $async: false, type: 'object' }, 'parameters.$async'],
])('"$async" %s is refused at register, and nothing is rejected unhandled', async (_where, parameters, path) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const server = new Server();
    server.addPlugins(new ToolsPlugin());
    await server.finish();
    const tools = server.createContext().get(Tools);
    let ran = false;
    const register = (): unknown => tools.register({ name: 'calc', description: 'd', parameters, execute: () => (ran = true) });
    expect(register).toThrow(TypeError);
    expect(register).toThrow(`Tools.register(calc): ${path}: "$async" is refused`);
    const r = await tools.execute({ callId: '1', name: 'calc', arguments: { n: 'not a number' } });
    expect(r.error?.code).toBe('UNKNOWN_TOOL');
    expect(ran).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    await server.dispose();
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
