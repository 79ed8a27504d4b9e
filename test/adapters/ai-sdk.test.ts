/**
 * `polestar-di/adapters/ai-sdk` against the real AI SDK (`ai` 6, its `generateText` loop
 * driven by the SDK's own `MockLanguageModelV3`): the tools run through `Tools.execute`,
 * errors reach the model as text, and the SDK's own messages convert both ways.
 */
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Events, Server, Tools, ToolsPlugin, createScope, type SystemContext, type ToolExecution, type ToolResult } from '../../src/index.js';
import { fromAiSdkMessages, taskStopped, toAiSdkMessages, toAiSdkTools } from '../../src/adapters/ai-sdk.js';

type Generate = ConstructorParameters<typeof MockLanguageModelV3>[0] extends infer O ? (O extends { doGenerate?: infer G } ? Extract<G, (...a: never[]) => unknown> : never) : never;
type Options = Parameters<Generate>[0];
type Content = Awaited<ReturnType<Generate>>['content'];

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
/** A model that answers each step with the next scripted content and records what it was sent. */
function scripted(steps: Content[]): { model: MockLanguageModelV3; seen: Options[] } {
  const seen: Options[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options);
      const content = steps[seen.length - 1];
      if (content === undefined) throw new Error(`the script has no step ${seen.length}`);
      const calls = content.some((c) => c.type === 'tool-call');
      return { content, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
  return { model, seen };
}
const call = (toolCallId: string, toolName: string, input: string) => ({ type: 'tool-call' as const, toolCallId, toolName, input });
const text = (t: string) => ({ type: 'text' as const, text: t });

/** The tool outputs the model was sent in its last step, as `name: type value`. */
function toolOutputs(options: Options): string[] {
  return options.prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).flatMap((p) =>
    p.type === 'tool-result' ? [`${p.toolName}: ${p.output.type} ${'value' in p.output ? String(p.output.value) : ''}`] : [],
  );
}

let server: Server;
let app: SystemContext;
const observed: string[] = [];
const searchParameters = { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'], additionalProperties: false };
beforeEach(async () => {
  server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  app = server.createContext();
  observed.length = 0;
  app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) => void observed.push(`${e.name}:${r.isError ? r.error?.code : 'ok'}`));
  app.get(Tools).register({
    name: 'search',
    description: 'Searches the web',
    parameters: searchParameters,
    execute: ({ q }: { q: string }) => `3 hits for "${q}"`,
  });
});
afterEach(async () => {
  await server.dispose();
});

test('a two-turn generateText loop: a tool call through Tools.execute, then the final text', async () => {
  const { model, seen } = scripted([[call('call_1', 'search', '{"q":"tides"}')], [text('The moon.')]]);
  const result = await generateText({ model, prompt: 'What causes tides?', tools: toAiSdkTools(app.get(Tools)), stopWhen: stepCountIs(3) });

  expect(result.text).toBe('The moon.');
  expect(result.steps).toHaveLength(2);
  // the model was shown the registered schema unchanged
  expect(seen[0].tools).toEqual([{ type: 'function', name: 'search', description: 'Searches the web', inputSchema: searchParameters }]);
  expect(toolOutputs(seen[1])).toEqual(['search: text 3 hits for "tides"']);
  expect(observed).toEqual(['search:ok']);
  // the SDK's tool results are polestar's results
  const output = result.steps[0].toolResults[0].output;
  expect(output).toEqual({ callId: 'call_1', content: '3 hits for "tides"', isError: false, output: '3 hits for "tides"' });
});

test('an error result reaches the model as error-text with polestar\'s reason, never as a throw', async () => {
  app.get(Tools).register({ name: 'boom', description: 'Fails', parameters: { type: 'object' }, execute: () => { throw new Error('disk full'); } });
  const { model, seen } = scripted([[call('c1', 'search', '{"q":""}'), call('c2', 'boom', '{}')], [text('sorry')]]);
  const result = await generateText({ model, prompt: 'x', tools: toAiSdkTools(app.get(Tools)), stopWhen: stepCountIs(3) });
  expect(result.text).toBe('sorry');
  const outputs = toolOutputs(seen[1]);
  expect(outputs[0]).toMatch(/^search: error-text Error: invalid arguments for tool "search"/);
  expect(outputs[1]).toBe('boom: error-text Error: disk full');
  expect([...observed].sort()).toEqual(['boom:EXECUTION_ERROR', 'search:INVALID_ARGS']);
});

test('arguments that are not JSON are answered by the SDK before any tool runs; the loop goes on', async () => {
  const { model, seen } = scripted([[call('c1', 'search', '{"q":')], [text('retry later')]]);
  const result = await generateText({ model, prompt: 'x', tools: toAiSdkTools(app.get(Tools)), stopWhen: stepCountIs(3) });
  expect(result.text).toBe('retry later');
  expect(toolOutputs(seen[1])[0]).toMatch(/^search: error-text /);
  expect(observed).toEqual([]);
});

test('two calls with one id in one step: the second is INVALID_ARGS and does not run', async () => {
  let runs = 0;
  app.get(Tools).register({ name: 'slow', description: 'Slow', parameters: { type: 'object' }, execute: async () => { runs++; await new Promise((r) => setTimeout(r, 20)); return 'done'; } });
  const { model, seen } = scripted([[call('same', 'slow', '{}'), call('same', 'slow', '{}')], [text('ok')]]);
  await generateText({ model, prompt: 'x', tools: toAiSdkTools(app.get(Tools)), stopWhen: stepCountIs(3) });
  expect(runs).toBe(1);
  const outputs = toolOutputs(seen[1]);
  expect(outputs).toContain('slow: text done');
  expect(outputs.find((o) => o.includes('error-text'))).toMatch(/two calls with the id "same"/);
});

test('the call runs through ctx (the calling context) with the SDK\'s abort signal', async () => {
  let seenCtx: SystemContext | undefined;
  let aborted: unknown;
  let resolveStarted = (): void => undefined;
  const started = new Promise<void>((r) => (resolveStarted = r));
  app.get(Tools).register({
    name: 'wait',
    description: 'Waits',
    parameters: { type: 'object' },
    execute: (_args: unknown, execution: ToolExecution, ctx: SystemContext) => {
      seenCtx = ctx;
      resolveStarted();
      return new Promise<string>((resolve) => execution.signal.addEventListener('abort', () => { aborted = execution.signal.reason; resolve('stopped'); }));
    },
  });
  const turnCtx = app.child();
  const controller = new AbortController();
  const { model } = scripted([[call('w1', 'wait', '{}')], [text('never')]]);
  const run = generateText({ model, prompt: 'x', tools: toAiSdkTools(app.get(Tools), { ctx: turnCtx }), abortSignal: controller.signal, stopWhen: stepCountIs(3) });
  await started;
  controller.abort(new Error('user left'));
  await expect(run).rejects.toThrow();
  expect(seenCtx).toBe(turnCtx);
  expect(String(aborted)).toContain('user left');
});

test('shown and scope: only what the model is shown is converted and can run', async () => {
  const agent = createScope(app, { id: 'agent' });
  agent.ctx.get(Tools).register({ name: 'cite', description: 'Cites', parameters: { type: 'object' }, execute: () => '[1]' });
  const all = toAiSdkTools(app.get(Tools), { scope: agent.key });
  expect(Object.keys(all)).toEqual(['search', 'cite']);
  const shown = toAiSdkTools(agent.ctx.get(Tools), { shown: ['cite'] });
  expect(Object.keys(shown)).toEqual(['cite']);
  const assembly = { tools: [{ name: 'search', description: 'Searches (this turn: news only)', parameters: { type: 'object' } }] };
  const fromAssembly = toAiSdkTools(agent.ctx.get(Tools), { shown: assembly });
  expect(fromAssembly.search.description).toBe('Searches (this turn: news only)');
  await agent.dispose();
});

test('a name providers refuse is a TypeError naming it, not a failure at the provider', () => {
  app.get(Tools).register({ name: 'web search', description: 'x', parameters: { type: 'object' }, execute: () => '' });
  expect(() => toAiSdkTools(app.get(Tools))).toThrow(TypeError);
  expect(() => toAiSdkTools(app.get(Tools))).toThrow(/"web search" does not match/);
  // hidden from the turn, it is no longer in the way
  expect(Object.keys(toAiSdkTools(app.get(Tools), { shown: ['search'] }))).toEqual(['search']);
});

test('bad arguments are TypeErrors naming the fix', () => {
  expect(() => toAiSdkTools({} as Tools)).toThrow(/tools must be a Tools view/);
  expect(() => toAiSdkTools(app.get(Tools), { ctx: {} as SystemContext })).toThrow(/ctx must be the calling context/);
  expect(() => toAiSdkTools(app.get(Tools), { shown: 'search' as unknown as string[] })).toThrow(/shown must be an assembly/);
  expect(() => toAiSdkTools(app.get(Tools), { strict: true } as object)).toThrow(/unknown option "strict"/);
});

test('the SDK\'s response messages convert to a polestar conversation and back unchanged', async () => {
  const { model } = scripted([[text('Let me look.'), call('call_1', 'search', '{"q":"tides"}')], [text('The moon.')]]);
  const result = await generateText({ model, prompt: 'What causes tides?', tools: toAiSdkTools(app.get(Tools)), stopWhen: stepCountIs(3) });
  const sent: ModelMessage[] = [{ role: 'user', content: 'What causes tides?' }, ...result.response.messages];
  const chat = fromAiSdkMessages(sent);
  expect(chat.map((m) => ({ ...m, meta: undefined }))).toEqual([
    { role: 'user', content: 'What causes tides?' },
    { role: 'assistant', content: 'Let me look.', toolCalls: [{ callId: 'call_1', name: 'search', arguments: { q: 'tides' } }] },
    { role: 'tool', callId: 'call_1', content: '3 hits for "tides"' },
    { role: 'assistant', content: 'The moon.' },
  ]);
  expect(toAiSdkMessages(chat)).toEqual(sent);
  // and the conversation goes on in the SDK from polestar's history
  const { model: next, seen } = scripted([[text('Yes.')]]);
  await generateText({ model: next, messages: [...toAiSdkMessages(chat), { role: 'user', content: 'Sure?' }] });
  expect(seen[0].prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
});

test('a tool name the model makes up finds nothing, not an inherited property', async () => {
  const { model, seen } = scripted([[call('c1', 'toString', '{}')], [text('ok')]]);
  const result = await generateText({ model, prompt: 'x', tools: toAiSdkTools(app.get(Tools)), stopWhen: stepCountIs(3) });
  expect(result.text).toBe('ok');
  expect(toolOutputs(seen[1])[0]).toMatch(/^toString: error-text /);
  expect(observed).toEqual([]);
});

describe('taskStopped(task)', () => {
  test('is a stopWhen condition, true once the task is stopped: the loop ends with the step that stopped it', async () => {
    const task = { stopped: false };
    const { model, seen } = scripted([[call('c1', 'search', '{"q":"a"}')], [call('c2', 'search', '{"q":"b"}')], [text('never')]]);
    app.get(Events).on('tools/result', (e: ToolExecution) => void (e.callId === 'c2' && (task.stopped = true)));
    const out = await generateText({ model, prompt: 'go', tools: toAiSdkTools(app.get(Tools)), stopWhen: [taskStopped(task), stepCountIs(5)] });
    expect(out.steps).toHaveLength(2);
    expect(seen).toHaveLength(2);
  });

  test('refuses what is not a task', () => {
    expect(() => taskStopped({} as never)).toThrow(/task must be the task of agents.runTask/);
    expect(() => taskStopped(null as never)).toThrow(TypeError);
  });
});
