/**
 * The OpenAI Agents SDK's `run()` loop on polestar, offline: the model is a scripted
 * implementation of the SDK's own `Model` interface (it answers each request with the next
 * scripted output), calling tools and then answering. polestar supplies the instructions
 * and the tools (`prepareTurn`, `toAgentsSdkTools`), and every call runs through
 * polestar's `Tools.execute`. A failed call *returns* polestar's error text to the model
 * (the SDK would replace a thrown message with a generic one), and each tool is sent with
 * `strict: true` only when its schema is inside OpenAI's strict subset.
 *
 * `--trace` prints polestar's OpenTelemetry spans (`polestar-di/otel`): one `execute_tool`
 * span per call, under the request's own span. (The Agents SDK's own traces are not
 * OpenTelemetry and stay disabled here: offline, no exporter.)
 *
 * Run: `npm run build:run && node .build/examples/openai-agents.js [--trace]`
 */
import { Agent, run, setTracingDisabled, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { Agents, AgentsPlugin, Events, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin, type ToolExecution, type ToolResult } from 'polestar-di';
import { prepareTurn } from 'polestar-di/adapters';
import { toAgentsSdkTools } from 'polestar-di/adapters/openai-agents';
import { startTracing } from './support/trace.js';

// --trace: polestar's spans in memory, printed at the end
const tracing = process.argv.includes('--trace') ? startTracing() : undefined;

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

/** A model that answers each request with the next scripted output (the SDK's `Model` interface). */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: ModelResponse['output'][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.script[this.requests.length - 1];
    if (output === undefined) throw new Error(`the script has no answer for request ${this.requests.length}`);
    return { usage: new Usage(), output };
  }
  getStreamedResponse(): AsyncIterable<never> {
    throw new Error('this example does not stream');
  }
}

setTracingDisabled(true); // offline: no trace exporter

const server = new Server();
server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
await server.finish();
const app = server.createContext();
const observed: string[] = [];
app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => {
  observed.push(`${e.name}:${r.isError ? r.error?.code : 'ok'}`);
});
app.get(Tools).register({
  name: 'search',
  description: 'Searches the web',
  parameters: { type: 'object', properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1 } }, required: ['q'] },
  execute: ({ q }: { q: string }) => `3 hits for "${q}"`,
});
const researcher = await app.get(Agents).create({
  id: 'researcher',
  setup: (ctx) => {
    ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'You research.' });
    ctx.get(Tools).register({
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      execute: ({ city }: { city: string }) => `Sunny in ${city}`,
    });
  },
});

const call = (callId: string, name: string, args: unknown) => ({ type: 'function_call' as const, callId, name, arguments: JSON.stringify(args), status: 'completed' as const });
const model = new ScriptedModel([
  [call('fc_1', 'search', { q: 'tides' }), call('fc_2', 'search', { q: 'moons', limit: 0 }), call('fc_3', 'get_weather', { city: 'Oslo' })],
  [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Tides come from the moon.' }] }],
]);
const turnCtx = researcher.agent.ctx.child();
const turn = await prepareTurn(turnCtx);
const agent = new Agent({ name: 'researcher', instructions: turn.system, model, tools: toAgentsSdkTools(turnCtx.get(Tools), { shown: turn.assembly }) });
const result =
  tracing === undefined
    ? await run(agent, 'What causes tides?')
    : await tracing.tracer('example').startActiveSpan('POST /research', async (span) => {
        try {
          return await run(agent, 'What causes tides?');
        } finally {
          span.end();
        }
      });

check('the final output is the scripted answer', result.finalOutput === 'Tides come from the moon.', result.finalOutput);
const first = model.requests[0];
check("the model got polestar's system prompt as instructions", first?.systemInstructions === 'You research.', first?.systemInstructions);
const shown = (first?.tools ?? []).map((t) => (t.type === 'function' ? `${t.name}:${t.strict ? 'strict' : 'not strict'}` : t.type));
check('the tools reached the model strict only where the schema allows it', JSON.stringify(shown) === JSON.stringify(['search:not strict', 'get_weather:strict']), shown);
check('every call ran through Tools.execute; the bad one is INVALID_ARGS', JSON.stringify([...observed].sort()) === JSON.stringify(['get_weather:ok', 'search:INVALID_ARGS', 'search:ok']), observed);
const sent = Array.isArray(model.requests[1]?.input) ? model.requests[1].input : [];
const errorText = sent.flatMap((item) => (item.type === 'function_call_result' && item.callId === 'fc_2' ? [item.output] : []))[0];
check("the model got polestar's error text for the bad call", JSON.stringify(errorText).includes('invalid arguments for tool \\"search\\"'), errorText);

await turnCtx.dispose();
await server.dispose();
if (tracing !== undefined) {
  const spans = tracing.spans();
  const root = spans.find((sp) => sp.name === 'POST /research');
  const tools = spans.filter((sp) => sp.name.startsWith('execute_tool '));
  check('--trace: one execute_tool span per call, under the request span', tools.length === 3 && tools.every((sp) => sp.parentSpanContext?.spanId === root?.spanContext().spanId), tools.map((sp) => sp.name));
  console.log(tracing.tree());
  await tracing.stop();
}
if (failures.length > 0) {
  console.error(`examples/openai-agents.ts: ${failures.length} check(s) failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('examples/openai-agents.ts: all checks passed');
