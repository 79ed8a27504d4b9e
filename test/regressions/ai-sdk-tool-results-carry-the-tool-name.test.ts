// An AI SDK tool result needs the tool's name, which a polestar tool message does not
// carry: hand-written converters lost it one way. toAiSdkMessages takes it from the
// assistant call the result answers (the latest one with that id), and a result whose
// call is not in the conversation is a TypeError saying so, not a message the SDK refuses.
import { modelMessageSchema } from 'ai';
import type { ChatMessage } from '../../src/index.js';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/adapters/ai-sdk.js';

test('tool results carry the name of the tool their call named', () => {
  const chat: ChatMessage[] = [
    { role: 'user', content: 'Weather and news?' },
    { role: 'assistant', content: '', toolCalls: [{ callId: 'a', name: 'weather', arguments: {} }, { callId: 'b', name: 'news', arguments: {} }] },
    { role: 'tool', callId: 'b', content: 'calm' },
    { role: 'tool', callId: 'a', content: 'sunny', isError: false },
  ];
  const model = toAiSdkMessages(chat);
  expect(model[2]).toEqual({
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'b', toolName: 'news', output: { type: 'text', value: 'calm' } },
      { type: 'tool-result', toolCallId: 'a', toolName: 'weather', output: { type: 'text', value: 'sunny' } },
    ],
  });
  expect(model.every((m) => modelMessageSchema.safeParse(m).success)).toBe(true);
  expect(fromAiSdkMessages(model)).toEqual([chat[0], chat[1], chat[2], { role: 'tool', callId: 'a', content: 'sunny' }]);
  expect(() => toAiSdkMessages([{ role: 'tool', callId: 'zz', content: 'orphan' }])).toThrow(/answers the call "zz", but no earlier assistant message made that call/);
});
