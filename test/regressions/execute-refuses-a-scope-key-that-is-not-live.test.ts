/**
 * Bug (issue 8, "authority that should not leak"; SPEC 10.7): `tools.execute({ scope })`
 * with a scope key that is not live (`scope: {}` spread from a model's JSON, or the key
 * of a disposed agent) resolved the bare global layer, escaping the agent's
 * restrictions and guards.
 * Fixed: such a call answers INVALID_ARGS; the view's own scope and live keys still work.
 */
import { jest } from '@jest/globals';
import { Server, Tools, ToolsPlugin, createScope } from '../../src/index.js';

test('an explicit scope that is neither the view’s own nor a live key is INVALID_ARGS', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  const body = jest.fn(() => 'ran');
  app.get(Tools).register({ name: 'shell', description: 'shell', parameters: { type: 'object' }, execute: body });
  const agent = createScope(app, { id: 'agent' });
  agent.ctx.get(Tools).restrict({ allow: [] });
  const view = agent.ctx.get(Tools);
  expect((await view.execute({ callId: '0', name: 'shell', arguments: {} })).error?.code).toBe('UNKNOWN_TOOL');
  const forged = await view.execute({ callId: '1', name: 'shell', arguments: {}, scope: {} });
  expect(forged.error?.code).toBe('INVALID_ARGS');
  expect(forged.error?.message).toMatch(/not a live scope key/);
  expect((await view.execute({ callId: '2', name: 'shell', arguments: {}, scope: agent.key })).error?.code).toBe('UNKNOWN_TOOL');
  const key = agent.key;
  await agent.dispose();
  expect((await app.get(Tools).execute({ callId: '3', name: 'shell', arguments: {}, scope: key })).error?.code).toBe('INVALID_ARGS');
  expect(body).not.toHaveBeenCalled();
  await server.dispose();
});
