/**
 * The shipped bridges over Streamable HTTP, against a real MCP server started on
 * 127.0.0.1: disposing the agent that owns the mount ends the server-side session (a
 * `DELETE` arrives and the server closes it), and a call in flight at that moment reaches
 * the server as `notifications/cancelled` (its handler's signal aborts). Both client lines.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin } from '../../src/index.js';
import { fromMcpSdkClient, fromMcpSdkV2Client, mountMcpTools, type McpToolSource } from '../../src/adapters/index.js';
import { startHttpMcpServer, type HttpMcpServer } from './fixtures/mcp-http-server.js';

let http: HttpMcpServer;
let server: Server;

beforeEach(async () => {
  http = await startHttpMcpServer();
  server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
});

afterEach(async () => {
  await server.dispose();
  await http.close();
});

async function until(what: string, ok: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const lines: [string, () => Promise<McpToolSource>][] = [
  [
    'MCP SDK 1.x',
    async () => {
      const client = new Client({ name: 'polestar-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(http.url));
      return fromMcpSdkClient(client);
    },
  ],
  [
    'MCP SDK 2.x',
    async () => {
      const client = new ClientV2({ name: 'polestar-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransportV2(http.url));
      return fromMcpSdkV2Client(client);
    },
  ],
];

describe.each(lines)('%s over Streamable HTTP', (_line, connect) => {
  test('disposing the agent cancels the call in flight on the server and ends the session', async () => {
    const source = await connect();
    expect(http.open.size).toBe(1);
    const [sessionId] = [...http.open];
    const agent = await server.createContext().get(Agents).create({
      id: 'remote',
      setup: async (ctx) => void (await mountMcpTools(ctx, source, { prefix: 'r_' })),
    });
    const tools = agent.agent.ctx.get(Tools);
    expect(await tools.execute({ callId: 'c1', name: 'r_echo', arguments: { text: 'hi' } })).toMatchObject({ content: 'echo: hi', isError: false });

    const inFlight = tools.execute({ callId: 'c2', name: 'r_wait', arguments: {} });
    const requestId = await http.waitStarted();
    await agent.dispose();

    const result = await inFlight;
    expect(result.error?.code).toBe('EXECUTION_ERROR');
    expect(result.content).toMatch(/aborted/);
    // the cancellation reached the server, for that request, before the session ended
    const cancelled = http.messages.filter((m) => m.message.method === 'notifications/cancelled');
    expect(cancelled).toEqual([{ sessionId, message: expect.objectContaining({ params: expect.objectContaining({ requestId }) }) }]);
    await until('the handler of the cancelled call to see its abort', () => http.abortedCalls.includes(requestId));
    // the session is gone on the server: a DELETE arrived and the server closed the session
    expect(http.deletes).toEqual([sessionId]);
    expect(http.closed).toEqual([sessionId]);
    expect(http.open.size).toBe(0);
  });

  test('a session the server already dropped (404 on DELETE) closes quietly', async () => {
    const source = await connect();
    const mount = await mountMcpTools(server.createContext(), source);
    // the server restarts: it no longer knows this session
    const [sessionId] = [...http.open];
    await http.forgetSessions();
    await expect(mount.dispose()).resolves.toBeUndefined();
    expect(http.deletes).toEqual([sessionId]);
  });
});

test("without the bridge's termination (client.close() alone) the server keeps the session: what the bridge fixes", async () => {
  const client = new Client({ name: 'polestar-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(http.url));
  expect(http.open.size).toBe(1);
  await client.close();
  await new Promise((r) => setTimeout(r, 100));
  expect(http.deletes).toEqual([]);
  expect(http.open.size).toBe(1);
});
