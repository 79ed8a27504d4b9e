/**
 * The registration-scopes sample the README carried before issue 13 (now taught by
 * docs/concepts.md and docs/agents-scopes-registries.md), kept as an end-to-end check of
 * scoped tools, a restriction, a scoped prompt section and their undoing on dispose.
 */
import { Server, ToolsPlugin, PromptsPlugin, Tools, Prompts, Events, createScope, scopeOf, type ToolDefinition } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

const readFileTool: ToolDefinition<{ path: string }> = {
  name: 'read_file',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: ({ path }) => `contents of ${path}`,
};
const shellTool: ToolDefinition<{ cmd: string }> = {
  name: 'shell',
  description: 'Run a shell command',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  execute: ({ cmd }) => `ran ${cmd}`,
};
const webSearchTool: ToolDefinition<{ q: string }> = {
  name: 'web_search',
  description: 'Search the web',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: ({ q }) => `result for ${q}`,
};

test('README: registration scopes sample', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new PromptsPlugin());      // both install the one shared Events
  await server.finish();
  const app = server.createContext();

  app.get(Tools).register(readFileTool);                          // global: every agent sees it
  app.get(Tools).register(shellTool);                             // global too
  const researcher = createScope(app, { id: 'researcher' });      // AgentsPlugin does this for you
  researcher.ctx.get(Tools).register(webSearchTool);              // only the researcher sees it
  researcher.ctx.get(Tools).restrict({ deny: ['shell'] });        // masks a global tool for this agent
  researcher.ctx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research.' });
  expect(scopeOf(researcher.ctx.child()) === researcher.key).toBe(true); // true: the tag is inherited

  expect(app.get(Events)).toBeDefined();
  expect(researcher.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['read_file', 'web_search']);
  expect(app.get(Tools).visible().map((t) => t.name)).toEqual(['read_file', 'shell']);
  expect((await researcher.ctx.get(Prompts).assemble()).sections.map((s) => s.text)).toEqual(['You research.']);

  await researcher.dispose();                                     // undoes every registration above
  // a disposed scope's key is no longer live: the reads and assemble refuse it (SPEC 10.7)
  expect(() => app.get(Tools).visible(researcher.key)).toThrow(TypeError);
  await expect(app.get(Prompts).assemble({ scope: researcher.key })).rejects.toThrow(TypeError);
  // the key may be used again: a new scope with it starts from an empty layer (no web_search, shell not denied)
  const again = createScope(app, researcher.key);
  expect(again.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['read_file', 'shell']);
  await again.dispose();
  expect((await app.get(Prompts).assemble()).sections).toEqual([]);
  await app.dispose();
  assertNoLeaks(server);
  await server.dispose();
});
