/**
 * The Agents SDK adapter's outputs are the SDK's own types, with no casts: this file is
 * compiled by the type check (tsconfig.json includes test/), so an assignment that stops
 * compiling fails the gate. Each block also runs a small assertion.
 */
import { Agent, type FunctionTool, type Tool } from '@openai/agents';
import { Server, Tools, ToolsPlugin } from '../../src/index.js';
import { toAgentsSdkTools, type AgentsSdkTool } from '../../src/adapters/openai-agents.js';

interface AppContext {
  readonly userId: string;
}

test('toAgentsSdkTools gives FunctionTools an Agent accepts, for any run context type', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const tools = server.createContext().get(Tools);
  tools.register({ name: 'search', description: 'Searches', parameters: { type: 'object' }, execute: () => 'hits' });

  const functionTools: FunctionTool[] = toAgentsSdkTools(tools);
  const asTools: Tool[] = toAgentsSdkTools(tools);
  const withContext: AgentsSdkTool<AppContext>[] = toAgentsSdkTools<AppContext>(tools, { strict: 'auto' });
  const agent = new Agent<AppContext>({ name: 'a', tools: withContext });
  const plain = new Agent({ name: 'b', tools: toAgentsSdkTools(tools) });
  expect(functionTools.map((t) => t.name)).toEqual(['search']);
  expect(asTools).toHaveLength(1);
  expect(agent.tools).toHaveLength(1);
  expect(plain.tools[0].type).toBe('function');
  await server.dispose();
});
