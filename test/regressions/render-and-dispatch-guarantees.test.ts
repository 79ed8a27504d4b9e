/**
 * Pins guarantees the prompt and event tests did not cover: interpolation is one pass over
 * the section text (a variable's value is never re-interpolated nor read as a replacement
 * pattern, so user text in a variable can not pull in other variables), order ties keep
 * registration order (a scoped shadow keeps the global entry's place), and a listener
 * added during a dispatch is not called for it while one removed before its turn (even
 * a `{ global: true }` one) is skipped.
 */
import { Events, Prompts, PromptsPlugin, Server, createScope } from '../../src/index.js';

async function app() {
  const server = new Server();
  server.addPlugins(new PromptsPlugin());
  await server.finish();
  return server.createContext();
}

test('render is one pass: values with {{other}}, $& or $1 are inserted literally', async () => {
  const ctx = await app();
  const p = ctx.get(Prompts);
  p.section({ name: 's', order: 0, text: 'say {{user}} / {{secret}}' });
  p.variable('user', '{{secret}} $& $1 $$ $`');
  p.variable('secret', 'S');
  expect(p.render(await p.assemble())).toBe("say {{secret}} $& $1 $$ $` / S");
  await ctx.dispose();
});

test('order ties keep registration order; a scoped shadow keeps the global place', async () => {
  const ctx = await app();
  const p = ctx.get(Prompts);
  for (const name of ['b', 'a', 'c']) p.section({ name, order: 1, text: name });
  p.section({ name: 'first', order: 0, text: 'first' });
  const scope = createScope(ctx, { id: 'k' });
  scope.ctx.get(Prompts).section({ name: 'z', order: 1, text: 'z' });
  scope.ctx.get(Prompts).section({ name: 'a', order: 1, text: 'A' });
  const names = async (c: typeof ctx) => (await c.get(Prompts).assemble()).sections.map((s) => s.text);
  expect(await names(ctx)).toEqual(['first', 'b', 'a', 'c']);
  expect(await names(scope.ctx)).toEqual(['first', 'b', 'A', 'c', 'z']);
  await ctx.dispose();
});

test('a dispatch uses the listeners present when it started, minus those removed before their turn', async () => {
  const ctx = await app();
  const events = ctx.get(Events);
  const scope = createScope(ctx, { id: 'k' });
  const heard: string[] = [];
  const offGlobal = scope.ctx.get(Events).on('e', () => heard.push('global'), { global: true });
  events.on('e', () => {
    heard.push('adder');
    events.on('e', () => heard.push('added'));
  });
  events.on('e', () => {
    heard.push('remover');
    offGlobal();
  }, { prepend: true });
  await events.emit({}, 'e');
  expect(heard).toEqual(['remover', 'adder']);
  heard.length = 0;
  await events.emit({}, 'e');
  expect(heard).toEqual(['remover', 'adder', 'added']);
  events.on('w', () => undefined);
  events.on('w', (v: unknown) => [v]);
  expect(await events.waterfall(undefined, 'w', 1)).toEqual([undefined]);
  await ctx.dispose();
});
