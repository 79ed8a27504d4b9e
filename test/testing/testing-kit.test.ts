import 'reflect-metadata';
import { createScope, Out, Res, ResMut, Server, system, SystemError, token, type Plugin } from '../../src/index.js';
import { assertNoLeaks, createTestServer, LeakError, runSystem } from '../../src/testing/index.js';
import { probe } from '../../src/testing/probe.js';

class AppConfig {
  constructor(public agentName = 'real') {}
}
class Memory {
  items: string[] = [];
}
const API_KEY = token<string>('API_KEY');
const Budget = token<number>('Budget');
const Draft = token<string>('Draft');

describe('createTestServer', () => {
  test('inserts globals (values and pairs), registers locals (tokens and factories), adds plugins, and finishes', async () => {
    const built: string[] = [];
    const plugin: Plugin = { id: 'p', build: () => void built.push('p') };
    const server = await createTestServer({
      globals: [new AppConfig('fake'), [API_KEY, 'fake key']],
      locals: [Memory, [Budget, () => 10]],
      plugins: [plugin],
    });
    expect(server).toBeInstanceOf(Server);
    expect(server.isFinished).toBe(true);
    expect(built).toEqual(['p']);
    const a = server.createContext();
    const b = server.createContext();
    expect(a.get(AppConfig).agentName).toBe('fake');
    expect(a.get(API_KEY)).toBe('fake key');
    expect(a.getMut(Memory)).toBeInstanceOf(Memory);
    expect(a.getMut(Memory)).not.toBe(b.getMut(Memory));
    expect(a.get(Budget)).toBe(10);
    await server.dispose();
  });

  test('with no options it is an empty finished server; bad entries are TypeErrors', async () => {
    const server = await createTestServer();
    expect(server.isFinished).toBe(true);
    await server.dispose();
    await expect(createTestServer({ globals: ['text' as never] })).rejects.toThrow(/a global must be a value/);
    await expect(createTestServer({ locals: [42 as never] })).rejects.toThrow(/a local must be a token/);
  });
});

describe('runSystem', () => {
  test('runs a system with fake globals, locals and outputs and returns { output, ctx }', async () => {
    const draft = system([Res(AppConfig), ResMut(Memory), Out(Draft), Res(Budget)], (config, memory, previous, budget) => {
      memory.items.push(previous);
      return `${config.agentName}:${previous}:${budget}`;
    }, { output: Draft });
    const { output, ctx } = await runSystem(draft, {
      globals: [new AppConfig('fake')],
      locals: [Memory, [Budget, () => 3]],
      outputs: [[Draft, 'v1']],
    });
    const o: string = output;
    expect(o).toBe('fake:v1:3');
    expect(ctx.get(Memory).items).toEqual(['v1']);
    expect(ctx.outputs.get(Draft)).toBe('fake:v1:3');
    await ctx.server.dispose();
  });

  test('locals may also be values inserted as they are', async () => {
    const mem = new Memory();
    const { output, ctx } = await runSystem(system([ResMut(Memory)], (m) => m === mem), { locals: [mem] });
    expect(output).toBe(true);
    await ctx.server.dispose();
  });

  test('a failing run rejects with its SystemError and disposes the server', async () => {
    let server: Server | undefined;
    const plugin: Plugin = { id: 'spy', build: (s) => void (server = s) };
    const err = await runSystem(system([Res(AppConfig)], () => 1), { plugins: [plugin] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemError);
    expect(server?.isDisposed).toBe(true);
  });
});

describe('assertNoLeaks', () => {
  test('passes when everything made through the server is disposed', async () => {
    const server = await createTestServer();
    const ctx = server.createContext();
    const child = ctx.child();
    createScope(child, { id: 'agent' });
    await ctx.dispose();
    expect(() => assertNoLeaks(server)).not.toThrow();
    await server.dispose();
  });

  test('lists live root contexts, their descendants and scopes', async () => {
    const server = await createTestServer();
    const ctx = server.createContext();
    const child = ctx.child();
    createScope(child, { id: 'researcher' });
    const err = (() => {
      try {
        assertNoLeaks(server);
      } catch (e) {
        return e as LeakError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(LeakError);
    expect(err?.leaks).toHaveLength(3);
    expect(err?.message).toMatch(/3 live item\(s\)/);
    expect(err?.message).toMatch(/root context #0: context at depth 0/);
    expect(err?.message).toMatch(/context #0\.0: context at depth 1/);
    expect(err?.message).toMatch(/scope #0\.0\.0: context at depth 2 \(scope researcher\)/);
    // a disposed descendant alone is not a leak of the root's subtree any more
    await child.dispose();
    expect(() => assertNoLeaks(server)).toThrow(/1 live item/);
    await ctx.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('calls every leak probe and lists what each reports', async () => {
    const server = await createTestServer();
    const live = new Set<string>(['tool "search" (scope researcher)']);
    probe.addLeakProbe(server, () => [...live]);
    probe.addLeakProbe(server, () => []);
    expect(() => assertNoLeaks(server)).toThrow(/tool "search" \(scope researcher\)/);
    live.clear();
    expect(() => assertNoLeaks(server)).not.toThrow();
    probe.addLeakProbe(server, () => {
      throw new Error('probe broke');
    });
    expect(() => assertNoLeaks(server)).toThrow(/a leak probe threw: probe broke/);
    await server.dispose();
  });
});

describe('assertNoLeaks with a real registry', () => {
  test('a tool registered through a live scope is reported until the scope is disposed', async () => {
    const { Tools, ToolsPlugin } = await import('../../src/index.js');
    const server = await createTestServer({ plugins: [new ToolsPlugin()] });
    const app = server.createContext();
    const scope = createScope(app, { id: 'researcher' });
    scope.ctx.get(Tools).register({
      name: 'search',
      description: 'search the web',
      parameters: { type: 'object', properties: {} },
      execute: async () => 'found',
    });
    expect(() => assertNoLeaks(server)).toThrow(/tool "search" of scope researcher/);
    await scope.dispose();
    expect(() => assertNoLeaks(server)).toThrow(/root context #0/);
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });
});
