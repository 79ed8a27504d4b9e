/**
 * Bad `output` values: each rejects (never throws) naming the task, before anything is
 * made, and leaves nothing registered (no subagent, no tool, no compiled validator).
 */
import { jest } from '@jest/globals';
import { z } from 'zod';
import { Agents, AgentsPlugin, NotLosslessJsonError, Server, ToolSchemaError, Tools, ToolsPlugin } from '../../../src/index.js';
import { toolRegistryOf } from '../../../src/tools/tools.js';
import { assertNoLeaks } from '../../../src/testing/index.js';
import { structuredServer } from './helpers.js';

const fn = (): string => 'never';

test('an output that is not a schema is a TypeError naming output and the task; setup and fn never run', async () => {
  const server = await structuredServer();
  const agents = server.createContext().get(Agents);
  const setup = jest.fn<() => void>();
  for (const bad of [null, 42, 'a schema', () => ({}), true]) {
    const p = agents.runTask({ id: 'w', output: bad as never, setup, fn });
    await expect(p).rejects.toThrow(TypeError);
    await expect(p).rejects.toThrow(/Agents\.runTask\(\{ id: "w", output \}\): output must be a tool-parameter schema/);
  }
  await expect(agents.runTask({ id: 'w', output: { schema: null } as never, fn })).rejects.toThrow(/output\.schema must be a tool-parameter schema .*got null/);
  await expect(agents.runTask({ id: 'w', output: { schema: {}, toolName: 'has space' }, fn })).rejects.toThrow(/output\.toolName must be a tool name/);
  await expect(agents.runTask({ id: 'w', output: { schema: {}, instruction: '  ' }, fn })).rejects.toThrow(/output\.instruction must be a non-empty string/);
  const hostile = new Proxy({}, { has: () => { throw new Error('trap'); }, getOwnPropertyDescriptor: () => { throw new Error('trap'); } });
  await expect(agents.runTask({ id: 'w', output: hostile, fn })).rejects.toThrow(/output could not be read/);
  expect(setup).not.toHaveBeenCalled();
  expect(agents.list()).toEqual([]);
  await server.dispose();
  assertNoLeaks(server);
});

test('a schema its dialect refuses is the ordinary ToolSchemaError, naming the task; nothing is registered', async () => {
  const server = await structuredServer();
  const agents = server.createContext().get(Agents);
  const reg = toolRegistryOf(server);
  const before = reg?.validatorCount;
  const refused = agents.runTask({ id: 'w', output: { type: 'object', properties: { a: { type: 'nope' } } }, fn });
  await expect(refused).rejects.toBeInstanceOf(ToolSchemaError);
  await expect(refused).rejects.toThrow(/^Agents\.runTask\(\{ id: "w", output \}\): output: Tools\.register\(structured_output\): parameters/);
  await expect(agents.runTask({ id: 'w', output: { $schema: 'https://example.com/unknown', type: 'object' }, fn })).rejects.toBeInstanceOf(ToolSchemaError);
  await expect(agents.runTask({ id: 'w', output: { type: 'object', default: Number.NaN }, fn })).rejects.toBeInstanceOf(NotLosslessJsonError);
  expect(reg?.validatorCount).toBe(before);
  expect(agents.list()).toEqual([]);
  await server.dispose();
  assertNoLeaks(server);
});

test('a capture tool name the subagent already sees (a global tool, or one its setup registers) is a TypeError naming it; the subagent is rolled back', async () => {
  const server = await structuredServer();
  const app = server.createContext();
  const agents = app.get(Agents);
  const reg = toolRegistryOf(server);
  app.get(Tools).register({ name: 'structured_output', description: 'global', parameters: { type: 'object' }, execute: () => 'x' });
  const live = reg?.validatorCount;
  const ran = jest.fn();
  await expect(agents.runTask({ id: 'w', output: { type: 'object' }, fn: ran })).rejects.toThrow(
    /^Agents\.runTask\(\{ id: "w", output \}\): the capture tool "structured_output" would hide a tool the subagent already sees/,
  );
  await expect(
    agents.runTask({
      id: 'w',
      output: { schema: z.object({ a: z.string() }), toolName: 'submit' },
      setup: (ctx) => void ctx.get(Tools).register({ name: 'submit', description: 'mine', parameters: { type: 'object' }, execute: () => 'x' }),
      fn: ran,
    }),
  ).rejects.toThrow(/the capture tool "submit" would hide a tool/);
  expect(ran).not.toHaveBeenCalled();
  expect(agents.list()).toEqual([]);
  expect(reg?.validatorCount).toBe(live);
  // a free name works on the same server
  const ok = await agents.runTask({ id: 'w', output: { schema: { type: 'object' }, toolName: 'submit' }, fn: (a) => a.ctx.get(Tools).execute({ callId: 'c', name: 'submit', arguments: {} }) });
  expect(ok.value).toEqual({});
  await server.dispose();
  assertNoLeaks(server);
});

test('output needs ToolsPlugin and PromptsPlugin (a TypeError naming the missing plugin)', async () => {
  const bare = new Server();
  bare.addPlugins(new AgentsPlugin());
  await bare.finish();
  await expect(bare.createContext().get(Agents).runTask({ output: { type: 'object' }, fn })).rejects.toThrow(/output needs ToolsPlugin/);
  const noPrompts = new Server();
  noPrompts.addPlugins(new AgentsPlugin(), new ToolsPlugin());
  await noPrompts.finish();
  await expect(noPrompts.createContext().get(Agents).runTask({ output: { type: 'object' }, fn })).rejects.toThrow(/output needs PromptsPlugin/);
  await bare.dispose();
  await noPrompts.dispose();
});

test('an owner already disposed at the call releases the schema it compiled', async () => {
  const server = await structuredServer();
  const ctx = server.createContext();
  const reg = toolRegistryOf(server);
  const before = reg?.validatorCount;
  const agents = ctx.get(Agents);
  const handle = await agents.create({ id: 'lead' });
  const lead = handle.agent;
  await handle.dispose();
  await expect(agents.runTask({ parent: lead, output: { type: 'object', properties: { only: { const: 'here' } } }, fn })).rejects.toThrow();
  expect(reg?.validatorCount).toBe(before);
  await server.dispose();
});
