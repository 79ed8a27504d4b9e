// toAiSdkMessages writes a ChatMessage's `meta: {}` as `providerOptions.polestar.meta: {}`.
// Read back together with parts polestar keeps in `meta.aiSdk` (an image, say), the empty
// meta merged into `{ aiSdk: … }` and was then indistinguishable from no meta at all, so
// toAiSdkMessages(fromAiSdkMessages(m)) dropped `providerOptions` (found by a wider
// fast-check generator).
import type { ModelMessage } from 'ai';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/adapters/ai-sdk.js';

test.each<[string, ModelMessage]>([
  ['no parts', { role: 'user', content: [], providerOptions: { polestar: { meta: {} } } }],
  ['an image part', { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: 'AAAA', mediaType: 'image/png' }], providerOptions: { polestar: { meta: {} }, openai: { detail: 'low' } } }],
  ['a reasoning part', { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'Yes.' }], providerOptions: { polestar: { meta: {} } } }],
])('a message with %s and providerOptions.polestar.meta {} comes back unchanged', (_what, message) => {
  expect(toAiSdkMessages(fromAiSdkMessages([message]))).toEqual([message]);
});

test('a ChatMessage with meta {} still round-trips through the AI SDK form', () => {
  const chat = [{ role: 'user' as const, content: 'hi', meta: {} }];
  expect(fromAiSdkMessages(toAiSdkMessages(chat))).toEqual(chat);
});
