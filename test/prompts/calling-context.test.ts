/**
 * SPEC 10.1 (prompts): variable providers, function section texts and `prompt/assemble`
 * listeners receive `{ scope, ctx }`, `ctx` being the context `assemble()` was called
 * through; and (10.7) an explicit `scope` must be the view's own or a live scope key.
 */
import { Agents, AgentsPlugin, Events, Prompts, PromptsPlugin, Server, ToolsPlugin, createScope, token, type PromptContext, type SystemContext } from '../../src/index.js';

const UserName = token<string>('UserName');

async function world() {
  const server = new Server();
  server.addPlugins(new PromptsPlugin(), new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  return { server, app: server.createContext() };
}

test("providers, section texts and prompt/assemble listeners receive the calling context (a turn's locals are readable)", async () => {
  const { server, app } = await world();
  const seen: { where: string; scope: unknown; ctx: SystemContext }[] = [];
  const record = (where: string, c: PromptContext) => void seen.push({ where, scope: c.scope, ctx: c.ctx });
  // global registrations, one agent, one turn holding a local
  app.get(Prompts).section({
    name: 'greeting',
    order: 0,
    text: (c) => {
      record('text', c);
      return `Hello {{user}}.`;
    },
  });
  app.get(Prompts).variable('user', async (c) => {
    record('variable', c);
    return c.ctx.get(UserName);
  });
  app.get(Events).on('prompt/assemble', (assembly, c) => {
    record('listener', c);
    return assembly;
  });
  const { agent } = await app.get(Agents).create({ id: 'support' });
  const turn = agent.ctx.child();
  turn.insert(UserName, 'Ada');
  const prompts = turn.get(Prompts);
  expect(prompts.render(await prompts.assemble())).toBe('Hello Ada.');
  expect(seen.map((s) => s.where)).toEqual(['text', 'variable', 'listener']);
  for (const s of seen) {
    expect(s.ctx).toBe(turn);
    expect(s.scope).toBe(agent);
  }
  await turn.dispose();
  await server.dispose();
});

test('with an explicit scope, ctx is still the caller’s context; one frozen { scope, ctx } per assembly', async () => {
  const { server, app } = await world();
  const contexts: PromptContext[] = [];
  app.get(Prompts).variable('v', (c) => {
    contexts.push(c);
    return 'x';
  });
  app.get(Prompts).section({ name: 's', order: 0, text: (c) => (contexts.push(c), '{{v}}') });
  const A = createScope(app, { id: 'A' });
  const caller = app.child();
  await caller.get(Prompts).assemble({ scope: A.key });
  expect(contexts).toHaveLength(2);
  expect(contexts[0]).toBe(contexts[1]);
  expect(Object.isFrozen(contexts[0])).toBe(true);
  expect(contexts[0].ctx).toBe(caller);
  expect(contexts[0].scope).toBe(A.key);
  await server.dispose();
});

test('an explicit scope that is neither the view’s own nor live is refused with a TypeError (a rejection)', async () => {
  const { server, app } = await world();
  app.get(Prompts).section({ name: 'persona', order: 0, text: 'global' });
  const A = createScope(app, { id: 'A' });
  const p = app.get(Prompts);
  let pending!: Promise<unknown>;
  expect(() => (pending = p.assemble({ scope: { id: 'forged' } }))).not.toThrow();
  await expect(pending).rejects.toThrow(TypeError);
  await expect(pending).rejects.toThrow(/scope forged is neither this view's own scope nor a live scope key/);
  expect((await p.assemble({ scope: A.key })).sections).toHaveLength(1);
  // a view's own scope stays readable explicitly
  expect((await A.ctx.get(Prompts).assemble({ scope: A.key })).sections).toHaveLength(1);
  await A.dispose();
  await expect(p.assemble({ scope: A.key })).rejects.toThrow(TypeError);
  await server.dispose();
});
