/**
 * SPEC 11.3, assemble side: `prompts.assemble()` returns the tools it showed, i.e. the
 * tools after the `prompt/assemble` listeners and protection: a tool a listener hid is
 * not in `assembly.tools`, a protected one is back.
 */
import { Events, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin, createScope } from '../../src/index.js';

const tool = (name: string) => ({ name, description: name, parameters: { type: 'object' }, execute: () => name });

test('assembly.tools is what the model is shown: after listeners hid some, with protected ones restored', async () => {
  const server = new Server();
  server.addPlugins(new PromptsPlugin(), new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  for (const n of ['search', 'shell', 'refund']) app.get(Tools).register(tool(n));
  const A = createScope(app, { id: 'A' });
  A.ctx.get(Tools).register(tool('notes'));
  A.ctx.get(Prompts).protect({ tools: ['refund'] });
  app.get(Events).on('prompt/assemble', (assembly) => ({ ...assembly, tools: assembly.tools.filter((t) => t.name !== 'shell' && t.name !== 'refund') }), { global: true });
  const turn = A.ctx.child();
  const assembly = await turn.get(Prompts).assemble();
  expect(assembly.tools.map((t) => t.name).sort()).toEqual(['notes', 'refund', 'search']);
  // A's protection is A's own: the global assembly shows what the listener left
  expect((await app.get(Prompts).assemble()).tools.map((t) => t.name).sort()).toEqual(['search']);
  await server.dispose();
});

test('what the model was shown is what can run: execute(call, { shown: assembly }) refuses a tool a listener hid', async () => {
  const server = new Server();
  server.addPlugins(new PromptsPlugin(), new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  const ran: string[] = [];
  for (const n of ['search', 'shell']) app.get(Tools).register({ ...tool(n), execute: () => (ran.push(n), n) });
  const A = createScope(app, { id: 'A' });
  app.get(Events).on('prompt/assemble', (assembly) => ({ ...assembly, tools: assembly.tools.filter((t) => t.name !== 'shell') }), { global: true });
  const turn = A.ctx.child();
  const assembly = await turn.get(Prompts).assemble();
  const tools = turn.get(Tools);
  expect((await tools.execute({ callId: '1', name: 'search', arguments: {} }, { shown: assembly })).content).toBe('search');
  const refused = await tools.execute({ callId: '2', name: 'shell', arguments: {} }, { shown: assembly });
  expect(refused.isError).toBe(true);
  expect(refused.error?.code).toBe('UNKNOWN_TOOL');
  // by names too, and without `shown` the hidden tool still resolves (hiding is a prompt matter)
  expect((await tools.execute({ callId: '3', name: 'shell', arguments: {} }, { shown: assembly.tools.map((t) => t.name) })).error?.code).toBe('UNKNOWN_TOOL');
  expect((await tools.execute({ callId: '4', name: 'shell', arguments: {} })).content).toBe('shell');
  expect(ran).toEqual(['search', 'shell']);
  await server.dispose();
});
