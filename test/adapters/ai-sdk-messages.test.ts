/**
 * The AI SDK message converters, case by case: where each AI SDK part goes, what model
 * output they can not read becomes (never a throw), edited histories, and the TypeErrors
 * for input that is not a conversation. The round trips at large are the property test
 * (test/property/ai-sdk-messages.test.ts).
 */
import { modelMessageSchema, type ModelMessage } from 'ai';
import { Server, Tools, ToolsPlugin, type ChatMessage } from '../../src/index.js';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/adapters/ai-sdk.js';

const valid = (messages: ModelMessage[]): boolean => messages.every((m) => modelMessageSchema.safeParse(m).success);

test('binary data and URLs are kept in meta.aiSdk as { $bytes, as } and { $url }, and come back as they were', () => {
  const bytes = new Uint8Array([1, 2, 3]);
  const model: ModelMessage[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is on these?' },
        { type: 'image', image: bytes, mediaType: 'image/png' },
        { type: 'image', image: new URL('https://example.com/cat.png') },
        { type: 'file', data: Buffer.from('%PDF'), mediaType: 'application/pdf' },
        { type: 'file', data: bytes.slice().buffer, mediaType: 'text/plain' },
      ],
    },
  ];
  const [chat] = fromAiSdkMessages(model);
  expect(chat).toEqual({
    role: 'user',
    content: 'What is on these?',
    meta: {
      aiSdk: {
        content: [
          { type: 'text', text: 17 },
          { type: 'image', image: { $bytes: 'AQID', as: 'Uint8Array' }, mediaType: 'image/png' },
          { type: 'image', image: { $url: 'https://example.com/cat.png' } },
          { type: 'file', data: { $bytes: 'JVBERg==', as: 'Buffer' }, mediaType: 'application/pdf' },
          { type: 'file', data: { $bytes: 'AQID', as: 'ArrayBuffer' }, mediaType: 'text/plain' },
        ],
      },
    },
  });
  const [back] = toAiSdkMessages([chat]);
  const parts = back.content as { image?: unknown; data?: unknown }[];
  expect(parts[1].image).toBeInstanceOf(Uint8Array);
  expect(Buffer.isBuffer(parts[1].image)).toBe(false);
  expect([...(parts[1].image as Uint8Array)]).toEqual([1, 2, 3]);
  expect(parts[2].image).toBeInstanceOf(URL);
  expect(String(parts[2].image)).toBe('https://example.com/cat.png');
  expect(Buffer.isBuffer(parts[3].data)).toBe(true);
  expect(parts[4].data).toBeInstanceOf(ArrayBuffer);
  // an edited text keeps the other parts
  const [edited] = toAiSdkMessages([{ ...chat, content: 'And now?' }]);
  expect((edited.content as { type: string; text?: string }[]).map((p) => p.text ?? p.type)).toEqual(['And now?', 'image', 'image', 'file', 'file']);
});

test('model output polestar can not read becomes calls that execute answers INVALID_ARGS, never a throw', async () => {
  const model: ModelMessage[] = [
    {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: '{"q":' }, // the raw text of an invalid call
        { type: 'tool-call', toolCallId: 'c2', toolName: 'search', input: { q: -0 } }, // not lossless JSON
        { type: 'tool-call', toolCallId: '', toolName: 'search', input: {} }, // no id: kept as a part
        { type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: { q: 'again' } }, // a duplicate id, kept
      ],
    },
  ];
  const [chat] = fromAiSdkMessages(model);
  expect(chat.role === 'assistant' && chat.toolCalls).toEqual([
    { callId: 'c1', name: 'search', arguments: '{"q":' },
    { callId: 'c2', name: 'search', arguments: '{"q":0}' },
    { callId: 'c1', name: 'search', arguments: { q: 'again' } },
  ]);
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const tools = server.createContext().get(Tools);
  tools.register({ name: 'search', description: 's', parameters: { type: 'object', properties: { q: { type: 'string' } } }, execute: () => 'hits' });
  const results = await Promise.all((chat.role === 'assistant' ? chat.toolCalls ?? [] : []).map((c) => tools.execute(c)));
  expect(results.map((r) => r.error?.code ?? 'ok')).toEqual(['INVALID_ARGS', 'INVALID_ARGS', 'ok']);
  await server.dispose();
  // the id-less call stays where it was
  const [back] = toAiSdkMessages([chat]);
  expect((back.content as { toolCallId?: string }[]).map((p) => p.toolCallId)).toEqual(['c1', 'c2', '', 'c1']);
});

test('tool outputs: error types and denials are isError; JSON is its text; grouping and approvals survive', () => {
  const model: ModelMessage[] = [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'x', input: {} }, { type: 'tool-call', toolCallId: 'b', toolName: 'x', input: {} }, { type: 'tool-call', toolCallId: 'c', toolName: 'x', input: {} }] },
    {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: 'ap1', approved: true },
        { type: 'tool-result', toolCallId: 'a', toolName: 'x', output: { type: 'json', value: { n: 1 } } },
        { type: 'tool-result', toolCallId: 'b', toolName: 'x', output: { type: 'error-json', value: { why: 'no' } } },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'x', output: { type: 'execution-denied', reason: 'not allowed' } }] },
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'ap2', approved: false }] },
  ];
  const chat = fromAiSdkMessages(model);
  expect(chat.map((m) => (m.role === 'tool' ? [m.callId, m.content, m.isError ?? false] : m.role))).toEqual([
    'assistant',
    ['a', '{"n":1}', false],
    ['b', '{"why":"no"}', true],
    ['c', 'not allowed', true],
    'user', // a tool message of approvals only is kept, in an empty user message
  ]);
  expect(chat[4]).toMatchObject({ role: 'user', content: '' });
  expect(toAiSdkMessages(chat)).toEqual(model);
  // an edited result is written as text, still valid for the SDK
  const edited: ChatMessage[] = chat.map((m) => (m.role === 'tool' && m.callId === 'a' ? { ...m, content: 'not json any more' } : m));
  const out = toAiSdkMessages(edited);
  expect(valid(out)).toBe(true);
  expect((out[1].content as { output?: unknown }[])[1].output).toEqual({ type: 'text', value: 'not json any more' });
});

test('input that is not a conversation is a TypeError naming the message', () => {
  expect(() => fromAiSdkMessages('hi' as unknown as ModelMessage[])).toThrow(/messages must be an array of AI SDK messages/);
  expect(() => fromAiSdkMessages([null as unknown as ModelMessage])).toThrow(/messages\[0\] must be a message object/);
  expect(() => fromAiSdkMessages([{ role: 'robot', content: '' } as unknown as ModelMessage])).toThrow(/role must be an AI SDK message role \(system, user, assistant, tool\), got the string "robot"/);
  expect(() => fromAiSdkMessages([{ role: 'system', content: [] } as unknown as ModelMessage])).toThrow(/messages\[0\]: content must be a string, got/);
  expect(() => fromAiSdkMessages([{ role: 'user', content: [{ type: 'image', image: 42 }] } as unknown as ModelMessage])).toThrow(/content\[0\]\.image must be a string, a URL/);
  expect(() => toAiSdkMessages({} as ChatMessage[])).toThrow(/messages must be an array of chat messages/);
  expect(() => toAiSdkMessages([{ role: 'tool', content: 'x' } as unknown as ChatMessage])).toThrow(/callId must be a non-empty string/);
});

test('a message\'s own meta travels in providerOptions.polestar and comes back; providers\' options stay theirs', () => {
  const chat: ChatMessage[] = [
    { role: 'user', content: 'hi', meta: { traceId: 't1' } },
    { role: 'assistant', content: '', toolCalls: [], meta: 'kept' },
  ];
  const model = toAiSdkMessages(chat);
  expect(model).toEqual([
    { role: 'user', content: 'hi', providerOptions: { polestar: { meta: { traceId: 't1' } } } },
    { role: 'assistant', content: '', providerOptions: { polestar: { meta: 'kept', emptyToolCalls: true } } },
  ]);
  expect(valid(model)).toBe(true);
  expect(fromAiSdkMessages(model)).toEqual(chat);
  const withOpenAI: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }], providerOptions: { openai: { x: 1 }, polestar: { meta: { a: 1 } } } }];
  const read = fromAiSdkMessages(withOpenAI);
  expect(read[0].meta).toEqual({ a: 1, aiSdk: { content: [{ type: 'text', text: 2 }], extra: { providerOptions: { openai: { x: 1 } } } } });
  expect(toAiSdkMessages(read)).toEqual(withOpenAI);
});
