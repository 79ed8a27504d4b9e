/**
 * Bug (issue 10's last gap; SPEC 10.7): `tools.get(name, scope)`, `visible(scope)`,
 * `schemas(scope)` and `knownNames(scope)` with a key that was not live (`{}`, or the key
 * of a disposed agent, also read from an `agent/disposed` listener) read that key's empty
 * layer, i.e. the bare global layer: a restricted agent's dead key listed the global tools
 * its restriction hid, while `execute({ scope })` with the same key answered INVALID_ARGS.
 * Fixed: the four reads throw a TypeError naming the method, the scope and the fix; the
 * view's own key and live keys still read.
 */
import { Agents, AgentsPlugin, Events, Server, Tools, ToolsPlugin, type Agent } from '../../src/index.js';

const shell = { name: 'shell', description: 'shell', parameters: { type: 'object' }, execute: () => 'ran' };

test('a dead agent key no longer reads as the global layer: the four reads throw, as execute refuses', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const tools = app.get(Tools);
  tools.register(shell);
  const inListener: unknown[] = [];
  app.get(Events).on('agent/disposed', (a: Agent) => {
    try {
      inListener.push(tools.visible(a));
    } catch (err) {
      inListener.push(err);
    }
  });
  const h = await app.get(Agents).create({ id: 'locked', setup: (ctx) => void ctx.get(Tools).restrict({ allow: [] }) });
  const key = h.agent;
  // live: the restriction hides shell, by key and through the agent's own view
  expect(tools.visible(key)).toEqual([]);
  expect(h.agent.ctx.get(Tools).visible(key)).toEqual([]);
  await h.dispose();
  // before the fix: [shell], the global layer
  expect(inListener).toHaveLength(1);
  expect(inListener[0]).toBeInstanceOf(TypeError);
  expect(() => tools.get('shell', key)).toThrow(/^Tools\.get\(name, scope\): scope locked is neither this view's own scope nor a live scope key/);
  expect(() => tools.visible(key)).toThrow(/^Tools\.visible\(scope\): scope locked .*omit scope to use the view's own\.$/);
  expect(() => tools.schemas(key)).toThrow(TypeError);
  expect(() => tools.knownNames(key)).toThrow(TypeError);
  expect(() => tools.visible({})).toThrow(TypeError);
  expect((await tools.execute({ callId: '1', name: 'shell', arguments: {}, scope: key })).error?.code).toBe('INVALID_ARGS');
  await server.dispose();
});
