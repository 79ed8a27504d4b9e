/**
 * The Vercel AI SDK's `generateText` tool loop on polestar, offline: the model is the
 * SDK's own `MockLanguageModelV3` (from `ai/test`), scripted to call tools and then answer.
 * polestar supplies the system prompt and the tools (`prepareTurn`, `toAiSdkTools`), every
 * call the model makes runs through polestar's `Tools.execute` (schema check, guards,
 * events, and a refusal of anything the turn did not show), and the conversation is kept
 * in a polestar `ConversationHistory` (`fromAiSdkMessages` / `toAiSdkMessages`).
 *
 * `--trace` prints the OpenTelemetry span tree: the AI SDK's own spans with polestar's
 * `execute_tool` spans (`polestar-di/otel`) nested under them.
 *
 * Run: `npm run build:run && node .build/examples/ai-sdk.js [--trace]`
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import {
  Agents,
  AgentsPlugin,
  ConversationHistory,
  Events,
  Prompts,
  PromptsPlugin,
  Server,
  Tools,
  ToolsPlugin,
  type ToolExecution,
  type ToolResult,
} from 'polestar-di';
import { prepareTurn } from 'polestar-di/adapters';
import { fromAiSdkMessages, toAiSdkMessages, toAiSdkTools } from 'polestar-di/adapters/ai-sdk';
import { startTracing } from './support/trace.js';

// --trace: the AI SDK's spans and polestar's, in memory, printed at the end
const tracing = process.argv.includes('--trace') ? startTracing() : undefined;
const telemetry = tracing === undefined ? undefined : { isEnabled: true, tracer: tracing.tracer('ai') };

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

// ---- the deployment: a global search tool, an agent with its persona and its own tool
const server = new Server();
server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
await server.finish();
const app = server.createContext();
app.get(Tools).register({
  name: 'search',
  description: 'Searches the web',
  parameters: { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'], additionalProperties: false },
  execute: ({ q }: { q: string }) => `3 hits for "${q}": the moon pulls the oceans`,
});
app.get(Tools).register({
  name: 'shell',
  description: 'Runs a shell command',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  execute: () => 'ran',
});
const observed: string[] = [];
app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => {
  observed.push(`${e.name}:${r.isError ? r.error?.code : 'ok'}`);
});
const researcher = await app.get(Agents).create({
  id: 'researcher',
  setup: (ctx) => {
    ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'You research. Cite your sources.' });
    ctx.get(Tools).restrict({ deny: ['shell'] });
    ctx.get(Tools).register({
      name: 'cite',
      description: 'Formats a citation',
      parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
      execute: ({ url }: { url: string }) => `[1] ${url}`,
    });
  },
});

// ---- the model: step 1 calls tools (one with bad arguments), step 2 answers from the results
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
let seenSystem = '';
let seenTools: string[] = [];
const model = new MockLanguageModelV3({
  doGenerate: async (options) => {
    const toolMessages = options.prompt.filter((m) => m.role === 'tool');
    const lastUser = options.prompt.filter((m) => m.role === 'user').at(-1);
    const asked = lastUser?.role === 'user' ? lastUser.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
    if (asked === 'Which source?') {
      return { content: [{ type: 'text', text: 'The search results, cited as [1].' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    }
    if (toolMessages.length === 0) {
      const system = options.prompt.find((m) => m.role === 'system');
      seenSystem = system?.role === 'system' ? system.content : '';
      seenTools = (options.tools ?? []).map((t) => t.name);
      return {
        content: [
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'search', input: JSON.stringify({ q: 'tides' }) },
          { type: 'tool-call', toolCallId: 'call_2', toolName: 'cite', input: JSON.stringify({ url: 42 }) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    // answer from what the tools said
    const outputs = toolMessages.flatMap((m) => (m.role === 'tool' ? m.content : [])).flatMap((p) =>
      p.type === 'tool-result' && (p.output.type === 'text' || p.output.type === 'error-text') ? [`${p.toolName}: ${p.output.value}`] : [],
    );
    return {
      content: [{ type: 'text', text: `Tides come from the moon. (${outputs.join(' | ')})` }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  },
});

// ---- one turn: polestar supplies the system prompt and the tools; Tools.execute runs the calls
const history = new ConversationHistory();
const turnCtx = researcher.agent.ctx.child();
const turn = await prepareTurn(turnCtx);
history.append({ role: 'user', content: 'What causes tides?' });
const result = await generateText({
  model,
  system: turn.system,
  messages: toAiSdkMessages(history.messages),
  tools: toAiSdkTools(turnCtx.get(Tools), { shown: turn.assembly }),
  stopWhen: stepCountIs(4),
  experimental_telemetry: telemetry,
});
for (const m of fromAiSdkMessages(result.response.messages)) history.append(m);
console.log(`answer: ${result.text}`);

check('the model saw the rendered system prompt', seenSystem === 'You research. Cite your sources.', seenSystem);
check('the model saw exactly the tools polestar showed (shell is restricted away)', JSON.stringify(seenTools) === JSON.stringify(['search', 'cite']), seenTools);
check('two steps: tool calls, then a text answer', result.steps.length === 2 && result.finishReason === 'stop', result.steps.length);
check(
  'the answer is built from the tool results, the invalid call as polestar INVALID_ARGS text',
  result.text.startsWith('Tides come from the moon.') &&
    result.text.includes('search: 3 hits for "tides"') &&
    result.text.includes('cite: Error: invalid arguments for tool "cite"'),
  result.text,
);
check('every call went through Tools.execute (tools/result observers)', JSON.stringify(observed.sort()) === JSON.stringify(['cite:INVALID_ARGS', 'search:ok']), observed);
check(
  'the history holds the turn as polestar messages: the user, the calls, both results (one an error), the answer',
  JSON.stringify(history.messages.map((m) => (m.role === 'tool' ? `tool:${m.callId}:${m.isError === true}` : m.role))) ===
    JSON.stringify(['user', 'assistant', 'tool:call_1:false', 'tool:call_2:true', 'assistant']),
  history.messages,
);

// ---- the next user message continues from polestar's history
history.append({ role: 'user', content: 'Which source?' });
const followUp = await generateText({ model, system: turn.system, messages: toAiSdkMessages(history.messages), tools: toAiSdkTools(turnCtx.get(Tools), { shown: turn.assembly }), experimental_telemetry: telemetry });
check('the follow-up is answered from the converted history', followUp.text === 'The search results, cited as [1].', followUp.text);

await turnCtx.dispose();
await server.dispose();
if (tracing !== undefined) {
  const spans = tracing.spans();
  const byId = new Map(spans.map((sp) => [sp.spanContext().spanId, sp]));
  const tools = spans.filter((sp) => sp.name.startsWith('execute_tool '));
  check('--trace: one execute_tool span per call, each under the AI SDK span of that call', tools.length === 2 && tools.every((sp) => byId.get(sp.parentSpanContext?.spanId ?? '')?.name === 'ai.toolCall'), tools.map((sp) => sp.name));
  console.log(tracing.tree());
  await tracing.stop();
}
if (failures.length > 0) {
  console.error(`examples/ai-sdk.ts: ${failures.length} check(s) failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('examples/ai-sdk.ts: all checks passed');
