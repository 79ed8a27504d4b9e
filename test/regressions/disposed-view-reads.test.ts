// A view of a disposed context is as unusable as the context itself (SPEC §3: every
// method of a disposed context throws ContextDisposedError). Before this, the reads of a
// disposed agent's Tools view fell back to the global layer (so they listed global tools
// the agent's restriction had hidden) while its execute found nothing: the reads and
// execute no longer agreed, breaking "one resolver feeds all of them" (SPEC §7).
import {
  Agents,
  AgentsPlugin,
  ContextDisposedError,
  Events,
  Prompts,
  PromptsPlugin,
  Server,
  Tools,
  ToolsPlugin,
  type ToolDefinition,
} from '../../src/index.js';

const shell: ToolDefinition<{ cmd: string }> = {
  name: 'shell',
  description: 'Runs a command',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  execute: ({ cmd }) => `ran ${cmd}`,
};

async function setup() {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register(shell);
  app.get(Prompts).section({ name: 'persona', order: 0, text: 'global persona' });
  const handle = await app.get(Agents).create({
    id: 'locked',
    setup: (ctx) => {
      ctx.get(Tools).restrict({ allow: [] });
      ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'agent persona' });
    },
  });
  const ctx = handle.agent.ctx;
  return { server, app, handle, tools: ctx.get(Tools), prompts: ctx.get(Prompts), events: ctx.get(Events) };
}

test('while the agent lives its view hides the restricted global tool', async () => {
  const { server, tools } = await setup();
  expect(tools.visible().map((t) => t.name)).toEqual([]);
  expect(tools.get('shell')).toBeUndefined();
  await server.dispose();
});

test('after disposal the reads throw instead of falling back to the global layer', async () => {
  const { server, handle, tools, prompts, events } = await setup();
  await handle.dispose();
  expect(() => tools.visible()).toThrow(ContextDisposedError);
  expect(() => tools.get('shell')).toThrow(ContextDisposedError);
  expect(() => tools.schemas()).toThrow(ContextDisposedError);
  expect(() => tools.knownNames()).toThrow(ContextDisposedError);
  await expect(prompts.assemble()).rejects.toThrow(ContextDisposedError);
  await expect(events.emit(undefined, 'x')).rejects.toThrow(ContextDisposedError);
  await expect(events.waterfall(undefined, 'x', 1)).rejects.toThrow(ContextDisposedError);
  expect(() => events.listenerCount('x')).toThrow(ContextDisposedError);
  // execute never throws for a bad call: it finds nothing, like the reads.
  const r = await tools.execute({ callId: 'c1', name: 'shell', arguments: { cmd: 'ls' } });
  expect(r.error?.code).toBe('UNKNOWN_TOOL');
  await server.dispose();
});

test('an assemble in flight when its agent is disposed rejects instead of returning the dead scope', async () => {
  const { server, app, handle, prompts } = await setup();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  handle.agent.ctx.get(Prompts).variable('slow', async () => {
    await gate;
    return 'late';
  });
  const pending = prompts.assemble();
  const disposed = handle.dispose();
  release();
  await disposed;
  await expect(pending).rejects.toThrow(ContextDisposedError);
  // the global view still assembles
  const global = await app.get(Prompts).assemble();
  expect(global.sections.map((s) => s.text)).toEqual(['global persona']);
  await server.dispose();
});
