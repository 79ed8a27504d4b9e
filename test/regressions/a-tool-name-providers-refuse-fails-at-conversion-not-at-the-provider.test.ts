// A tool registered as "web search" passed `register` and failed only when the provider
// refused the request. Converting tools for the AI SDK or the Agents SDK now refuses it at
// once, with a TypeError naming every offending tool, like the other converters. The
// Agents SDK's own factory would have renamed "get-weather" to "get_weather" silently: the
// model is shown polestar's name unchanged.
import { Server, Tools, ToolsPlugin } from '../../src/index.js';
import { toAiSdkTools } from '../../src/adapters/ai-sdk.js';
import { toAgentsSdkTools } from '../../src/adapters/openai-agents.js';

test('"web search" is refused by both SDK adapters; "get-weather" keeps its name', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const tools = server.createContext().get(Tools);
  tools.register({ name: 'get-weather', description: 'Weather', parameters: { type: 'object' }, execute: () => 'sunny' });
  expect(Object.keys(toAiSdkTools(tools))).toEqual(['get-weather']);
  expect(toAgentsSdkTools(tools).map((t) => t.name)).toEqual(['get-weather']);

  tools.register({ name: 'web search', description: 'Searches', parameters: { type: 'object' }, execute: () => '' });
  tools.register({ name: 'x'.repeat(65), description: 'Too long', parameters: { type: 'object' }, execute: () => '' });
  for (const convert of [() => toAiSdkTools(tools), () => toAgentsSdkTools(tools)]) {
    expect(convert).toThrow(TypeError);
    expect(convert).toThrow(new RegExp(`tool names "web search", "${'x'.repeat(65)}" do not match`));
  }
  await server.dispose();
});
