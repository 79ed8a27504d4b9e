/**
 * The OpenAI Agents SDK's `run()` loop driven by polestar, offline: the model is the SDK's
 * own `ScriptedModel` (from `@openai/agents/testing`), scripted to call tools and then
 * answer. polestar supplies the instructions and the tools (`prepareTurn`), and every call
 * runs through polestar's `Tools.execute` (`executeToolCall`).
 *
 * Two things the glue must get right: tools are declared `strict: false` (polestar's
 * schemas are not OpenAI-strict: optional properties stay optional), and a failed call
 * *returns* polestar's error text instead of throwing (the SDK would replace a thrown
 * message with "An error occurred while running the tool").
 *
 * Run: `npm run build:run && node .build/examples/openai-agents.js [--self-test]`
 */
import { Agent as SdkAgent, run, setTracingDisabled, tool, type FunctionTool } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { Agents, AgentsPlugin, Events, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin, type SystemContext, type ToolExecution, type ToolResult } from '../src/index.js';
import { executeToolCall, prepareTurn, type PreparedTurn } from '../src/adapters/index.js';

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

/** The SDK's non-strict object schema type (not exported by name). */
type NonStrictParameters = Extract<NonNullable<Parameters<typeof tool>[0]['parameters']>, { additionalProperties: true }>;

/** The glue a user writes: polestar's shown tools as Agents SDK function tools. */
function toAgentsSdkTools(ctx: SystemContext, turn: PreparedTurn): FunctionTool[] {
  return turn.tools.map((t) =>
    tool({
      name: t.name,
      description: t.description,
      // the SDK's type wants a strict-looking object schema; at run time it passes ours on as is
      parameters: t.parameters as unknown as NonStrictParameters,
      strict: false,
      execute: async (input, _runContext, details) => {
        const callId = details?.toolCall?.callId ?? `call_${t.name}`;
        const r: ToolResult = await executeToolCall(ctx, turn, { callId, name: t.name, arguments: input });
        return r.content; // an error result reads "Error: <reason>": return it, do not throw it
      },
    }) as unknown as FunctionTool,
  );
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
  },
});

const model = new ScriptedModel([
  [functionCall('search', { q: 'tides' }, { callId: 'fc_1' }), functionCall('search', { q: 'moons', limit: 0 }, { callId: 'fc_2' })],
  [assistantMessage('Tides come from the moon.')],
]);
const turnCtx = researcher.agent.ctx.child();
const turn = await prepareTurn(turnCtx);
const agent = new SdkAgent({ name: 'researcher', instructions: turn.system, model, tools: toAgentsSdkTools(turnCtx, turn) });
const result = await run(agent, 'What causes tides?');

check('the final output is the scripted answer', result.finalOutput === 'Tides come from the moon.', result.finalOutput);
const first = model.firstCall?.request;
check('the model got polestar\'s system prompt as instructions', first?.systemInstructions === 'You research.', first?.systemInstructions);
const shownTool = first?.tools?.[0] as { name?: string; strict?: boolean } | undefined;
check('the tool reached the model non-strict', shownTool?.name === 'search' && shownTool.strict === false, shownTool);
check('both calls ran through Tools.execute; the bad one is INVALID_ARGS', JSON.stringify([...observed].sort()) === JSON.stringify(['search:INVALID_ARGS', 'search:ok']), observed);
model.assertComplete();

await turnCtx.dispose();
await server.dispose();
if (failures.length > 0) {
  console.error(`examples/openai-agents.ts: ${failures.length} check(s) failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('examples/openai-agents.ts: all checks passed');
