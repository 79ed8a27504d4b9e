/**
 * The MCP SDK 1.x client as polestar's structural source (the bridge the docs show), and a
 * helper starting a reference server from node_modules as a child process over stdio.
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpCallToolResult, McpToolSource } from '../../src/adapters/index.js';

/** The SDK 1.x bridge: `callTool(params, resultSchema?, options?)`. */
export function fromMcpSdkClient(client: Client): McpToolSource {
  return {
    listTools: (cursor) => client.listTools(cursor === undefined ? undefined : { cursor }),
    callTool: (name, args, signal) => client.callTool({ name, arguments: { ...args } }, undefined, { signal }) as Promise<McpCallToolResult>,
    close: () => client.close(),
    onToolsChanged: (listener) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => listener()),
  };
}

/** A connected client to `@modelcontextprotocol/<pkg>` started with `node <its bin> ...args`, and the child's pid. */
export async function startServer(pkg: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ client: Client; pid: number }> {
  const script = createRequire(import.meta.url).resolve(`@modelcontextprotocol/${pkg}/dist/index.js`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script, ...args],
    env: { ...getDefaultEnvironment(), ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'polestar-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error(`${pkg} did not start`);
  return { client, pid };
}

/** Whether a process with this pid still runs. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
