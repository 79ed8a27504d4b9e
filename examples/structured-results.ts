/**
 * Structured results from a subagent, offline: a researcher delegates the write-up to a
 * writer subagent that must return `{ title, body }`. The writer's model is the AI SDK's
 * `MockLanguageModelV3` (from `ai/test`), scripted to call the capture tool once with bad
 * arguments, then correctly. polestar gives the writer (and only the writer) the capture
 * tool `structured_output` and its instruction, commits the value at the call's final
 * result, stops the task, and `taskStopped(task)` ends the `generateText` loop there.
 *
 * Run: `npm run build:run && node .build/examples/structured-results.js`
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { Agents, AgentsPlugin, Prompts, PromptsPlugin, Server, Tools, ToolsPlugin } from 'polestar-di';
import { prepareTurn } from 'polestar-di/adapters';
import { taskStopped, toAiSdkTools } from 'polestar-di/adapters/ai-sdk';

const failures: string[] = [];
function check(what: string, ok: boolean, detail: unknown = ''): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` (${JSON.stringify(detail)})`}`);
  if (!ok) failures.push(what);
}

// ---- the deployment: a researcher, and a writer kind with its persona
const server = new Server();
server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
await server.finish();
const app = server.createContext();
const agents = app.get(Agents);
const { agent: researcher } = await agents.create({ id: 'researcher' });
agents.define('writer', {
  setup: (ctx) => void ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'You write short, clear articles.' }),
});

// ---- the writer's model: a wrong first try (no body), then the answer
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
let steps = 0;
let seenSystem = '';
let seenTools: string[] = [];
const model = new MockLanguageModelV3({
  doGenerate: async (options) => {
    steps++;
    if (steps === 1) {
      const system = options.prompt.find((m) => m.role === 'system');
      seenSystem = system?.role === 'system' ? system.content : '';
      seenTools = (options.tools ?? []).map((t) => t.name);
    }
    const input = steps === 1 ? { title: 'Why the sea has tides' } : { title: 'Why the sea has tides', body: 'The moon pulls the oceans toward it.' };
    return {
      content: [{ type: 'tool-call', toolCallId: `call_${steps}`, toolName: 'structured_output', input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    };
  },
});

// ---- the delegation: a one-task writer subagent that must return { title, body }
const Article = z.object({ title: z.string().min(1), body: z.string().min(1) });
const { value, result } = await agents.runTask({
  parent: researcher,
  kind: 'writer',
  output: Article,
  fn: async (writer, task) => {
    const turn = await prepareTurn(writer.ctx);
    const out = await generateText({
      model,
      system: turn.system,
      prompt: 'Write a short article about tides from these notes: the moon pulls the oceans.',
      tools: toAiSdkTools(writer.ctx.get(Tools), { shown: turn.assembly }),
      stopWhen: [taskStopped(task), stepCountIs(6)],
    });
    return { steps: out.steps.length, stopped: task.stopped };
  },
});
console.log(`the writer returned: ${JSON.stringify(value)}`);

check('the value is the corrected call, typed { title, body }', value.title === 'Why the sea has tides' && value.body.startsWith('The moon'), value);
check('the loop stopped at the capture: two steps (the invalid call, then the good one)', result.steps === 2 && result.stopped, result);
check('the writer saw its persona and the instruction to call structured_output', seenSystem.startsWith('You write short, clear articles.') && seenSystem.includes('"structured_output" exactly once'), seenSystem);
check('the writer was shown its capture tool', JSON.stringify(seenTools) === JSON.stringify(['structured_output']), seenTools);
check('the researcher never sees the capture tool', !researcher.ctx.get(Tools).knownNames().includes('structured_output'));

await server.dispose();
if (failures.length > 0) {
  console.error(`examples/structured-results.ts: ${failures.length} check(s) failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('examples/structured-results.ts: all checks passed');
