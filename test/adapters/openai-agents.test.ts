/**
 * `polestar-di/adapters/openai-agents` against the real OpenAI Agents SDK (0.14): its
 * `run()` loop driven by a scripted `Model` (the SDK's own interface, written here since
 * this version ships no testing entry). The tools run through `Tools.execute`, errors
 * reach the model as text, and `strict` follows OpenAI's strict subset.
 */
import { Agent, run, setTracingDisabled, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { Agents, AgentsPlugin, Events, PromptsPlugin, Server, Tools, ToolsPlugin, type SystemContext, type ToolExecution, type ToolResult } from '../../src/index.js';
import { prepareTurn } from '../../src/adapters/index.js';
import { taskToolUseBehavior, toAgentsSdkTools } from '../../src/adapters/openai-agents.js';

setTracingDisabled(true);

type Output = ModelResponse['output'];
/** A Model that answers each request with the next scripted output and records the requests. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly steps: Output[]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.steps[this.requests.length - 1];
    if (output === undefined) throw new Error(`the script has no step ${this.requests.length}`);
    return { usage: new Usage(), output, responseId: `resp_${this.requests.length}` };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not scripted for streaming');
  }
}
const functionCall = (callId: string, name: string, args: string) => ({ type: 'function_call' as const, callId, name, arguments: args, status: 'completed' as const });
const message = (text: string) => ({ type: 'message' as const, role: 'assistant' as const, status: 'completed' as const, content: [{ type: 'output_text' as const, text }] });
/** The function outputs the model was sent, as `callId: text`. */
function outputsSent(request: ModelRequest): string[] {
  const input = Array.isArray(request.input) ? request.input : [];
  return input.flatMap((item) => {
    if (item.type !== 'function_call_result') return [];
    const o = item.output;
    return [`${item.callId}: ${typeof o === 'string' ? o : !Array.isArray(o) && o.type === 'text' ? o.text : JSON.stringify(o)}`];
  });
}

let server: Server;
let app: SystemContext;
const observed: string[] = [];
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
    parameters: { type: 'object', properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer' } }, required: ['q'] },
    execute: ({ q }: { q: string }) => `3 hits for "${q}"`,
  });
});
afterEach(async () => {
  await server.dispose();
});

test('a two-turn run() loop: a tool call through Tools.execute, then the final answer', async () => {
  const model = new ScriptedModel([[functionCall('fc_1', 'search', '{"q":"tides"}')], [message('The moon.')]]);
  const agent = new Agent({ name: 'researcher', instructions: 'You research.', model, tools: toAgentsSdkTools(app.get(Tools)) });
  const result = await run(agent, 'What causes tides?');

  expect(result.finalOutput).toBe('The moon.');
  expect(model.requests).toHaveLength(2);
  expect(model.requests[0].tools).toMatchObject([
    {
      type: 'function',
      name: 'search',
      description: 'Searches the web',
      parameters: { type: 'object', properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer' } }, required: ['q'] },
      strict: false,
    },
  ]);
  expect(outputsSent(model.requests[1])).toEqual(['fc_1: 3 hits for "tides"']);
  expect(observed).toEqual(['search:ok']);
});

test('a failed call returns polestar\'s error text to the model instead of throwing', async () => {
  app.get(Tools).register({ name: 'boom', description: 'Fails', parameters: { type: 'object' }, execute: () => { throw new Error('disk full'); } });
  const model = new ScriptedModel([[functionCall('fc_1', 'search', '{"q":""}'), functionCall('fc_2', 'boom', '{}')], [message('sorry')]]);
  const agent = new Agent({ name: 'a', model, tools: toAgentsSdkTools(app.get(Tools)) });
  const result = await run(agent, 'x');
  expect(result.finalOutput).toBe('sorry');
  const sent = outputsSent(model.requests[1]);
  expect(sent[0]).toMatch(/^fc_1: Error: invalid arguments for tool "search"/);
  expect(sent[1]).toBe('fc_2: Error: disk full');
  expect([...observed].sort()).toEqual(['boom:EXECUTION_ERROR', 'search:INVALID_ARGS']);
});

test('arguments that are not JSON are answered by the SDK before any tool runs; the run goes on', async () => {
  const model = new ScriptedModel([[functionCall('fc_1', 'search', '{"q":')], [message('retry later')]]);
  const result = await run(new Agent({ name: 'a', model, tools: toAgentsSdkTools(app.get(Tools)) }), 'x');
  expect(result.finalOutput).toBe('retry later');
  expect(outputsSent(model.requests[1])[0]).toMatch(/^fc_1: .*valid JSON/);
  expect(observed).toEqual([]);
});

test('two calls with one id at once: the second is INVALID_ARGS and does not run', async () => {
  let runs = 0;
  app.get(Tools).register({ name: 'slow', description: 'Slow', parameters: { type: 'object' }, execute: async () => { runs++; await new Promise((r) => setTimeout(r, 20)); return 'done'; } });
  const model = new ScriptedModel([[functionCall('same', 'slow', '{}'), functionCall('same', 'slow', '{}')], [message('ok')]]);
  await run(new Agent({ name: 'a', model, tools: toAgentsSdkTools(app.get(Tools)) }), 'x');
  expect(runs).toBe(1);
});

test('the calls run through ctx with the run\'s abort signal', async () => {
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
  const model = new ScriptedModel([[functionCall('w1', 'wait', '{}')], [message('done')]]);
  const running = run(new Agent({ name: 'a', model, tools: toAgentsSdkTools(app.get(Tools), { ctx: turnCtx }) }), 'x', { signal: controller.signal });
  await started;
  controller.abort(new Error('user left'));
  await running.catch(() => undefined);
  expect(seenCtx).toBe(turnCtx);
  expect(String(aborted)).toContain('user left');
});

describe('strict', () => {
  const strictSchema = { type: 'object', properties: { city: { type: 'string' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] } }, required: ['city', 'unit'], additionalProperties: false };
  beforeEach(() => {
    app.get(Tools).register({ name: 'weather', description: 'Weather', parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', ...strictSchema }, execute: () => 'sunny' });
  });
  const strictOf = (tools: { name: string; strict: boolean }[]) => Object.fromEntries(tools.map((t) => [t.name, t.strict]));

  test("'auto' (the default): strict exactly for a schema inside OpenAI's strict subset, sent without $schema", async () => {
    const tools = toAgentsSdkTools(app.get(Tools));
    expect(strictOf(tools)).toEqual({ search: false, weather: true });
    expect(tools[1].parameters).toEqual(strictSchema);
    const model = new ScriptedModel([[functionCall('c', 'weather', '{"city":"Oslo","unit":null}')], [message('ok')]]);
    await run(new Agent({ name: 'a', model, tools }), 'x');
    expect(model.requests[0].tools.map((t) => (t.type === 'function' ? `${t.name}:${String(t.strict)}` : t.type))).toEqual(['search:false', 'weather:true']);
    expect(observed).toEqual(['weather:ok']);
  });

  test('false: never strict, schema as registered; true: refuses a schema outside the subset naming why', () => {
    const loose = toAgentsSdkTools(app.get(Tools), { strict: false });
    expect(strictOf(loose)).toEqual({ search: false, weather: false });
    expect((loose[1].parameters as Record<string, unknown>).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(() => toAgentsSdkTools(app.get(Tools), { strict: true })).toThrow(/tool "search" is outside OpenAI's strict subset: # does not set additionalProperties: false/);
    expect(strictOf(toAgentsSdkTools(app.get(Tools), { strict: true, shown: ['weather'] }))).toEqual({ weather: true });
  });

  test.each([
    ['an optional property', { type: 'object', properties: { a: { type: 'string' } }, required: [], additionalProperties: false }, /does not list "a" in required/],
    ['open additional properties', { type: 'object', properties: {}, required: [] }, /additionalProperties: false/],
    ['a nested open object', { type: 'object', properties: { o: { type: 'object', properties: {} } }, required: ['o'], additionalProperties: false }, /#\/properties\/o does not set additionalProperties: false/],
    ['allOf', { type: 'object', properties: {}, required: [], additionalProperties: false, allOf: [{ type: 'object' }] }, /uses "allOf"/],
    ['an unsupported format', { type: 'object', properties: { u: { type: 'string', format: 'uri' } }, required: ['u'], additionalProperties: false }, /format "uri"/],
    ['a tuple', { type: 'object', properties: { t: { type: 'array', items: [{ type: 'string' }] } }, required: ['t'], additionalProperties: false }, /tuples/],
  ])('outside the subset: %s', (_what, parameters, why) => {
    app.get(Tools).register({ name: 'odd', description: 'Odd', parameters, execute: () => '' });
    expect(strictOf(toAgentsSdkTools(app.get(Tools), { shown: ['odd'] }))).toEqual({ odd: false });
    expect(() => toAgentsSdkTools(app.get(Tools), { shown: ['odd'], strict: true })).toThrow(why);
  });

  test('inside the subset: $defs and $ref, anyOf, nested required objects, arrays', () => {
    const parameters = {
      type: 'object',
      properties: { items: { type: 'array', items: { $ref: '#/$defs/item' }, minItems: 1 }, note: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      required: ['items', 'note'],
      additionalProperties: false,
      $defs: { item: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'], additionalProperties: false } },
    };
    app.get(Tools).register({ name: 'order', description: 'Order', parameters, execute: () => '' });
    expect(strictOf(toAgentsSdkTools(app.get(Tools), { shown: ['order'], strict: true }))).toEqual({ order: true });
  });
});

test('names OpenAI refuses, and root schemas that are not objects, are TypeErrors naming them', () => {
  app.get(Tools).register({ name: 'web search', description: 'x', parameters: { type: 'object' }, execute: () => '' });
  expect(() => toAgentsSdkTools(app.get(Tools))).toThrow(/"web search" does not match/);
  app.get(Tools).register({ name: 'echo', description: 'x', parameters: { type: 'string' }, execute: () => '' });
  expect(() => toAgentsSdkTools(app.get(Tools), { shown: ['echo'] })).toThrow(/object root schema.*"echo" \(type "string"\)/);
  expect(() => toAgentsSdkTools(app.get(Tools), { shown: ['search'], strict: 'yes' as unknown as boolean })).toThrow(/strict must be 'auto', true or false/);
});

test('a schema without a root type is sent as an object', () => {
  app.get(Tools).register({ name: 'any', description: 'x', parameters: { properties: { a: { type: 'string' } } }, execute: () => '' });
  expect(toAgentsSdkTools(app.get(Tools), { shown: ['any'] })[0].parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
});

describe('a task run with output, through the Agents SDK', () => {
  const Draft = { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } }, required: ['title', 'body'], additionalProperties: false };
  async function taskServer(): Promise<Server> {
    const s = new Server();
    s.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
    await s.finish();
    return s;
  }

  test('with toolUseBehavior: taskToolUseBehavior(task), the run ends at the capture call; an invalid first try is corrected', async () => {
    const s = await taskServer();
    const model = new ScriptedModel([
      [functionCall('c1', 'structured_output', '{"title":"Tides"}')],
      [functionCall('c2', 'structured_output', '{"title":"Tides","body":"The moon."}')],
      [message('never asked')],
    ]);
    const out = await s.createContext().get(Agents).runTask({
      output: Draft,
      fn: async (writer, task) => {
        const turn = await prepareTurn(writer.ctx);
        const agent = new Agent({
          name: 'writer',
          instructions: turn.system,
          model,
          tools: toAgentsSdkTools(writer.ctx.get(Tools), { shown: turn.assembly, task }),
          toolUseBehavior: taskToolUseBehavior(task),
        });
        const result = await run(agent, 'Write about tides.');
        return result.finalOutput;
      },
    });
    expect(out.value).toEqual({ title: 'Tides', body: 'The moon.' });
    expect(out.result).toBe(JSON.stringify({ title: 'Tides', body: 'The moon.' }));
    expect(model.requests).toHaveLength(2);
    expect(outputsSent(model.requests[1] as ModelRequest)).toEqual([expect.stringMatching(/^c1: Error: invalid arguments for tool "structured_output"/)]);
    expect(model.requests[0]?.systemInstructions).toMatch(/call the tool "structured_output" exactly once/);
    await s.dispose();
  });

  test('with { task } alone, every tool is disabled after the capture: the next request offers none and the run ends with its answer', async () => {
    const s = await taskServer();
    s.createContext().get(Tools).register({ name: 'search', description: 'Searches', parameters: { type: 'object', properties: {} }, execute: () => 'hits' });
    const model = new ScriptedModel([[functionCall('c1', 'structured_output', '{"title":"T","body":"B"}')], [message('Done.')]]);
    const out = await s.createContext().get(Agents).runTask({
      output: Draft,
      fn: async (writer, task) => {
        const tools = toAgentsSdkTools(writer.ctx.get(Tools), { task });
        const result = await run(new Agent({ name: 'writer', model, tools }), 'Write.');
        return result.finalOutput;
      },
    });
    expect(out).toEqual({ value: { title: 'T', body: 'B' }, result: 'Done.' });
    expect(model.requests.map((r) => r.tools.map((t) => ('name' in t ? t.name : (t as { type: string }).type)))).toEqual([['search', 'structured_output'], []]);
    await s.dispose();
  });

  test('a task option that is not a task is a TypeError', () => {
    expect(() => toAgentsSdkTools(app.get(Tools), { task: {} as never })).toThrow(/task must be the task of agents.runTask/);
    expect(() => taskToolUseBehavior(null as never)).toThrow(/task must be the task of agents.runTask/);
  });
});
