/**
 * SPEC §11.5 converters: tools, the model's tool calls, results, and whole conversations
 * for OpenAI Chat Completions, OpenAI Responses and Anthropic Messages.
 */
import { ConversationHistory, Server, ToolsPlugin, Tools, type ChatMessage, type ToolResult, type ToolSchema } from '../../src/index.js';
import {
  fromAnthropicMessages,
  fromAnthropicToolUse,
  fromOpenAIChatMessages,
  fromOpenAIChatToolCall,
  fromOpenAIResponsesFunctionCall,
  fromOpenAIResponsesInput,
  toAnthropicMessages,
  toAnthropicToolResult,
  toAnthropicTools,
  toOpenAIChatMessages,
  toOpenAIChatToolMessage,
  toOpenAIChatTools,
  toOpenAIResponsesFunctionOutput,
  toOpenAIResponsesInput,
  toOpenAIResponsesTools,
} from '../../src/adapters/index.js';

const schema = (name: string, parameters: Record<string, unknown> = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }): ToolSchema => ({
  name,
  description: `the ${name} tool`,
  parameters: parameters as ToolSchema['parameters'],
});

const ok: ToolResult = Object.freeze({ callId: 'c1', content: 'sunny', isError: false });
const failed: ToolResult = Object.freeze({ callId: 'c2', content: 'Error: boom', isError: true, error: { code: 'EXECUTION_ERROR' as const, message: 'boom' } });

describe('tools', () => {
  test('each provider gets its own shape with a detached copy of the schema', () => {
    const s = schema('search');
    const chat = toOpenAIChatTools([s]);
    const resp = toOpenAIResponsesTools([s]);
    const anth = toAnthropicTools([s]);
    expect(chat).toEqual([{ type: 'function', function: { name: 'search', description: 'the search tool', parameters: s.parameters } }]);
    expect(resp).toEqual([{ type: 'function', name: 'search', description: 'the search tool', parameters: s.parameters, strict: false }]);
    expect(anth).toEqual([{ name: 'search', description: 'the search tool', input_schema: s.parameters }]);
    expect(chat[0].function.parameters).not.toBe(s.parameters);
    (chat[0].function.parameters.properties as Record<string, unknown>).q = 'mutated';
    (anth[0].input_schema.properties as Record<string, unknown>).q = 'mutated';
    expect(s.parameters.properties).toEqual({ q: { type: 'string' } });
  });

  test.each([
    ['toOpenAIChatTools', toOpenAIChatTools],
    ['toOpenAIResponsesTools', toOpenAIResponsesTools],
    ['toAnthropicTools', toAnthropicTools],
  ] as const)('%s names every tool whose name the provider would refuse', (_n, fn) => {
    const long = 'x'.repeat(65);
    const call = (): unknown => fn([schema('ok_name-1'), schema('fs.read'), schema('a/b'), schema(long), schema('x'.repeat(64))]);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(`"fs.read", "a/b", "${long}" do not match ^[a-zA-Z0-9_-]{1,64}$`);
    expect(() => fn([schema('')])).toThrow(/tool name "" does not match/);
    expect(() => fn('x' as never)).toThrow(/tools must be an array/);
    expect(fn([])).toEqual([]);
  });

  test('toAnthropicTools needs an object root: a missing type or a type list with object becomes the literal object', () => {
    const out = toAnthropicTools([schema('a', { properties: { q: { type: 'string' } } }), schema('b', { type: ['object', 'null'] })]);
    expect(out.map((t) => t.input_schema.type)).toEqual(['object', 'object']);
    const bad = (): unknown => toAnthropicTools([schema('s', { type: 'string' }), schema('fine'), schema('arr', { type: 'array', items: {} })]);
    expect(bad).toThrow(TypeError);
    expect(bad).toThrow(/not an object: "s" \(type "string"\), "arr" \(type "array"\)/);
  });
});

describe("the model's tool calls", () => {
  test('each converter returns one polestar call', () => {
    const signal = new AbortController().signal;
    expect(fromOpenAIChatToolCall({ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"tides"}' } })).toEqual({ callId: 'c1', name: 'search', arguments: { q: 'tides' } });
    expect(fromOpenAIResponsesFunctionCall({ call_id: 'c1', name: 'search', arguments: '{"q":"tides"}' }, signal)).toEqual({ callId: 'c1', name: 'search', arguments: { q: 'tides' }, signal });
    expect(fromAnthropicToolUse({ id: 'toolu_1', name: 'search', input: { q: 'tides' } }, signal)).toEqual({ callId: 'toolu_1', name: 'search', arguments: { q: 'tides' }, signal });
    expect(fromOpenAIChatToolCall({ id: 'c', type: 'custom', custom: { name: 'grammar', input: 'free text' } })).toEqual({ callId: 'c', name: 'grammar', arguments: 'free text' });
  });

  test('arguments that are not valid JSON reach execute, which answers INVALID_ARGS; blank arguments stand for {}', async () => {
    const server = new Server();
    server.addPlugins(new ToolsPlugin());
    await server.finish();
    const tools = server.createContext().get(Tools);
    tools.register({ name: 'search', description: 's', parameters: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false }, execute: (a) => JSON.stringify(a) });
    const calls = [
      fromOpenAIChatToolCall({ id: 'c1', function: { name: 'search', arguments: '{"q": "tid' } }),
      fromOpenAIResponsesFunctionCall({ call_id: 'c2', name: 'search', arguments: 'not json' }),
      fromOpenAIChatToolCall({ id: 'c3', function: { name: 'search', arguments: '"a string"' } }),
      fromOpenAIChatToolCall({ id: 'c4', function: { name: 'search', arguments: '{"q":-0}' } }),
      fromAnthropicToolUse({ id: 'c5', name: 'search', input: undefined }),
    ];
    expect(calls[0].arguments).toBe('{"q": "tid');
    expect(calls[2].arguments).toBe('"a string"');
    for (const c of calls) {
      const r = await tools.execute(c);
      expect(r.error?.code).toBe('INVALID_ARGS');
      expect(r.callId).toBe(c.callId);
    }
    const blank = fromOpenAIChatToolCall({ id: 'c6', function: { name: 'search', arguments: '  ' } });
    expect(blank.arguments).toEqual({});
    expect((await tools.execute(blank)).isError).toBe(false);
    await server.dispose();
  });

  test('a converter never throws for model output', () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('trap'); } });
    const inputs: unknown[] = [null, undefined, 42, 'x', {}, { id: 1, function: 'x' }, { function: { name: 3, arguments: {} } }, hostile];
    for (const x of inputs) {
      expect(() => fromOpenAIChatToolCall(x as never)).not.toThrow();
      expect(() => fromOpenAIResponsesFunctionCall(x as never)).not.toThrow();
      expect(() => fromAnthropicToolUse(x as never)).not.toThrow();
      expect(typeof fromOpenAIChatToolCall(x as never).callId).toBe('string');
      expect(typeof fromAnthropicToolUse(x as never).name).toBe('string');
    }
  });
});

describe('results back', () => {
  test('each provider gets its result shape; Anthropic says is_error only for a failed call', () => {
    expect(toOpenAIChatToolMessage(ok)).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'sunny' });
    expect(toOpenAIResponsesFunctionOutput(failed)).toEqual({ type: 'function_call_output', call_id: 'c2', output: 'Error: boom' });
    expect(toAnthropicToolResult(ok)).toStrictEqual({ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' });
    expect(toAnthropicToolResult(failed)).toStrictEqual({ type: 'tool_result', tool_use_id: 'c2', content: 'Error: boom', is_error: true });
  });
});

/** A polestar conversation with every role, tool calls (one with raw arguments) and a failed result. */
const conversation: ChatMessage[] = [
  { role: 'system', content: 'You research.' },
  { role: 'user', content: 'weather in Paris and Rome?' },
  {
    role: 'assistant',
    content: 'Checking.',
    toolCalls: [
      { callId: 'c1', name: 'weather', arguments: { city: 'Paris' } },
      { callId: 'c2', name: 'weather', arguments: '{"city": "Ro' },
    ],
  },
  { role: 'tool', callId: 'c1', content: 'sunny' },
  { role: 'tool', callId: 'c2', content: 'Error: arguments must be object', isError: true },
  { role: 'assistant', content: 'Paris is sunny.' },
];

describe('whole conversations from polestar', () => {
  test('toOpenAIChatMessages', () => {
    expect(toOpenAIChatMessages(conversation)).toStrictEqual([
      { role: 'system', content: 'You research.' },
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'weather', arguments: '{"city": "Ro' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'c2', content: 'Error: arguments must be object' },
      { role: 'assistant', content: 'Paris is sunny.' },
    ]);
  });

  test('toOpenAIResponsesInput', () => {
    expect(toOpenAIResponsesInput(conversation)).toStrictEqual([
      { role: 'system', content: 'You research.' },
      { role: 'user', content: 'weather in Paris and Rome?' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'c2', name: 'weather', arguments: '{"city": "Ro' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
      { type: 'function_call_output', call_id: 'c2', output: 'Error: arguments must be object' },
      { role: 'assistant', content: 'Paris is sunny.' },
    ]);
  });

  test('toAnthropicMessages: leading system messages become system, consecutive tool results one user message', () => {
    expect(toAnthropicMessages(conversation)).toStrictEqual({
      system: 'You research.',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'c1', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'c2', name: 'weather', input: '{"city": "Ro' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'sunny' },
            { type: 'tool_result', tool_use_id: 'c2', content: 'Error: arguments must be object', is_error: true },
          ],
        },
        { role: 'assistant', content: 'Paris is sunny.' },
      ],
    });
    const two = toAnthropicMessages([{ role: 'system', content: 'a' }, { role: 'system', content: 'b' }, { role: 'user', content: 'hi' }, { role: 'system', content: 'later' }]);
    expect(two).toStrictEqual({
      system: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }],
      messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: 'later' }],
    });
    expect(toAnthropicMessages([{ role: 'user', content: 'hi' }])).toStrictEqual({ messages: [{ role: 'user', content: 'hi' }] });
    expect(toAnthropicMessages([{ role: 'assistant', content: '', toolCalls: [{ callId: 't', name: 'x', arguments: {} }] }]).messages[0].content).toEqual([{ type: 'tool_use', id: 't', name: 'x', input: {} }]);
  });

  test('each to… refuses an invalid message with a TypeError naming it', () => {
    for (const fn of [toOpenAIChatMessages, toOpenAIResponsesInput, toAnthropicMessages] as ((m: readonly ChatMessage[]) => unknown)[]) {
      expect(() => fn([{ role: 'user', content: 'a' }, { role: 'tool', name: 'x', content: 'y' } as never])).toThrow(/messages\[1\].*add callId/);
      expect(() => fn('x' as never)).toThrow(TypeError);
    }
  });

  test('what each from… reads is a valid history, and back through to… is polestar\'s canonical form', () => {
    const chat = fromOpenAIChatMessages(toOpenAIChatMessages(conversation));
    const resp = fromOpenAIResponsesInput(toOpenAIResponsesInput(conversation));
    const anth = fromAnthropicMessages(toAnthropicMessages(conversation));
    for (const back of [chat, resp, anth]) {
      expect(back).toEqual(conversation.map((m) => (m.role === 'tool' && m.isError === true && back !== anth ? { role: 'tool', callId: m.callId, content: m.content } : m)));
      expect(new ConversationHistory(back).length).toBe(conversation.length);
    }
  });
});

describe('provider conversations read into polestar and written back', () => {
  test('OpenAI chat: a response message with null content, refusal, annotations, a developer message and image parts', () => {
    const messages = [
      { role: 'developer', content: 'Be terse.' },
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }, { type: 'text', text: 'and this' }], name: 'ann' },
      { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{ "url" : "https://x/y.png" }' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'a cat' }] },
      { role: 'assistant', content: 'A cat.', refusal: null },
    ];
    const history = fromOpenAIChatMessages(messages);
    expect(history.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(history[1].content).toBe('what is this?\nand this');
    expect(history[2]).toMatchObject({ content: '', toolCalls: [{ callId: 'call_1', name: 'look', arguments: { url: 'https://x/y.png' } }] });
    expect(history[3]).toMatchObject({ callId: 'call_1', content: 'a cat' });
    expect(toOpenAIChatMessages(history)).toEqual(messages);
    // an edited text keeps the image in place and the edit wins
    const edited = history.slice();
    edited[1] = { ...history[1], content: 'only text now' } as ChatMessage;
    expect(toOpenAIChatMessages(edited)[1]).toEqual({ role: 'user', name: 'ann', content: [{ type: 'text', text: 'only text now' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] });
    // edited arguments are written as JSON; unedited ones keep the model's exact text
    const a = history[2] as Extract<ChatMessage, { role: 'assistant' }>;
    const [c0] = a.toolCalls ?? [];
    edited[2] = { ...a, toolCalls: [{ ...c0, arguments: { url: 'other' } }] };
    expect((toOpenAIChatMessages(edited)[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0].function.arguments).toBe('{"url":"other"}');
  });

  test('Anthropic: thinking, citations, tool_use with caller, tool results followed by text in one user message, images in results', () => {
    const conversation = {
      system: [{ type: 'text', text: 'You research.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig' },
            { type: 'text', text: 'Let me check.', citations: null },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
            { type: 'tool_use', id: 'toolu_2', name: 'map', input: {}, caller: { type: 'direct' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny', is_error: false },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'a map' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
            { type: 'text', text: 'thanks' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Sunny.', citations: null }, { type: 'text', text: 'Enjoy.', citations: null }] },
      ],
    };
    const history = fromAnthropicMessages(conversation);
    expect(history.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
    expect(history[2]).toMatchObject({ content: 'Let me check.', toolCalls: [{ callId: 'toolu_1', name: 'weather', arguments: { city: 'Paris' } }, { callId: 'toolu_2', name: 'map', arguments: {} }] });
    expect(history[3]).toEqual(expect.objectContaining({ role: 'tool', callId: 'toolu_1', content: 'sunny', isError: false }));
    expect(history[4].content).toBe('a map');
    expect(history[6].content).toBe('Sunny.\nEnjoy.');
    expect(JSON.stringify(history[2].meta)).toContain('I should call the tool.');
    expect(toAnthropicMessages(history)).toEqual(conversation);
    // the same history for OpenAI: the thinking block and the image are Anthropic's alone
    expect(toOpenAIChatMessages(history).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
    // an edited answer: the thinking block stays first, the text is the edit
    const edited = history.slice();
    edited[2] = { ...history[2], content: 'Checking now.' } as ChatMessage;
    const a = toAnthropicMessages(edited).messages[1].content as { type: string; text?: string }[];
    expect(a.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);
    expect(a[1].text).toBe('Checking now.');
  });

  test('Anthropic: separate user messages each holding one tool result stay separate', () => {
    const c = {
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'x' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b', content: 'y' }] },
        { role: 'user', content: [] },
        { role: 'system', content: 'mid-conversation' },
      ],
    };
    expect(toAnthropicMessages(fromAnthropicMessages(c))).toEqual(c);
    expect(toAnthropicMessages(fromAnthropicMessages(c.messages))).toEqual(c);
  });

  test('Responses: reasoning items, output messages and function calls keep their order and ids', () => {
    const items = [
      { role: 'developer', content: 'Be terse.' },
      { role: 'user', content: [{ type: 'input_text', text: 'weather?' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' }] },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      { type: 'reasoning', id: 'rs_2', summary: [{ type: 'summary_text', text: 'done' }] },
      { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }] },
      { type: 'item_reference', id: 'msg_0' },
    ];
    const history = fromOpenAIResponsesInput(items);
    expect(history.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(history[2]).toMatchObject({ content: '', toolCalls: [{ callId: 'call_1', name: 'weather', arguments: { city: 'Paris' } }] });
    expect(history[4].content).toBe('Sunny.');
    expect(toOpenAIResponsesInput(history)).toEqual(items);
    expect(toOpenAIResponsesInput(fromOpenAIResponsesInput([{ type: 'reasoning', id: 'r', summary: [] }]))).toEqual([{ type: 'reasoning', id: 'r', summary: [] }]);
  });

  test('each from… refuses what is not a conversation of its provider with a TypeError naming the message', () => {
    expect(() => fromOpenAIChatMessages([{ role: 'user', content: 'a' }, { role: 'robot', content: 'b' }])).toThrow(/messages\[1\]: role the string "robot" is not a Chat Completions role/);
    expect(() => fromOpenAIChatMessages([{ role: 'tool', content: 'b' }])).toThrow(/messages\[0\]\.tool_call_id must be a non-empty string/);
    expect(() => fromOpenAIChatMessages([{ role: 'user', content: 5 }])).toThrow(/content must be a string or an array of parts/);
    expect(() => fromOpenAIChatMessages([{ role: 'user', content: 'x', n: NaN } as never])).toThrow(TypeError);
    expect(() => fromAnthropicMessages({ messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'x', input: {} }] }] })).toThrow(/messages\[0\]\.content\[0\]: a tool_use block needs a non-empty id/);
    expect(() => fromAnthropicMessages({ system: 3, messages: [] })).toThrow(/system must be a string or text blocks/);
    expect(() => fromAnthropicMessages({ messages: [{ role: 'tool', content: 'x' }] })).toThrow(/not a Messages API role/);
    expect(() => fromOpenAIResponsesInput([{ type: 'function_call', call_id: 'c', name: 'x' }])).toThrow(/\[0\]: a function_call item needs/);
    expect(() => fromOpenAIResponsesInput([{ type: 'message', role: 'tool', content: 'x' }])).toThrow(/a message's role must be/);
  });
});
