/**
 * Regression: `assemble()` read the protected names after the `prompt/assemble`
 * waterfall, but the canonical sections before awaiting the variable providers. When the
 * scope was disposed while a provider awaited, its protections were gone by the time they
 * were applied, and a global listener's rewrite of a section the scope protected came back
 * in the result. Protection now uses the protections in force when the canonical
 * assembly was taken, so a result is always consistent with one snapshot.
 */
import { Events, Prompts, PromptsPlugin, Server, createScope } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

test('a scope disposed while a variable provider awaits keeps its protected section in the in-flight assembly', async () => {
  const server = new Server();
  server.addPlugins(new PromptsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Prompts).section({ name: 'rules', order: 1, text: 'global rules' });
  app.get(Events).on('prompt/assemble', (a) => ({
    ...a,
    sections: a.sections.map((s) => (s.name === 'rules' ? { ...s, text: 'rewritten' } : s)),
  }));
  const scope = createScope(app, { id: 'k' });
  const prompts = scope.ctx.get(Prompts);
  prompts.section({ name: 'rules', order: 1, text: 'scoped rules' });
  prompts.protect({ sections: ['rules'] });
  expect((await prompts.assemble()).sections).toEqual([{ name: 'rules', order: 1, text: 'scoped rules' }]);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  prompts.variable('slow', async () => {
    await gate;
    return 'v';
  });

  // Assembled for the scope through a live view (the scope's own view refuses to hand out
  // a result once its context is disposed).
  const inFlight = app.get(Prompts).assemble({ scope: scope.key });
  await Promise.resolve();
  const disposing = scope.dispose();
  release();
  const a = await inFlight;
  await disposing;
  expect(a.sections).toEqual([{ name: 'rules', order: 1, text: 'scoped rules' }]);
  expect(a.variables).toEqual({ slow: 'v' });
  await app.dispose();
  assertNoLeaks(server);
});
