/**
 * Over Streamable HTTP, a call in flight when its mount was disposed never reached the
 * server as `notifications/cancelled`: closing the client cut the notification's request
 * off. The shipped bridge ends the session before closing, and the server sees the cancel.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server, Tools, ToolsPlugin } from '../../src/index.js';
import { fromMcpSdkClient, mountMcpTools } from '../../src/adapters/index.js';
import { startHttpMcpServer } from '../adapters/fixtures/mcp-http-server.js';

test('a call in flight when its MCP mount is disposed reaches the server as notifications/cancelled', async () => {
  const http = await startHttpMcpServer();
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  try {
    const client = new Client({ name: 'polestar-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(http.url));
    const app = server.createContext();
    const mount = await mountMcpTools(app, fromMcpSdkClient(client));
    const inFlight = app.get(Tools).execute({ callId: 'c1', name: 'wait', arguments: {} });
    const requestId = await http.waitStarted();
    await mount.dispose();
    expect((await inFlight).error?.code).toBe('EXECUTION_ERROR');
    const cancelled = http.messages.filter((m) => m.message.method === 'notifications/cancelled');
    expect(cancelled.map((m) => (m.message.params as { requestId?: unknown }).requestId)).toEqual([requestId]);
  } finally {
    await server.dispose();
    await http.close();
  }
});
