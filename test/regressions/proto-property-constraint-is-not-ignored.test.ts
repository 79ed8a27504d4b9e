/**
 * Issue 8 #11. Bug: ajv drops a `properties` entry named `__proto__`, so its constraint
 * was silently ignored and any value reached the tool unchecked. Fixed: a `"__proto__"`
 * key in a schema is refused at register (a TypeError naming the tool and the path);
 * `"__proto__"` as a required name is enforced.
 */
import { Server, Tools, ToolsPlugin, type JsonSchema } from '../../src/index.js';

async function tools(): Promise<{ server: Server; tools: Tools }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  return { server, tools: server.createContext().get(Tools) };
}

test('a constraint on a property named __proto__ is refused, never ignored', async () => {
  const { server, tools: t } = await tools();
  const parameters = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","maxLength":3}}}') as JsonSchema;
  expect(() => t.register({ name: 'p', description: 'd', parameters, execute: () => 'ran' })).toThrow(TypeError);
  expect(() => t.register({ name: 'p', description: 'd', parameters, execute: () => 'ran' })).toThrow(
    /^Tools\.register\(p\): parameters\.properties\.__proto__: a key named "__proto__" is refused/,
  );
  // what main let through: a number where the schema says a short string
  const r = await t.execute({ callId: '1', name: 'p', arguments: JSON.parse('{"__proto__": 12345}') });
  expect(r.error?.code).toBe('UNKNOWN_TOOL');
  await server.dispose();
});

test('required: ["__proto__"] is enforced (an own property is needed)', async () => {
  const { server, tools: t } = await tools();
  t.register({ name: 'r', description: 'd', parameters: { type: 'object', required: ['__proto__'] }, execute: () => 'ran' });
  expect((await t.execute({ callId: '1', name: 'r', arguments: {} })).error?.code).toBe('INVALID_ARGS');
  expect((await t.execute({ callId: '2', name: 'r', arguments: JSON.parse('{"__proto__": 1}') })).content).toBe('ran');
  await server.dispose();
});
