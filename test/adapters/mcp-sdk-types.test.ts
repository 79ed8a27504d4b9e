/**
 * The bridges and the structural source type-check against the real MCP SDK types
 * (`@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/client` 2.x; devDependencies
 * only): the shipped bridges take each SDK's `Client`, and a bridge written by hand over
 * the 2.x client (whose `structuredContent` is `unknown`) fits `McpToolSource`. This file is
 * compiled by `npm run typecheck` (tsconfig.json includes test/): an assignment that stops
 * compiling fails the gate. Each block also runs a small assertion.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { CallToolResult as CallToolResultV2 } from '@modelcontextprotocol/client';
import {
  fromMcpSdkClient,
  fromMcpSdkV2Client,
  type McpCallToolResult,
  type McpSdkClientLike,
  type McpSdkV2ClientLike,
  type McpToolSource,
} from '../../src/adapters/index.js';

test('MCP SDK 1.x: Client is what fromMcpSdkClient takes', () => {
  const client = new Client({ name: 't', version: '1.0.0' });
  const like: McpSdkClientLike = client;
  const source: McpToolSource = fromMcpSdkClient(client);
  // the bridge the 1.x client needs by hand, for a client of your own making
  const byHand: McpToolSource = {
    listTools: (cursor) => client.listTools(cursor === undefined ? undefined : { cursor }),
    callTool: (name, args, signal) => client.callTool({ name, arguments: { ...args } }, undefined, { signal }) as Promise<McpCallToolResult>,
    close: () => client.close(),
  };
  expect([like, source, byHand].every((s) => typeof s.callTool === 'function')).toBe(true);
});

test('MCP SDK 2.x: Client is what fromMcpSdkV2Client takes; its results fit McpCallToolResult as they are', () => {
  const client = new ClientV2({ name: 't', version: '1.0.0' });
  const like: McpSdkV2ClientLike = client;
  const source: McpToolSource = fromMcpSdkV2Client(client);
  // structuredContent is `unknown` in 2.x: no cast needed any more (this was TS2322)
  const byHand: McpToolSource = {
    listTools: (cursor) => client.listTools(cursor === undefined ? undefined : { cursor }, { cacheMode: 'refresh' }),
    callTool: (name, args, signal) => client.callTool({ name, arguments: { ...args } }, { signal }),
    close: () => client.close(),
  };
  const result: CallToolResultV2 = { content: [], structuredContent: ['any', 'json', 1] };
  const fits: McpCallToolResult = result;
  expect([like, source, byHand, fits].every((s) => s !== undefined)).toBe(true);
});

test('anything else is refused at compile time too', () => {
  const check = (): void => {
    // @ts-expect-error: not a client
    fromMcpSdkClient({ listTools: async () => ({ tools: [] }) });
    // @ts-expect-error: not a client
    fromMcpSdkV2Client('client');
  };
  expect(typeof check).toBe('function');
});
