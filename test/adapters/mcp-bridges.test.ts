/**
 * `fromMcpSdkClient` (MCP SDK 1.x) and `fromMcpSdkV2Client` (MCP SDK 2.x): refused inputs,
 * and the real reference servers from npm (server-everything, server-memory,
 * server-filesystem) over stdio through each line: listed, called (text, structured content,
 * errors, cancellation), and every child gone with its agent, leaving no process listener.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin, type AgentHandle } from '../../src/index.js';
import { fromMcpSdkClient, fromMcpSdkV2Client, mountMcpTools, type McpMount, type McpSdkClientLike, type McpSdkV2ClientLike } from '../../src/adapters/index.js';
import { exited, isAlive, processListeners, referenceServer, startStdio, type SdkLine } from './fixtures/mcp-stdio.js';

describe('refused clients: a synchronous TypeError naming the method', () => {
  const bridges: [string, (c: never) => unknown][] = [
    ['fromMcpSdkClient', fromMcpSdkClient as (c: never) => unknown],
    ['fromMcpSdkV2Client', fromMcpSdkV2Client as (c: never) => unknown],
  ];
  const ok = { listTools: async () => ({ tools: [] }), callTool: async () => ({}), close: async () => undefined };
  test.each(bridges)('%s', (name, bridge) => {
    for (const m of ['listTools', 'callTool', 'close'] as const) {
      const { [m]: _gone, ...rest } = ok;
      expect(() => bridge(rest as never)).toThrow(new RegExp(`^${name}\\(client\\): client\\.${m} must be a function, got undefined`));
      expect(() => bridge({ ...ok, [m]: 'yes' } as never)).toThrow(TypeError);
    }
    expect(() => bridge(null as never)).toThrow(new RegExp(`^${name}\\(client\\): client must be a connected MCP SDK Client, got null`));
    expect(() => bridge(ok as never)).not.toThrow();
  });

  test('a 2.x client given to the 1.x bridge (its signal would be dropped) is refused, naming the right bridge', () => {
    const v2 = new ClientV2({ name: 'x', version: '1.0.0' });
    expect(() => fromMcpSdkClient(v2 as unknown as McpSdkClientLike)).toThrow(/looks like an MCP SDK 2\.x Client.*use fromMcpSdkV2Client\(client\)/);
    expect(() => fromMcpSdkV2Client(v2 as McpSdkV2ClientLike)).not.toThrow();
  });
});

describe('the bridges pass the SDK calls through', () => {
  test('1.x: one page per cursor, the signal in the third argument, close once', async () => {
    const seen: unknown[][] = [];
    let closes = 0;
    const client: McpSdkClientLike = {
      listTools: async (...a: unknown[]) => (seen.push(['list', ...a]), { tools: [] }),
      callTool: async (...a: unknown[]) => (seen.push(['call', ...a]), { content: [], structuredContent: 42 }),
      close: async () => void closes++,
    };
    const source = fromMcpSdkClient(client);
    await source.listTools();
    await source.listTools('p2');
    const signal = new AbortController().signal;
    expect(await source.callTool('t', { a: 1 }, signal)).toEqual({ content: [], structuredContent: 42 });
    await Promise.all([source.close(), source.close()]);
    expect(seen).toEqual([['list', undefined], ['list', { cursor: 'p2' }], ['call', { name: 't', arguments: { a: 1 } }, undefined, { signal }]]);
    expect(closes).toBe(1);
  });

  test('2.x: the client aggregates pages (cache refreshed), the signal in the second argument', async () => {
    const seen: unknown[][] = [];
    const client: McpSdkV2ClientLike = {
      listTools: async (...a: unknown[]) => (seen.push(['list', ...a]), { tools: [] }),
      callTool: async (...a: unknown[]) => (seen.push(['call', ...a]), { content: [] }),
      close: async () => undefined,
    };
    const source = fromMcpSdkV2Client(client);
    await source.listTools();
    const signal = new AbortController().signal;
    await source.callTool('t', {}, signal);
    expect(seen).toEqual([['list', undefined, { cacheMode: 'refresh' }], ['call', { name: 't', arguments: {} }, { signal }]]);
  });

  test("list_changed goes through the client's fallback handler, chained with one already set and restored on close", async () => {
    const got: string[] = [];
    const mine = async (n: { method: string }): Promise<void> => void got.push(`mine ${n.method}`);
    const client = {
      fallbackNotificationHandler: mine as ((n: { method: string }) => Promise<void>) | undefined,
      listTools: async () => ({ tools: [] }),
      callTool: async () => ({ content: [] }),
      close: async () => undefined,
    };
    const source = fromMcpSdkClient(client);
    source.onToolsChanged?.(() => void got.push('mount'));
    await client.fallbackNotificationHandler?.({ method: 'notifications/tools/list_changed' });
    await client.fallbackNotificationHandler?.({ method: 'notifications/message' });
    expect(got).toEqual(['mount', 'mine notifications/tools/list_changed', 'mine notifications/message']);
    await source.close();
    expect(client.fallbackNotificationHandler).toBe(mine);
  });
});

describe.each(['1.x', '2.x'] as SdkLine[])('reference servers through the %s bridge', (line) => {
  let dir: string;
  let server: Server;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'polestar-mcp-bridge-'));
    server = new Server();
    server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
    await server.finish();
  });
  afterEach(async () => {
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('everything, memory and filesystem in one agent: calls, structured content, errors, cancellation; every child exits with the agent', async () => {
    const listenersBefore = processListeners();
    const [everything, memory, fs] = await Promise.all([
      startStdio(line, referenceServer('server-everything'), ['stdio']),
      startStdio(line, referenceServer('server-memory'), [], { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }),
      startStdio(line, referenceServer('server-filesystem'), [dir]),
    ]);
    const mounts: McpMount[] = [];
    const agent: AgentHandle = await server.createContext().get(Agents).create({
      id: 'librarian',
      setup: async (ctx) => {
        mounts.push(
          ...(await Promise.all([
            mountMcpTools(ctx, everything.source, { prefix: 'ev_' }),
            mountMcpTools(ctx, memory.source, { prefix: 'mem_' }),
            mountMcpTools(ctx, fs.source, { prefix: 'fs_' }),
          ])),
        );
      },
    });
    const [ev, mem, files] = mounts;
    expect(ev.names).toEqual(expect.arrayContaining(['ev_echo', 'ev_get-sum', 'ev_get-structured-content', 'ev_trigger-long-running-operation']));
    expect(mem.names).toEqual(expect.arrayContaining(['mem_create_entities', 'mem_search_nodes']));
    expect(files.names).toEqual(expect.arrayContaining(['fs_read_text_file', 'fs_write_file']));
    const tools = agent.agent.ctx.get(Tools);

    expect(await tools.execute({ callId: 'e1', name: 'ev_echo', arguments: { message: 'hi' } })).toMatchObject({ content: 'Echo: hi', isError: false });
    const weather = await tools.execute({ callId: 'e2', name: 'ev_get-structured-content', arguments: { location: 'Chicago' } });
    expect(weather.isError).toBe(false);
    expect((weather.output as { structuredContent?: { conditions?: unknown } }).structuredContent?.conditions).toEqual(expect.any(String));

    await tools.execute({ callId: 'm1', name: 'mem_create_entities', arguments: { entities: [{ name: 'polestar', entityType: 'library', observations: ['mounts MCP tools'] }] } });
    expect((await tools.execute({ callId: 'm2', name: 'mem_search_nodes', arguments: { query: 'polestar' } })).content).toContain('mounts MCP tools');

    const file = join(dir, 'note.txt');
    expect((await tools.execute({ callId: 'f1', name: 'fs_write_file', arguments: { path: file, content: 'hello' } })).isError).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('hello');
    const denied = await tools.execute({ callId: 'f2', name: 'fs_read_text_file', arguments: { path: '/etc/hostname' } });
    expect(denied.error?.code).toBe('EXECUTION_ERROR');
    expect(denied.content).toMatch(/^Error: .*[Aa]ccess denied/);

    // the caller gives up: the call settles at once
    const t0 = Date.now();
    const slow = await tools.execute({ callId: 'e3', name: 'ev_trigger-long-running-operation', arguments: { duration: 30, steps: 3 }, signal: AbortSignal.timeout(200) });
    expect(slow.error?.code).toBe('EXECUTION_ERROR');
    expect(Date.now() - t0).toBeLessThan(5_000);

    const inFlight = tools.execute({ callId: 'e4', name: 'ev_trigger-long-running-operation', arguments: { duration: 30, steps: 3 } });
    await new Promise((r) => setTimeout(r, 100));
    expect([everything.pid, memory.pid, fs.pid].every(isAlive)).toBe(true);
    await agent.dispose();
    expect((await inFlight).content).toMatch(/aborted/);
    for (const pid of [everything.pid, memory.pid, fs.pid]) expect(await exited(pid)).toBe(true);
    expect(processListeners()).toBe(listenersBefore);
  });
});
