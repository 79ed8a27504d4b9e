// A JavaScript value with an `undefined` property (`{ temp: 21, note: undefined }`, what a
// tool body or an application's own message commonly holds) is JSON to the AI SDK, which
// writes it as `{"temp":21}`. fromAiSdkMessages refused it as "not lossless JSON": a tool
// call's input became a raw string (so executing it answered INVALID_ARGS and the call was
// sent back to the provider as a string), and a json tool output became a tool message with
// empty content (the result text was lost from the history).
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/adapters/ai-sdk.js';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

test('a tool output with an undefined property (a real AI SDK run) keeps its JSON text', async () => {
  let step = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      step++;
      return step === 1
        ? { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Oslo"}' }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
        : { content: [{ type: 'text', text: 'Mild.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
  const weather = tool({
    inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    execute: async () => ({ temp: 21, note: undefined as string | undefined }),
  });
  const result = await generateText({ model, prompt: 'Weather in Oslo?', tools: { weather }, stopWhen: stepCountIs(3) });
  const chat = fromAiSdkMessages(result.response.messages);
  const toolMessage = chat.find((m) => m.role === 'tool');
  expect(toolMessage).toEqual({ role: 'tool', callId: 'c1', content: '{"temp":21}', meta: { aiSdk: { output: { type: 'json' } } } });
  expect(toAiSdkMessages(chat)).toEqual(result.response.messages);
});

test('a tool call whose input has an undefined property keeps its arguments as an object', () => {
  const model: ModelMessage[] = [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: { q: 'moon', page: undefined } }] },
  ];
  const chat = fromAiSdkMessages(model);
  expect(chat).toEqual([{ role: 'assistant', content: '', toolCalls: [{ callId: 'c1', name: 'search', arguments: { q: 'moon' } }] }]);
  const back = toAiSdkMessages(chat);
  expect(back).toEqual(model);
  expect(typeof (back[0] as { content: Array<{ input: unknown }> }).content[0].input).toBe('object');
});
