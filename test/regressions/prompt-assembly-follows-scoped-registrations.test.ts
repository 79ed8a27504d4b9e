/**
 * Issue 8 #1: once a scope had called `assemble()`, its merged sections and variables were
 * cached against the global layer's version only, so a section or variable registered in
 * that scope later never showed up, and a disposed one stayed (a turn's section in the
 * agent's prompt in the next turn; a disposed variable provider still called).
 */
import { jest } from '@jest/globals';
import { AgentsPlugin, Agents, Prompts, PromptsPlugin, Server, ToolsPlugin, createScope } from '../../src/index.js';

async function app() {
  const server = new Server();
  server.addPlugins(new PromptsPlugin(), new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  return { server, app: server.createContext() };
}

const names = (a: { sections: { name: string }[] }) => a.sections.map((s) => s.name);

test('a section registered in a scope after its first assemble() shows up', async () => {
  const { server, app: ctx } = await app();
  const A = createScope(ctx, { id: 'A' });
  const p = A.ctx.get(Prompts);
  p.section({ name: 'persona', order: 0, text: 'You research.' });
  expect(names(await p.assemble())).toEqual(['persona']);
  p.section({ name: 'rules', order: 1, text: 'Be brief.' });
  expect(names(await p.assemble())).toEqual(['persona', 'rules']);
  await server.dispose();
});

test("a turn's section leaves the agent's prompt when the turn ends", async () => {
  const { server, app: ctx } = await app();
  const { agent } = await ctx.get(Agents).create({
    id: 'researcher',
    setup: (a) => void a.get(Prompts).section({ name: 'persona', order: 0, text: 'You research.' }),
  });
  const turn1 = agent.ctx.child();
  turn1.get(Prompts).section({ name: 'turn:note', order: 5, text: 'The user is in a hurry.' });
  expect(names(await turn1.get(Prompts).assemble())).toEqual(['persona', 'turn:note']);
  await turn1.dispose();
  const turn2 = agent.ctx.child();
  expect(names(await turn2.get(Prompts).assemble())).toEqual(['persona']);
  expect(names(await agent.ctx.get(Prompts).assemble())).toEqual(['persona']);
  await server.dispose();
});

test('a disposed variable provider is no longer called; a new one is', async () => {
  const { server, app: ctx } = await app();
  const A = createScope(ctx, { id: 'A' });
  const p = A.ctx.get(Prompts);
  p.section({ name: 'persona', order: 0, text: 'Topic: {{topic}}' });
  p.variable('reader', 'an engineer'); // keeps the scope's variable layer alive across the disposal
  const first = jest.fn(() => 'tides');
  const off = p.variable('topic', first);
  expect(p.render(await p.assemble())).toBe('Topic: tides');
  off();
  await expect(p.assemble().then((a) => p.render(a))).rejects.toThrow(/unknown prompt variable "topic"/);
  expect(first).toHaveBeenCalledTimes(1);
  p.variable('topic', () => 'waves');
  expect(p.render(await p.assemble())).toBe('Topic: waves');
  expect(first).toHaveBeenCalledTimes(1);
  await server.dispose();
});

test('a scoped shadow registered or disposed after an assemble() replaces or restores the global entry', async () => {
  const { server, app: ctx } = await app();
  ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'global' });
  ctx.get(Prompts).variable('tone', 'plain');
  const A = createScope(ctx, { id: 'A' });
  const p = A.ctx.get(Prompts);
  p.section({ name: 'extra', order: 1, text: 'x' }); // the scope has a layer before the first assemble
  const before = await p.assemble();
  expect(before.sections[0].text).toBe('global');
  const offSection = p.section({ name: 'persona', order: 0, text: 'scoped' });
  const offVar = p.variable('tone', 'warm');
  const shadowed = await p.assemble();
  expect(shadowed.sections[0].text).toBe('scoped');
  expect(shadowed.variables.tone).toBe('warm');
  offSection();
  offVar();
  const restored = await p.assemble();
  expect(restored.sections[0].text).toBe('global');
  expect(restored.variables.tone).toBe('plain');
  await server.dispose();
});
