// Issue 10 (SPEC 10.7): a subagent created during its parent's setup was published and
// announced at once, while its parent was still unpublished: an agent/created listener
// for the subagent found agents.get(parent) undefined, and a failing parent setup left
// an announced (then disposed) subagent behind. A subagent composed in its parent's setup
// is now published after the parent, before the parent's create resolves.
import { Agent, Agents, AgentsPlugin, Events, Server } from '../../src/index.js';

test('a subagent composed in its parent\'s setup is announced after the parent, never before', async () => {
  const server = new Server();
  server.addPlugins(new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const agents = app.get(Agents);
  const heard: string[] = [];
  app.get(Events).on('agent/created', (a: Agent) => {
    heard.push(a.parent === undefined ? a.id : `${a.id} with parent ${agents.get(a.parent.id) === a.parent ? 'published' : 'UNPUBLISHED'}`);
  });
  await agents.create({ id: 'triage', setup: async (ctx) => void (await agents.create({ id: 'billing', parent: ctx.get(Agent) })) });
  expect(heard).toEqual(['triage', 'billing with parent published']);

  // and a parent whose setup fails announces nothing at all
  heard.length = 0;
  await expect(
    agents.create({
      id: 'broken',
      setup: async (ctx) => {
        await agents.create({ id: 'orphan', parent: ctx.get(Agent) });
        throw new Error('setup failed');
      },
    }),
  ).rejects.toThrow(/setup failed/);
  expect(heard).toEqual([]);
  await server.dispose();
});
