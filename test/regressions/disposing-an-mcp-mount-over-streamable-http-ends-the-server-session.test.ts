/**
 * Disposing a mount over Streamable HTTP used to close the client only: no `DELETE` was sent
 * and the server kept the session until it expired. The shipped bridge terminates the
 * session first.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server, ToolsPlugin } from '../../src/index.js';
import { fromMcpSdkClient, mountMcpTools } from '../../src/adapters/index.js';
import { startHttpMcpServer } from '../adapters/fixtures/mcp-http-server.js';

test('disposing an MCP mount over Streamable HTTP ends the server-side session', async () => {
  const http = await startHttpMcpServer();
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  try {
    const client = new Client({ name: 'polestar-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(http.url));
    const [sessionId] = [...http.open];
    const mount = await mountMcpTools(server.createContext(), fromMcpSdkClient(client));
    await mount.dispose();
    expect(http.deletes).toEqual([sessionId]);
    expect(http.open.size).toBe(0);
  } finally {
    await server.dispose();
    await http.close();
  }
});
