/**
 * The Vercel AI SDK's `generateText` tool loop driven by polestar, offline: the model is
 * the SDK's own `MockLanguageModelV3` (from `ai/test`), scripted to call tools and then
 * answer. polestar supplies the system prompt and the tools (`prepareTurn`), and every call
 * the model makes runs through polestar's `Tools.execute` (`executeToolCall`: schema check,
 * guards, events, and a refusal of anything the turn did not show).
 *
 * Run: `npm run build:run && node .build/examples/ai-sdk.js [--self-test]`
 */
import { dynamicTool, generateText, jsonSchema, stepCountIs, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import {
  Agents,
  AgentsPlugin,
  Events,
  Prompts,
  PromptsPlugin,
  Server,
  Tools,
  ToolsPlugin,
  type SystemContext,
  type ToolExecution,
  type ToolResult,
} from '../src/index.js';
import { executeToolCall, prepareTurn, type PreparedTurn } from '../src/adapters/index.js';

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

/**
 * The glue a user writes: polestar's shown tools as AI SDK tools. Each call runs through
 * polestar (`executeToolCall`); an error result goes back to the model as `error-text`.
 */
function toAiSdkTools(ctx: SystemContext, turn: PreparedTurn): ToolSet {
  const tools: ToolSet = {};
  for (const t of turn.tools) {
    tools[t.name] = dynamicTool({
      description: t.description,
      inputSchema: jsonSchema(t.parameters),
      execute: (input, { toolCallId, abortSignal }) =>
        executeToolCall(ctx, turn, { callId: toolCallId, name: t.name, arguments: input, ...(abortSignal ? { signal: abortSignal } : {}) }),
      toModelOutput: ({ output }) => {
        const r = output as ToolResult;
        return r.isError ? { type: 'error-text', value: r.content } : { type: 'text', value: r.content };
      },
    });
  }
  return tools;
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
const turnCtx = researcher.agent.ctx.child();
const turn = await prepareTurn(turnCtx);
const result = await generateText({
  model,
  system: turn.system,
  prompt: 'What causes tides?',
  tools: toAiSdkTools(turnCtx, turn),
  stopWhen: stepCountIs(4),
});
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

await turnCtx.dispose();
await server.dispose();
if (failures.length > 0) {
  console.error(`examples/ai-sdk.ts: ${failures.length} check(s) failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('examples/ai-sdk.ts: all checks passed');
