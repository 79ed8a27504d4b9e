import { Server, ToolsPlugin, type Plugin, type SystemContext, type ToolDefinition } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

export async function toolServer(...extra: Plugin[]): Promise<{ server: Server; app: SystemContext }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), ...extra);
  await server.finish();
  return { server, app: server.createContext() };
}

export function tool(name: string, body: (args: any) => unknown = () => name, extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
    execute: body,
    ...extra,
  };
}

export function leaks(server: Server): string[] {
  return probe.registrationLeaks(server);
}
