/**
 * Property test of the AI SDK message converters: random polestar conversations survive
 * ChatMessage[] → ModelMessage[] → ChatMessage[] (a missing `isError` and `isError: false`
 * being the same), and random AI SDK conversations (images and files as bytes, buffers
 * and URLs, reasoning, provider options, provider-executed calls, approvals, every tool
 * output type, odd grouping) survive ModelMessage[] → ChatMessage[] → ModelMessage[]. Each
 * intermediate conversation is also valid input for the SDK's own prompt check.
 */
import { modelMessageSchema, type ModelMessage } from 'ai';
import fc from 'fast-check';
import type { ChatMessage } from '../../src/index.js';
import { snapshotJson, type JsonValue } from '../../src/util/lossless-json.js';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/adapters/ai-sdk.js';

const RUNS = Number(process.env.FC_RUNS ?? 300);

/** Lossless JSON only (fast-check may generate -0, which polestar refuses as not lossless). */
const json: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 2 }).filter((v) => {
  try {
    snapshotJson(v, 'v', 'v');
    return true;
  } catch {
    return false;
  }
}) as fc.Arbitrary<JsonValue>;
const jsonObject = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 3 });
const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('', '\n', 'a\nb', 'line\n'));
const id = fc.stringMatching(/^[a-z0-9_]{1,6}$/);
const toolName = fc.constantFrom('search', 'cite', 'get_weather');

// ---- ChatMessage[] → ModelMessage[] → ChatMessage[]

const userMeta = fc.option(fc.oneof(json, jsonObject.filter((o) => !('aiSdk' in o))), { nil: undefined });

const chatConversation: fc.Arbitrary<ChatMessage[]> = fc
  .array(
    fc.oneof(
      fc.record({ kind: fc.constant('system' as const), content: text, meta: userMeta }),
      fc.record({ kind: fc.constant('user' as const), content: text, meta: userMeta }),
      fc.record({
        kind: fc.constant('turn' as const),
        content: text,
        meta: userMeta,
        calls: fc.option(fc.array(fc.record({ callId: id, name: toolName, arguments: fc.oneof(json, fc.string({ maxLength: 6 })) }), { maxLength: 3 }), { nil: undefined }),
        results: fc.array(fc.record({ pick: fc.nat(), content: text, isError: fc.option(fc.boolean(), { nil: undefined }), meta: userMeta }), { maxLength: 3 }),
      }),
    ),
    { maxLength: 6 },
  )
  .map((blocks) => {
    const out: ChatMessage[] = [];
    const withMeta = <T extends object>(m: T, meta: JsonValue | undefined): T => (meta === undefined ? m : { ...m, meta });
    for (const b of blocks) {
      if (b.kind !== 'turn') {
        out.push(withMeta({ role: b.kind, content: b.content }, b.meta));
        continue;
      }
      out.push(withMeta(b.calls === undefined ? { role: 'assistant', content: b.content } : { role: 'assistant', content: b.content, toolCalls: b.calls }, b.meta));
      const calls = b.calls ?? [];
      if (calls.length === 0) continue;
      for (const r of b.results) {
        const m = { role: 'tool' as const, callId: calls[r.pick % calls.length].callId, content: r.content };
        out.push(withMeta(r.isError === undefined ? m : { ...m, isError: r.isError }, r.meta));
      }
    }
    return out;
  });

/** A missing `isError` and `isError: false` are the same. */
const normalized = (c: readonly ChatMessage[]): ChatMessage[] =>
  c.map((m) => (m.role === 'tool' && m.isError === false ? (({ isError: _e, ...rest }) => rest)(m) : m));

test('ChatMessage[] → ModelMessage[] → ChatMessage[] is lossless', () => {
  fc.assert(
    fc.property(chatConversation, (chat) => {
      const model = toAiSdkMessages(chat);
      for (const m of model) expect(modelMessageSchema.safeParse(m).success).toBe(true);
      expect(normalized(fromAiSdkMessages(model))).toEqual(normalized(chat));
    }),
    { numRuns: RUNS },
  );
});

// ---- ModelMessage[] → ChatMessage[] → ModelMessage[]

const providerOptions = fc.option(fc.dictionary(fc.constantFrom('openai', 'anthropic'), jsonObject, { minKeys: 1, maxKeys: 2 }), { nil: undefined });
const opt = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
const bytes = fc.uint8Array({ maxLength: 6 });
const data = fc.oneof(
  fc.base64String({ maxLength: 8 }),
  bytes,
  bytes.map((b) => Buffer.from(b)),
  bytes.map((b) => b.slice().buffer),
  fc.constantFrom('https://example.com/a.png', 'data:image/png;base64,AAAA').map((u) => new URL(u)),
);
const textPartArb = fc.record({ type: fc.constant('text' as const), text, providerOptions }).map(opt);
const imagePart = fc.record({ type: fc.constant('image' as const), image: data, mediaType: fc.option(fc.constant('image/png'), { nil: undefined }) }).map(opt);
const filePart = fc.record({ type: fc.constant('file' as const), data, mediaType: fc.constantFrom('application/pdf', 'text/plain'), filename: fc.option(fc.constant('a.pdf'), { nil: undefined }) }).map(opt);
const reasoningPart = fc.record({ type: fc.constant('reasoning' as const), text, providerOptions }).map(opt);
const toolCallPart = fc
  .record({ type: fc.constant('tool-call' as const), toolCallId: fc.oneof(id, fc.constant('')), toolName, input: fc.oneof(json, fc.string({ maxLength: 6 })), providerExecuted: fc.option(fc.boolean(), { nil: undefined }), providerOptions })
  .map(opt);
const output = fc.oneof(
  fc.record({ type: fc.constantFrom('text' as const, 'error-text' as const), value: text, providerOptions }).map(opt),
  fc.record({ type: fc.constantFrom('json' as const, 'error-json' as const), value: json }),
  fc.record({ type: fc.constant('execution-denied' as const), reason: fc.option(text, { nil: undefined }) }).map(opt),
  fc.record({
    type: fc.constant('content' as const),
    value: fc.array(fc.oneof(fc.record({ type: fc.constant('text' as const), text }), fc.record({ type: fc.constant('image-url' as const), url: fc.constant('https://example.com/i.png') })), { maxLength: 3 }),
  }),
);
const toolResultPart = fc.record({ type: fc.constant('tool-result' as const), toolCallId: fc.oneof(id, id, fc.constant('')), toolName, output, providerOptions }).map(opt);
const approvalResponse = fc.record({ type: fc.constant('tool-approval-response' as const), approvalId: id, approved: fc.boolean() });

const modelMessage: fc.Arbitrary<ModelMessage> = fc.oneof(
  fc.record({ role: fc.constant('system' as const), content: text, providerOptions }).map(opt),
  fc.record({ role: fc.constant('user' as const), content: fc.oneof(text, fc.array(fc.oneof(textPartArb, imagePart, filePart), { maxLength: 3 })), providerOptions }).map(opt),
  fc.record({ role: fc.constant('assistant' as const), content: fc.oneof(text, fc.array(fc.oneof(textPartArb, textPartArb, toolCallPart, toolCallPart, reasoningPart, filePart), { maxLength: 4 })), providerOptions }).map(opt),
  fc.record({ role: fc.constant('tool' as const), content: fc.array(fc.oneof(toolResultPart, toolResultPart, approvalResponse), { maxLength: 3 }), providerOptions }).map(opt),
) as fc.Arbitrary<ModelMessage>;

/** A comparable form: bytes and URLs as tagged values (two URL objects always look equal to toEqual). */
function canon(v: unknown): unknown {
  if (v instanceof URL) return `URL ${v.href}`;
  if (Buffer.isBuffer(v)) return `Buffer ${v.toString('base64')}`;
  if (v instanceof Uint8Array) return `Uint8Array ${Buffer.from(v).toString('base64')}`;
  if (v instanceof ArrayBuffer) return `ArrayBuffer ${Buffer.from(v).toString('base64')}`;
  if (Array.isArray(v)) return v.map(canon);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [k, canon(x)]));
  return v;
}

test('ModelMessage[] → ChatMessage[] → ModelMessage[] is lossless', () => {
  fc.assert(
    fc.property(fc.array(modelMessage, { maxLength: 6 }), (model) => {
      const chat = fromAiSdkMessages(model);
      expect(canon(toAiSdkMessages(chat))).toEqual(canon(model));
    }),
    { numRuns: RUNS },
  );
});

test('the intermediate polestar conversation is plain, lossless JSON', () => {
  fc.assert(
    fc.property(fc.array(modelMessage, { maxLength: 6 }), (model) => {
      const chat = fromAiSdkMessages(model);
      expect(JSON.parse(JSON.stringify(chat))).toEqual(chat);
    }),
    { numRuns: 100 },
  );
});
