/**
 * Found while fixing issue 8 #11. Bug: ajv checked `data.toString !== undefined`, so
 * `required: ["toString"]` was met by `{}` (the inherited method), and
 * `properties.toString` checked the inherited function (refusing `{}`). Fixed: a
 * property counts only when it is the arguments' own (ajv `ownProperties`).
 */
import { Server, Tools, ToolsPlugin } from '../../src/index.js';

test('required and properties see only own properties of the arguments', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const t = server.createContext().get(Tools);
  t.register({ name: 'req', description: 'd', parameters: { type: 'object', required: ['toString'] }, execute: () => 'ran' });
  t.register({ name: 'opt', description: 'd', parameters: { type: 'object', properties: { constructor: { type: 'string' } } }, execute: () => 'ran' });
  expect((await t.execute({ callId: '1', name: 'req', arguments: {} })).error?.code).toBe('INVALID_ARGS');
  expect((await t.execute({ callId: '2', name: 'req', arguments: { toString: 'x' } })).content).toBe('ran');
  expect((await t.execute({ callId: '3', name: 'opt', arguments: {} })).content).toBe('ran');
  expect((await t.execute({ callId: '4', name: 'opt', arguments: { constructor: 1 } })).error?.code).toBe('INVALID_ARGS');
  await server.dispose();
});
