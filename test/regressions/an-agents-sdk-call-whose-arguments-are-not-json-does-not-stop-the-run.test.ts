// A function tool built by hand in the Agents SDK's structural FunctionTool shape counts, for
// the SDK, as having a dynamic approval policy: a call whose arguments are not JSON then
// interrupts the run for a human approval (finalOutput undefined) instead of telling the
// model to retry. toAgentsSdkTools makes its tools with the SDK's own factory, so such a call
// is answered with the SDK's parse error and the run goes on.
import { Agent, run, setTracingDisabled, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { Server, Tools, ToolsPlugin } from '../../src/index.js';
import { toAgentsSdkTools } from '../../src/adapters/openai-agents.js';

setTracingDisabled(true);

test('a call with arguments that are not JSON gets an answer, and the run finishes', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const tools = server.createContext().get(Tools);
  tools.register({ name: 'search', description: 's', parameters: { type: 'object', properties: { q: { type: 'string' } } }, execute: () => 'hits' });
  const script: ModelResponse['output'][] = [
    [{ type: 'function_call', callId: 'fc_1', name: 'search', arguments: '{"q":', status: 'completed' }],
    [{ type: 'function_call', callId: 'fc_2', name: 'search', arguments: '[1]', status: 'completed' }],
    [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }],
  ];
  const requests: ModelRequest[] = [];
  const model: Model = {
    getResponse: async (request) => {
      requests.push(request);
      return { usage: new Usage(), output: script[requests.length - 1] };
    },
    getStreamedResponse: () => {
      throw new Error('not streamed');
    },
  };
  const result = await run(new Agent({ name: 'a', model, tools: toAgentsSdkTools(tools) }), 'x');
  expect(result.interruptions).toEqual([]);
  expect(result.finalOutput).toBe('done');
  // the JSON array reached polestar, which answered INVALID_ARGS
  const last = requests[2].input;
  const outputs = Array.isArray(last) ? last.flatMap((i) => (i.type === 'function_call_result' ? [JSON.stringify(i.output)] : [])) : [];
  expect(outputs[1]).toContain('invalid arguments for tool');
  await server.dispose();
});
