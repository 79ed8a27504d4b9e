/**
 * Issue 11. Bug: MCP SDK 2.x servers stamp `"$schema": "https://json-schema.org/draft/2020-12/schema"`
 * (MCP's default dialect), and polestar's draft-07 ajv refused every such tool with a raw
 * `Error`. 2020-12 keywords were silently ignored when there was no `$schema`. Fixed:
 * the dialect `$schema` names validates (ajv's `Ajv2020`), and `new ToolsPlugin({
 * defaultDialect: '2020-12' })` reads unstamped schemas as 2020-12.
 */
import { Server, Tools, ToolsPlugin, type JsonSchema } from '../../src/index.js';
import { EVERYTHING_TOOLS } from '../tools/schema-mcp-everything.js';

test('a server-everything tool stamped 2020-12 registers and its 2020-12 keywords are enforced', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const t = server.createContext().get(Tools);
  const sum = EVERYTHING_TOOLS.find((x) => x.name === 'get-sum');
  expect(sum).toBeDefined();
  const stamp = 'https://json-schema.org/draft/2020-12/schema';
  t.register({ name: 'get-sum', description: 'd', parameters: { $schema: stamp, ...sum?.inputSchema } as JsonSchema, execute: (a: { a: number; b: number }) => a.a + a.b });
  expect((await t.execute({ callId: '1', name: 'get-sum', arguments: { a: 1, b: 2 } })).content).toBe('3');
  expect((await t.execute({ callId: '2', name: 'get-sum', arguments: { a: 'two', b: 2 } })).error?.code).toBe('INVALID_ARGS');
  t.register({
    name: 'pair',
    description: 'd',
    parameters: { $schema: stamp, type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }], items: false } }, unevaluatedProperties: false },
    execute: () => 'ok',
  });
  expect((await t.execute({ callId: '3', name: 'pair', arguments: { p: ['a'] } })).content).toBe('ok');
  expect((await t.execute({ callId: '4', name: 'pair', arguments: { p: [1] } })).error?.code).toBe('INVALID_ARGS');
  expect((await t.execute({ callId: '5', name: 'pair', arguments: { p: ['a', 'b'] } })).error?.code).toBe('INVALID_ARGS');
  expect((await t.execute({ callId: '6', name: 'pair', arguments: { p: ['a'], extra: 1 } })).error?.code).toBe('INVALID_ARGS');
  await server.dispose();
});
