/**
 * SPEC §11.5: for every provider, `toX(fromX(m))` deep-equals `m` — over generated
 * conversations with the parts polestar does not model (images, refusals, thinking,
 * reasoning items, citations, extra properties, the model's exact argument text, invalid
 * argument text) — and what `fromX` returns is always a valid history.
 */
import fc from 'fast-check';
import { ConversationHistory, type ChatMessage } from '../../src/index.js';
import {
  fromAnthropicMessages,
  fromOpenAIChatMessages,
  fromOpenAIResponsesInput,
  toAnthropicMessages,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
} from '../../src/adapters/index.js';

const RUNS = { numRuns: 300 };

/** Records and dictionaries with Object.prototype (toStrictEqual compares prototypes). */
const rec = <R extends Record<string, fc.Arbitrary<unknown>>>(model: R, opts: { requiredKeys?: (keyof R)[] } = {}) =>
  fc.record(model, { ...(opts as object), noNullPrototype: true } as never) as unknown as fc.Arbitrary<{ [K in keyof R]: R[K] extends fc.Arbitrary<infer T> ? T : never }>;

/** JSON values without -0 (JSON has none) and without `__proto__` keys. */
const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v).replace(/"__proto__":/g, '"proto":')) as unknown);
const jsonObject = fc.dictionary(fc.constantFrom('a', 'b', 'city', 'q', 'n'), json, { maxKeys: 3, noNullPrototype: true });
/** Text with the separator the converters join parts with. */
const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '{', '"'), maxLength: 12 });
const id = fc.string({ unit: fc.constantFrom('a', 'b', '1', '_'), minLength: 1, maxLength: 4 });
/** Extra properties a provider object may carry; `x_*` names no converter consumes. */
const extras = fc.dictionary(fc.constantFrom('x_a', 'x_b', 'cache_control'), json, { maxKeys: 2, noNullPrototype: true });
const withExtras = <T extends object>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.tuple(arb, extras).map(([o, e]) => ({ ...e, ...o }));
/** A model's argument text: compact or spaced JSON, invalid text, blank, a JSON string, values JSON can not keep. */
const argumentText = fc.oneof(
  jsonObject.map((o) => JSON.stringify(o)),
  jsonObject.map((o) => JSON.stringify(o, null, 1)),
  fc.constantFrom('{"q": "unterminated', 'not json', '', '  ', '"a string"', '{"n":-0}', '[1e400]', 'null', '{"a":1,"a":2}'),
);

describe('OpenAI Chat Completions', () => {
  const textPart = withExtras(rec({ type: fc.constant('text'), text }));
  const image = rec({ type: fc.constant('image_url'), image_url: rec({ url: fc.constant('https://x/i.png'), detail: fc.constantFrom('low', 'auto') }) });
  const refusalPart = rec({ type: fc.constant('refusal'), refusal: text });
  const content = (part: fc.Arbitrary<object>) => fc.oneof(text, fc.array(part, { maxLength: 3 }));
  const functionCall = withExtras(
    rec(
      { id, type: fc.constant('function'), function: withExtras(rec({ name: id, arguments: argumentText })) },
      { requiredKeys: ['id', 'function'] },
    ),
  );
  const customCall = rec({ id, type: fc.constant('custom'), custom: rec({ name: id, input: text }) });
  const message = fc.oneof(
    withExtras(rec({ role: fc.constantFrom('system', 'developer'), content: content(textPart) })),
    withExtras(rec({ role: fc.constant('user'), content: content(fc.oneof(textPart, image)), name: id }, { requiredKeys: ['role', 'content'] })),
    withExtras(
      rec(
        {
          role: fc.constant('assistant'),
          content: fc.oneof(content(fc.oneof(textPart, refusalPart)), fc.constant(null)),
          tool_calls: fc.array(fc.oneof(functionCall, customCall), { maxLength: 3 }),
          refusal: fc.oneof(text, fc.constant(null)),
        },
        { requiredKeys: ['role'] },
      ),
    ),
    rec({ role: fc.constant('tool'), tool_call_id: id, content: content(textPart) }),
    rec({ role: fc.constant('function'), name: id, content: fc.oneof(text, fc.constant(null)) }),
  );

  test('toOpenAIChatMessages(fromOpenAIChatMessages(m)) deep-equals m', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (m) => {
        const history = fromOpenAIChatMessages(m as never);
        expect(new ConversationHistory(history).length).toBe(m.length);
        expect(toOpenAIChatMessages(history)).toStrictEqual(m);
      }),
      RUNS,
    );
  });
});

describe('OpenAI Responses', () => {
  const inputText = withExtras(rec({ type: fc.constant('input_text'), text }));
  const inputImage = rec({ type: fc.constant('input_image'), image_url: fc.constant('https://x/i.png'), detail: fc.constant('auto') });
  const outputText = rec({ type: fc.constant('output_text'), text, annotations: fc.constant([]) });
  const easyMessage = rec(
    { role: fc.constantFrom('user', 'system', 'developer', 'assistant'), content: fc.oneof(text, fc.array(fc.oneof(inputText, inputImage), { maxLength: 3 })), type: fc.constant('message') },
    { requiredKeys: ['role', 'content'] },
  );
  const outputMessage = rec({
    id,
    type: fc.constant('message'),
    role: fc.constant('assistant'),
    status: fc.constant('completed'),
    content: fc.array(fc.oneof(outputText, rec({ type: fc.constant('refusal'), refusal: text })), { maxLength: 3 }),
  });
  const functionCall = rec(
    { type: fc.constant('function_call'), call_id: id, name: id, arguments: argumentText, id, status: fc.constant('completed') },
    { requiredKeys: ['type', 'call_id', 'name', 'arguments'] },
  );
  const functionOutput = rec(
    { type: fc.constant('function_call_output'), call_id: id, output: fc.oneof(text, fc.array(inputText, { maxLength: 2 })), id },
    { requiredKeys: ['type', 'call_id', 'output'] },
  );
  const opaque = fc.oneof(
    rec({ type: fc.constant('reasoning'), id, summary: fc.constant([]) }),
    rec({ type: fc.constant('item_reference'), id }),
    rec({ type: fc.constant('custom_tool_call'), call_id: id, name: id, input: text }),
    rec({ type: fc.constant('function_call_output'), output: text }), // no call_id: not polestar's
  );
  const item = fc.oneof(easyMessage, outputMessage, functionCall, functionCall, functionOutput, opaque);

  test('toOpenAIResponsesInput(fromOpenAIResponsesInput(items)) deep-equals items', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 10 }), (items) => {
        const history = fromOpenAIResponsesInput(items);
        new ConversationHistory(history);
        expect(toOpenAIResponsesInput(history)).toStrictEqual(items);
      }),
      RUNS,
    );
  });
});

describe('Anthropic Messages', () => {
  const textBlock = withExtras(rec({ type: fc.constant('text'), text, citations: fc.constant(null) }, { requiredKeys: ['type', 'text'] }));
  const image = rec({ type: fc.constant('image'), source: rec({ type: fc.constant('base64'), media_type: fc.constant('image/png'), data: fc.constant('AAAA') }) });
  const thinking = fc.oneof(
    rec({ type: fc.constant('thinking'), thinking: text, signature: id }),
    rec({ type: fc.constant('redacted_thinking'), data: id }),
  );
  const toolUse = withExtras(
    rec({ type: fc.constant('tool_use'), id, name: id, input: fc.oneof(jsonObject, json), caller: fc.constant({ type: 'direct' }) }, { requiredKeys: ['type', 'id', 'name', 'input'] }),
  );
  const serverToolUse = rec({ type: fc.constant('server_tool_use'), id, name: fc.constant('web_search'), input: jsonObject });
  const toolResult = withExtras(
    rec(
      { type: fc.constant('tool_result'), tool_use_id: id, content: fc.oneof(text, fc.array(fc.oneof(textBlock, image), { maxLength: 2 })), is_error: fc.boolean() },
      { requiredKeys: ['type', 'tool_use_id'] },
    ),
  );
  const message = fc.oneof(
    rec({ role: fc.constant('user'), content: fc.oneof(text, fc.array(fc.oneof(textBlock, image, toolResult, toolResult), { maxLength: 5 })) }),
    rec({ role: fc.constant('assistant'), content: fc.oneof(text, fc.array(fc.oneof(textBlock, thinking, toolUse, toolUse, serverToolUse), { maxLength: 5 })) }),
    rec({ role: fc.constant('system'), content: fc.oneof(text, fc.array(textBlock, { maxLength: 2 })) }),
  );
  const conversation = rec(
    { system: fc.oneof(text, fc.array(textBlock, { minLength: 1, maxLength: 2 })), messages: fc.array(message, { maxLength: 8 }) },
    { requiredKeys: ['messages'] },
  );

  test('toAnthropicMessages(fromAnthropicMessages(c)) deep-equals c', () => {
    fc.assert(
      fc.property(conversation, (c) => {
        const history = fromAnthropicMessages(c);
        new ConversationHistory(history);
        expect(toAnthropicMessages(history)).toStrictEqual(c);
      }),
      RUNS,
    );
  });
});

describe('across providers', () => {
  test('any polestar history converts to every provider and comes back with the same roles, text and calls', () => {
    const call = rec({ callId: id, name: id, arguments: fc.oneof(jsonObject, fc.constantFrom('{"bad', 'x')) });
    const msg = fc.oneof(
      rec({ role: fc.constantFrom('user' as const), content: text }),
      rec({ role: fc.constant('assistant' as const), content: text, toolCalls: fc.array(call, { minLength: 1, maxLength: 2 }) }),
      rec({ role: fc.constant('assistant' as const), content: text }),
      rec({ role: fc.constant('tool' as const), callId: id, content: text }),
    );
    fc.assert(
      fc.property(fc.array(msg, { maxLength: 8 }), (generated) => {
        const history = generated as ChatMessage[];
        expect(fromOpenAIChatMessages(toOpenAIChatMessages(history))).toEqual(history);
        expect(fromOpenAIResponsesInput(toOpenAIResponsesInput(history)).map(strip)).toEqual(history.map(strip));
        expect(fromAnthropicMessages(toAnthropicMessages(history)).map(strip)).toEqual(history.map(strip));
      }),
      RUNS,
    );
  });
});

/** Without meta (grouping markers a provider needed to keep its own shape). */
function strip(m: ChatMessage): Omit<ChatMessage, 'meta'> {
  const { meta: _meta, ...rest } = m;
  return rest;
}
