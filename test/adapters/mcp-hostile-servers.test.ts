/**
 * Hostile MCP servers (test/adapters/fixtures/mcp-hostile-server.mjs, a child process over
 * stdio) through both shipped bridges: a listing polestar refuses fails the mount with a
 * `McpMountError` naming the tool and the fix, rolls every registration back and closes
 * the client; a name providers refuse mounts and is refused by the converters naming it;
 * a huge output arrives whole; a crash mid-call fails that call. In every case the child
 * is gone and no process listener is left behind.
 */
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin } from '../../src/index.js';
import { McpMountError, mountMcpTools, toOpenAIChatTools, type McpMount } from '../../src/adapters/index.js';
import { exited, hostileServer, isAlive, processListeners, startStdio, type SdkLine } from './fixtures/mcp-stdio.js';

let server: Server;
let listenersBefore: number;

beforeEach(async () => {
  listenersBefore = processListeners();
  server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
});

afterEach(async () => {
  await server.dispose();
  expect(processListeners()).toBe(listenersBefore);
});

describe.each(['1.x', '2.x'] as SdkLine[])('through the %s bridge', (line) => {
  const refused: [string, RegExp, string][] = [
    ['duplicate', /the MCP server listed tool "echo" twice; skip one with options\.filter/, 'echo'],
    ['draft-04', /could not register MCP tool "old": .*draft-04.*Skip it with options\.filter/s, 'old'],
    ['async-schema', /could not register MCP tool "async": .*\$async.*Skip it with options\.filter/s, 'async'],
  ];
  test.each(refused)('a server listing %s: the mount rejects naming the tool, rolls back, and the child exits', async (mode, message, toolName) => {
    const { source, pid } = await startStdio(line, hostileServer, [mode]);
    const app = server.createContext();
    const err = await mountMcpTools(app, source).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpMountError);
    expect((err as McpMountError).message).toMatch(message);
    expect((err as McpMountError).toolName).toBe(toolName);
    expect(app.get(Tools).knownNames()).toEqual([]);
    expect(await exited(pid)).toBe(true);
  });

  test('a tool with an empty name is refused (the listing is not MCP); the child exits', async () => {
    const { source, pid } = await startStdio(line, hostileServer, ['empty-name']);
    const err = await mountMcpTools(server.createContext(), source).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpMountError);
    expect((err as Error).message).toMatch(/at index 1 named "", not a tool with a non-empty name: the MCP server's listing is invalid/);
    expect(await exited(pid)).toBe(true);
  });

  test('a name providers refuse mounts (MCP allows it), the converters refuse it naming it, and filter skips it', async () => {
    const first = await startStdio(line, hostileServer, ['provider-name']);
    const agent = await server.createContext().get(Agents).create({ id: 'a' });
    const mount = await mountMcpTools(agent.agent.ctx, first.source);
    expect(mount.names).toEqual(['echo', 'web search']);
    expect(() => toOpenAIChatTools(agent.agent.ctx.get(Tools).schemas())).toThrow(/web search/);
    await mount.dispose();
    expect(await exited(first.pid)).toBe(true);

    const second = await startStdio(line, hostileServer, ['provider-name']);
    const filtered = await mountMcpTools(agent.agent.ctx, second.source, { filter: (t) => /^[a-zA-Z0-9_-]{1,64}$/.test(t.name) });
    expect(filtered.names).toEqual(['echo']);
    expect(() => toOpenAIChatTools(agent.agent.ctx.get(Tools).schemas())).not.toThrow();
    await agent.dispose();
    expect(await exited(second.pid)).toBe(true);
  });

  test('a huge output (8 MiB of text) arrives whole', async () => {
    const { source, pid } = await startStdio(line, hostileServer, ['huge', String(8 * 1024 * 1024)]);
    const mount: McpMount = await mountMcpTools(server.createContext(), source);
    const r = await server.createContext().get(Tools).execute({ callId: 'c1', name: 'echo', arguments: { text: 'x' } });
    expect(r.isError).toBe(false);
    expect(r.content.length).toBe(8 * 1024 * 1024);
    await mount.dispose();
    expect(await exited(pid)).toBe(true);
  });

  test('a crash mid-call fails that call (EXECUTION_ERROR, not a hang); later calls fail the same way; dispose still closes', async () => {
    const { source, pid } = await startStdio(line, hostileServer, ['crash']);
    const agent = await server.createContext().get(Agents).create({ id: 'a' });
    await mountMcpTools(agent.agent.ctx, source);
    const tools = agent.agent.ctx.get(Tools);
    expect((await tools.execute({ callId: 'c1', name: 'echo', arguments: { text: 'x' } })).content).toBe('echo: x');
    const crashed = await tools.execute({ callId: 'c2', name: 'crash', arguments: {} });
    expect(crashed.error?.code).toBe('EXECUTION_ERROR');
    expect(crashed.content).toMatch(/[Cc]onnection closed|[Nn]ot connected/);
    expect(await exited(pid)).toBe(true);
    const after = await tools.execute({ callId: 'c3', name: 'echo', arguments: { text: 'x' } });
    expect(after.error?.code).toBe('EXECUTION_ERROR');
    await expect(agent.dispose()).resolves.toBeUndefined();
    expect(isAlive(pid)).toBe(false);
  });

  test("the server's list_changed re-syncs the mount through the bridge", async () => {
    const { source, pid } = await startStdio(line, hostileServer, ['changing']);
    const mount = await mountMcpTools(server.createContext(), source);
    expect(mount.names).toEqual(['echo', 'add']);
    await server.createContext().get(Tools).execute({ callId: 'c1', name: 'add', arguments: {} });
    const end = Date.now() + 5_000;
    while (!mount.names.includes('extra') && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(mount.names).toEqual(['echo', 'add', 'extra']);
    await mount.dispose();
    expect(await exited(pid)).toBe(true);
  });
});
