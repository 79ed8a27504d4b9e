// fromMcpSdkClient / fromMcpSdkV2Client return an McpToolSource whose listTools and
// callTool return promises. A client method that throws synchronously (a wrapper around a
// Client that checks its arguments, a client whose transport was never connected in some
// builds) made them throw instead of rejecting.
import { fromMcpSdkClient, fromMcpSdkV2Client } from '../../src/adapters/index.js';

const boom = (): never => {
  throw new Error('not connected');
};
const client = { listTools: boom, callTool: boom, close: async () => undefined };

test.each([
  ['fromMcpSdkClient', () => fromMcpSdkClient(client)],
  ['fromMcpSdkV2Client', () => fromMcpSdkV2Client(client)],
])('%s: listTools and callTool reject when the client throws', async (_fn, make) => {
  const source = make();
  let listed: Promise<unknown> | undefined;
  let called: Promise<unknown> | undefined;
  expect(() => { listed = source.listTools(); }).not.toThrow();
  expect(() => { called = source.callTool('echo', {}, new AbortController().signal); }).not.toThrow();
  await expect(listed).rejects.toThrow('not connected');
  await expect(called).rejects.toThrow('not connected');
});
