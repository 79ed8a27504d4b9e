/**
 * The agents sample the README carried before issue 13 (agents are now taught by
 * docs/agents-scopes-registries.md, whose agent sections test/testing/doc-examples.test.ts
 * runs), kept as an end-to-end check: a global tool and prompt section, an agent whose
 * setup registers its own tool, restricts the global ones and overrides the section, a
 * session turn with a Scratchpad, and disposal undoing every scoped registration.
 */
import { Agents, AgentsPlugin, Prompts, PromptsPlugin, Scratchpad, Server, Tools, ToolsPlugin, openSession, type ToolDefinition } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { scopedLive } from './helpers.js';

const searchTool: ToolDefinition<{ q: string }> = {
  name: 'search',
  description: 'Search the web',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: ({ q }) => `results for ${q}`,
};
const citeTool: ToolDefinition = { name: 'cite', description: 'Cite a source', parameters: { type: 'object' }, execute: () => '[1]' };

test('README: agents sample', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register(searchTool); // global: every agent sees it
  app.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You are helpful.' });

  const handle = await app.get(Agents).create({
    id: 'researcher',
    setup: async (agentCtx) => {
      // awaited before publication
      agentCtx.get(Tools).register(citeTool); // this agent only
      agentCtx.get(Tools).restrict({ allow: ['search'] }); // masks global tools for it
      agentCtx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research.' });
    },
  });

  const session = openSession(handle.agent); // keeps a ConversationHistory
  const answer = await session.turn(async (turnCtx) => {
    // a child context with a Scratchpad
    session.history.append({ role: 'user', content: 'find polestar' });
    turnCtx.getMut(Scratchpad).notes.push('searching');
    return turnCtx.get(Tools).execute({ callId: '1', name: 'search', arguments: { q: 'polestar' } });
  }); // the turn is disposed here

  expect(answer.content).toBe('results for polestar');
  expect(session.history.length).toBe(1);
  expect(app.get(Tools).visible(handle.agent).map((t) => t.name)).toEqual(['search', 'cite']);
  expect((await app.get(Prompts).assemble({ scope: handle.agent })).sections[0].text).toBe('You research.');
  expect(scopedLive(server, 'researcher').sort()).toEqual(['prompt section "deployment:persona" of scope researcher', 'tool "cite" of scope researcher', 'tool restriction of scope researcher']);

  await handle.dispose(); // leaves the registry, emits agent/disposed, undoes every scoped registration
  expect(app.get(Agents).get('researcher')).toBeUndefined();
  expect(scopedLive(server, 'researcher')).toEqual([]); // cite, the restriction and the section are undone
  // the agent's key is no longer live: reading by it is refused (SPEC 10.7), not answered with the globals
  expect(() => app.get(Tools).visible(handle.agent)).toThrow(TypeError);
  expect(app.get(Tools).visible().map((t) => t.name)).toEqual(['search']);
  await app.dispose();
  assertNoLeaks(server);
  await server.dispose();
});
