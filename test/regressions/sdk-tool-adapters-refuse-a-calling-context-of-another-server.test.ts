// toAiSdkTools / toAgentsSdkTools(tools, { ctx }) list the tools of the `tools` view and run
// the calls through `ctx`'s Tools. Given a `ctx` of another server, the model was shown the
// first server's tools while its calls ran the other server's tool of the same name
// (silently, with that server's guards and events). The conversion now refuses it.
import { Server, Tools, ToolsPlugin, type SystemContext } from '../../src/index.js';
import { toAiSdkTools } from '../../src/adapters/ai-sdk.js';
import { toAgentsSdkTools } from '../../src/adapters/openai-agents.js';

async function serverWithPing(answer: string): Promise<{ server: Server; ctx: SystemContext }> {
  const server = new Server().addPlugins(new ToolsPlugin());
  await server.finish();
  const ctx = server.createContext();
  ctx.get(Tools).register({ name: 'ping', description: `answers ${answer}`, parameters: { type: 'object' }, execute: () => answer });
  return { server, ctx };
}

test.each([
  ['toAiSdkTools', (tools: Tools, ctx: SystemContext) => toAiSdkTools(tools, { ctx })],
  ['toAgentsSdkTools', (tools: Tools, ctx: SystemContext) => toAgentsSdkTools(tools, { ctx })],
])('%s refuses a ctx of another server than the tools view', async (fn, convert) => {
  const a = await serverWithPing('a');
  const b = await serverWithPing('b');
  expect(() => convert(a.ctx.get(Tools), b.ctx)).toThrow(TypeError);
  expect(() => convert(a.ctx.get(Tools), b.ctx)).toThrow(new RegExp(`^${fn}\\(tools, options\\): ctx belongs to another server than the tools view`));
  // the same server's contexts are fine
  const turn = a.ctx.child();
  expect(() => convert(a.ctx.get(Tools), turn)).not.toThrow();
  await a.server.dispose();
  await b.server.dispose();
});
