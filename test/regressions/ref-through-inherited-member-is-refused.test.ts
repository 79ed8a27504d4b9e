/**
 * Found while fixing issue 8 #11 (constraints silently ignored). Bug: ajv resolves a
 * `$ref` JSON pointer with plain property reads, so `#/definitions/constructor` (with no
 * such definition) or `#/__proto__` resolved to a JavaScript member, compiled as an empty
 * schema, and any argument passed. Fixed: such a pointer is refused at register with a
 * TypeError naming the tool and the path; pointers through own properties (even a
 * definition really named `constructor`) resolve as before.
 */
import { Server, Tools, ToolsPlugin } from '../../src/index.js';

test('a $ref through an inherited member is refused instead of checking nothing', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const t = server.createContext().get(Tools);
  for (const ref of ['#/definitions/constructor', '#/__proto__', '#/definitions/id/toString']) {
    expect(() =>
      t.register({ name: 'lookup', description: 'd', parameters: { type: 'object', definitions: { id: { type: 'integer' } }, properties: { id: { $ref: ref } } }, execute: () => 'ran' }),
    ).toThrow(new RegExp(`^Tools\\.register\\(lookup\\): parameters\\.properties\\.id\\.\\$ref: "${ref.replace(/\//g, '\\/')}" does not resolve`));
  }
  expect((await t.execute({ callId: '1', name: 'lookup', arguments: { id: 'DROP TABLE' } })).error?.code).toBe('UNKNOWN_TOOL');
  t.register({ name: 'lookup', description: 'd', parameters: { type: 'object', definitions: { constructor: { type: 'integer' } }, properties: { id: { $ref: '#/definitions/constructor' } } }, execute: () => 'ran' });
  expect((await t.execute({ callId: '2', name: 'lookup', arguments: { id: 'DROP TABLE' } })).error?.code).toBe('INVALID_ARGS');
  expect((await t.execute({ callId: '3', name: 'lookup', arguments: { id: 7 } })).content).toBe('ran');
  await server.dispose();
});
