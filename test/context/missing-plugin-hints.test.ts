/**
 * A token that a plugin installs (Tools, Prompts, Agents, Events) is fixed by adding the
 * plugin, not by ctx.insert(...): its `resource not found` message says which plugin.
 */
import 'reflect-metadata';
import { Agents, Events, ParamError, Prompts, Res, Server, system, SystemError, Tools, type Token } from '../../src/index.js';

const cases: readonly { token: Token; name: string; fix: string }[] = [
  { token: Tools, name: 'Tools', fix: 'server.addPlugins(new ToolsPlugin()) before server.finish()' },
  { token: Prompts, name: 'Prompts', fix: 'server.addPlugins(new PromptsPlugin()) before server.finish()' },
  { token: Agents, name: 'Agents', fix: 'server.addPlugins(new AgentsPlugin()) before server.finish()' },
  { token: Events, name: 'Events', fix: 'ToolsPlugin, PromptsPlugin or AgentsPlugin' },
];

describe.each(cases)('a missing $name', ({ token, name, fix }) => {
  test('ctx.get, a Res parameter and server.getGlobal name the plugin that installs it', async () => {
    const server = new Server();
    await server.finish();
    const ctx = server.createContext().child();
    let err: unknown;
    try {
      ctx.get(token);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('ResourceNotFound');
    expect((err as Error).message.startsWith(`resource not found: ${name} (`)).toBe(true);
    expect((err as Error).message).toContain(fix);
    expect((err as Error).message).toContain('context at depth 1');
    expect((err as Error).message).not.toContain('ctx.insert'); // not the generic fix

    const run = await ctx.run(system([Res(token)], () => 1, { name: 'usesIt' })).catch((e: unknown) => e);
    expect(run).toBeInstanceOf(SystemError);
    expect((run as Error).message).toMatch(new RegExp(`^parameter error: system "usesIt" → parameter #0 Res\\(${name}\\): resource not found: ${name} \\(`));
    expect((run as Error).message).toContain(fix);

    expect(() => server.getGlobal(token)).toThrow(`resource not found: ${name}`);
    expect(() => server.getGlobal(token)).toThrow(fix);
    await server.dispose();
  });
});

test('an ordinary missing resource keeps the generic fix', async () => {
  class Missing {}
  const server = new Server();
  await server.finish();
  expect(() => server.createContext().get(Missing)).toThrow(/resource not found: Missing \(.*insert it with ctx\.insert/);
  await server.dispose();
});
