/**
 * The converters driving the real `openai` and `@anthropic-ai/sdk` clients offline (a fake
 * `fetch` answers with recorded-shape payloads): a full tool loop per API, polestar
 * supplying the system prompt and tools, `Tools.execute` running the calls, the
 * conversation kept in a `ConversationHistory`, and the second request checked to carry
 * the history back in the provider's own shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  Agents,
  AgentsPlugin,
  ConversationHistory,
  Prompts,
  PromptsPlugin,
  Server,
  Tools,
  ToolsPlugin,
  type AgentHandle,
  type ToolResult,
} from '../../src/index.js';
import {
  fromAnthropicMessages,
  fromAnthropicToolUse,
  fromOpenAIChatMessages,
  fromOpenAIChatToolCall,
  fromOpenAIResponsesFunctionCall,
  fromOpenAIResponsesInput,
  toAnthropicMessages,
  toAnthropicTools,
  toOpenAIChatMessages,
  toOpenAIChatTools,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
} from '../../src/adapters/index.js';

/** A fetch that records request bodies and answers with the next scripted payload. */
function fakeFetch(replies: unknown[]): { fetch: typeof fetch; bodies: Record<string, unknown>[] } {
  const bodies: Record<string, unknown>[] = [];
  const f = async (_url: unknown, init?: { body?: unknown }): Promise<Response> => {
    bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
    const next = replies.shift();
    if (next === undefined) throw new Error('no scripted reply left');
    const res = new Response(JSON.stringify(next), { status: 200, headers: { 'content-type': 'application/json' } });
    // Response.json() parses in Node's own realm; under Jest's VM the objects would then not be
    // this realm's plain objects (which polestar's JSON checks refuse), so parse here.
    Object.defineProperty(res, 'json', { value: async () => JSON.parse(await res.text()) as unknown });
    return res;
  };
  return { fetch: f as typeof fetch, bodies };
}

let server: Server;
let agent: AgentHandle;

beforeEach(async () => {
  server = new Server();
  server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({
    name: 'shell',
    description: 'Runs a command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
    execute: () => 'ran',
  });
  agent = await app.get(Agents).create({
    id: 'researcher',
    setup: (ctx) => {
      ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'You research.' });
      ctx.get(Tools).restrict({ deny: ['shell'] });
      ctx.get(Tools).register({
        name: 'search',
        description: 'Searches the web',
        parameters: { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'], additionalProperties: false },
        execute: ({ q }: { q: string }) => `results for ${q}`,
      });
    },
  });
});

afterEach(async () => {
  await server.dispose();
});

async function turnSetup(): Promise<{ system: string; shown: Set<string>; tools: ReturnType<typeof agent.agent.ctx.get<Tools>> }> {
  const prompts = agent.agent.ctx.get(Prompts);
  const assembly = await prompts.assemble();
  return { system: prompts.render(assembly), shown: new Set(assembly.tools.map((t) => t.name)), tools: agent.agent.ctx.get(Tools) };
}

test('OpenAI Chat Completions: a full tool loop through the real client', async () => {
  const modelMessage = {
    role: 'assistant', content: null, refusal: null, annotations: [],
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q": "tides"}' } },
      { id: 'call_2', type: 'function', function: { name: 'search', arguments: '{"q": "moo' } },
      { id: 'call_3', type: 'function', function: { name: 'shell', arguments: '{"cmd":"rm"}' } },
    ],
  };
  const { fetch, bodies } = fakeFetch([
    { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-test', choices: [{ index: 0, finish_reason: 'tool_calls', logprobs: null, message: modelMessage }] },
    { id: 'chatcmpl-2', object: 'chat.completion', created: 2, model: 'gpt-test', choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'Tides are tidal.', refusal: null } }] },
  ]);
  const client = new OpenAI({ apiKey: 'test', baseURL: 'http://model.invalid/v1', fetch, maxRetries: 0 });
  const history = new ConversationHistory([{ role: 'user', content: 'what are tides?' }]);
  const { system, tools } = await turnSetup();
  const results: ToolResult[] = [];
  for (let step = 0; step < 3; step++) {
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'system', content: system }, ...toOpenAIChatMessages(history.messages)],
      tools: toOpenAIChatTools((await agent.agent.ctx.get(Prompts).assemble()).tools),
    });
    const message = completion.choices[0].message;
    for (const m of fromOpenAIChatMessages([message])) history.append(m);
    if (message.tool_calls === undefined || message.tool_calls.length === 0) break;
    for (const call of message.tool_calls) {
      const r = await tools.execute(fromOpenAIChatToolCall(call));
      results.push(r);
      history.append({ role: 'tool', callId: r.callId, content: r.content, isError: r.isError });
    }
  }
  expect(results.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'INVALID_ARGS', 'UNKNOWN_TOOL']);
  expect(bodies[0].tools).toEqual([{ type: 'function', function: { name: 'search', description: 'Searches the web', parameters: { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'], additionalProperties: false } } }]);
  expect(bodies[0].messages).toEqual([{ role: 'system', content: 'You research.' }, { role: 'user', content: 'what are tides?' }]);
  const second = bodies[1].messages as Record<string, unknown>[];
  expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool']);
  // the model's own message goes back as it came, its exact argument text included
  expect(second[2]).toEqual(modelMessage);
  expect(second.slice(3)).toEqual([
    { role: 'tool', tool_call_id: 'call_1', content: 'results for tides' },
    { role: 'tool', tool_call_id: 'call_2', content: expect.stringMatching(/^Error: /) },
    { role: 'tool', tool_call_id: 'call_3', content: 'Error: unknown tool "shell"' },
  ]);
  expect(history.messages.at(-1)).toEqual({ role: 'assistant', content: 'Tides are tidal.', meta: { openaiChat: { extra: { refusal: null } } } });

});

test('OpenAI Responses: a full tool loop through the real client', async () => {
  const response = (id: string, output: unknown[]): unknown => ({ id, object: 'response', created_at: 1, model: 'gpt-test', status: 'completed', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [], error: null, incomplete_details: null, instructions: null, metadata: null, temperature: null, top_p: null });
  const { fetch, bodies } = fakeFetch([
    response('resp_1', [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'search', arguments: '{"q":"tides"}', status: 'completed' },
    ]),
    response('resp_2', [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Tides are tidal.', annotations: [] }] }]),
  ]);
  const client = new OpenAI({ apiKey: 'test', baseURL: 'http://model.invalid/v1', fetch, maxRetries: 0 });
  const history = new ConversationHistory([{ role: 'user', content: 'what are tides?' }]);
  const { system, tools, shown } = await turnSetup();
  for (let step = 0; step < 3; step++) {
    const res = await client.responses.create({ model: 'gpt-test', instructions: system, input: toOpenAIResponsesInput(history.messages), tools: toOpenAIResponsesTools((await agent.agent.ctx.get(Prompts).assemble()).tools) });
    for (const m of fromOpenAIResponsesInput(res.output)) history.append(m);
    const calls = res.output.filter((i) => i.type === 'function_call');
    if (calls.length === 0) break;
    for (const item of calls) {
      expect(shown.has(item.name)).toBe(true);
      const r = await tools.execute(fromOpenAIResponsesFunctionCall(item));
      history.append({ role: 'tool', callId: r.callId, content: r.content, isError: r.isError });
    }
  }
  expect(bodies[0].tools).toEqual([expect.objectContaining({ type: 'function', name: 'search', strict: false })]);
  expect(bodies[1].input).toEqual([
    { role: 'user', content: 'what are tides?' },
    { type: 'reasoning', id: 'rs_1', summary: [] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'search', arguments: '{"q":"tides"}', status: 'completed' },
    { type: 'function_call_output', call_id: 'call_1', output: 'results for tides' },
  ]);
  expect(history.messages.at(-1)?.content).toBe('Tides are tidal.');
});

test('Anthropic Messages: a full tool loop through the real client', async () => {
  const message = (id: string, content: unknown[], stop: string): unknown => ({ id, type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } });
  const { fetch, bodies } = fakeFetch([
    message('msg_1', [
      { type: 'thinking', thinking: 'search twice', signature: 'sig' },
      { type: 'text', text: 'Searching.', citations: null },
      { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'tides' }, caller: { type: 'direct' } },
      { type: 'tool_use', id: 'toolu_2', name: 'search', input: { q: '' }, caller: { type: 'direct' } },
    ], 'tool_use'),
    message('msg_2', [{ type: 'text', text: 'Tides are tidal.', citations: null }], 'end_turn'),
  ]);
  const client = new Anthropic({ apiKey: 'test', baseURL: 'http://model.invalid', fetch, maxRetries: 0 });
  const history = new ConversationHistory([{ role: 'user', content: 'what are tides?' }]);
  const { system, tools } = await turnSetup();
  for (let step = 0; step < 3; step++) {
    const res = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      ...toAnthropicMessages([{ role: 'system', content: system }, ...history.messages]),
      tools: toAnthropicTools((await agent.agent.ctx.get(Prompts).assemble()).tools),
    });
    for (const m of fromAnthropicMessages([{ role: 'assistant', content: res.content }])) history.append(m);
    const uses = res.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) break;
    for (const b of uses) {
      const r = await tools.execute(fromAnthropicToolUse(b));
      history.append({ role: 'tool', callId: r.callId, content: r.content, isError: r.isError });
    }
  }
  expect(bodies[0].system).toBe('You research.');
  expect(bodies[0].tools).toEqual([{ name: 'search', description: 'Searches the web', input_schema: { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'], additionalProperties: false } }]);
  expect(bodies[1].messages).toEqual([
    { role: 'user', content: 'what are tides?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'search twice', signature: 'sig' },
        { type: 'text', text: 'Searching.', citations: null },
        { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'tides' }, caller: { type: 'direct' } },
        { type: 'tool_use', id: 'toolu_2', name: 'search', input: { q: '' }, caller: { type: 'direct' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'results for tides', is_error: false },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: expect.stringMatching(/^Error: .*must NOT have fewer than 1 characters/), is_error: true },
      ],
    },
  ]);
  expect(history.messages.at(-1)?.content).toBe('Tides are tidal.');
});
