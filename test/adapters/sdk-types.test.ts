/**
 * SPEC §11.5: every converter's output type-checks against the real SDK types (openai 7.x,
 * @anthropic-ai/sdk 1.x; devDependencies only), and the SDKs' own values are accepted as
 * input. This file is compiled by `npm run typecheck` (tsconfig.json includes test/): an
 * assignment that stops compiling fails the gate. Each block also runs a small assertion.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ChatMessage, ToolResult, ToolSchema } from '../../src/index.js';
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

type Chat = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Resp = OpenAI.Responses.ResponseInputItem;

const schemas: ToolSchema[] = [{ name: 'search', description: 'search', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
const history: ChatMessage[] = [
  { role: 'system', content: 's' },
  { role: 'user', content: 'u' },
  { role: 'assistant', content: '', toolCalls: [{ callId: 'c', name: 'search', arguments: { q: 'x' } }] },
  { role: 'tool', callId: 'c', content: 'r', isError: false },
];
const result: ToolResult = { callId: 'c', content: 'r', isError: false };

test('OpenAI Chat Completions: outputs are the SDK types; SDK values are inputs', () => {
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = toOpenAIChatTools(schemas);
  const functionTools: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = toOpenAIChatTools(schemas);
  const messages: Chat[] = toOpenAIChatMessages(history);
  const toolMessage: OpenAI.Chat.Completions.ChatCompletionToolMessageParam = toOpenAIChatToolMessage(result);
  const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = { model: 'm', messages: [...toOpenAIChatMessages(history), toOpenAIChatToolMessage(result)], tools: toOpenAIChatTools(schemas) };

  const completion = {} as OpenAI.Chat.Completions.ChatCompletion;
  const check = (): void => {
    const message: OpenAI.Chat.Completions.ChatCompletionMessage = completion.choices[0].message;
    fromOpenAIChatMessages([message]);
    fromOpenAIChatMessages(params.messages);
    for (const call of message.tool_calls ?? []) fromOpenAIChatToolCall(call);
    const one: OpenAI.Chat.Completions.ChatCompletionMessageToolCall = { id: 'c', type: 'function', function: { name: 'n', arguments: '{}' } };
    fromOpenAIChatToolCall(one, new AbortController().signal);
  };
  void check;
  expect([tools, functionTools, messages, toolMessage, params].every((x) => x !== undefined)).toBe(true);
});

test('OpenAI Responses: outputs are the SDK types; SDK values are inputs', () => {
  const tools: OpenAI.Responses.Tool[] = toOpenAIResponsesTools(schemas);
  const functionTools: OpenAI.Responses.FunctionTool[] = toOpenAIResponsesTools(schemas);
  const input: OpenAI.Responses.ResponseInput = toOpenAIResponsesInput(history);
  const items: Resp[] = [...toOpenAIResponsesInput(history), toOpenAIResponsesFunctionOutput(result)];
  const output: OpenAI.Responses.ResponseInputItem.FunctionCallOutput = toOpenAIResponsesFunctionOutput(result);
  const params: OpenAI.Responses.ResponseCreateParamsNonStreaming = { model: 'm', input: toOpenAIResponsesInput(history), tools: toOpenAIResponsesTools(schemas) };

  const response = {} as OpenAI.Responses.Response;
  const check = (): void => {
    fromOpenAIResponsesInput(response.output);
    fromOpenAIResponsesInput(items);
    for (const item of response.output) if (item.type === 'function_call') fromOpenAIResponsesFunctionCall(item);
    const call: OpenAI.Responses.ResponseFunctionToolCall = { type: 'function_call', call_id: 'c', name: 'n', arguments: '{}' };
    fromOpenAIResponsesFunctionCall(call, new AbortController().signal);
  };
  void check;
  expect([tools, functionTools, input, output, params].every((x) => x !== undefined)).toBe(true);
});

test('Anthropic Messages: outputs are the SDK types; SDK values are inputs', () => {
  const tools: Anthropic.Messages.Tool[] = toAnthropicTools(schemas);
  const union: Anthropic.Messages.ToolUnion[] = toAnthropicTools(schemas);
  const { system, messages } = toAnthropicMessages(history);
  const sdkMessages: Anthropic.Messages.MessageParam[] = messages;
  const sdkSystem: Anthropic.Messages.MessageCreateParams['system'] = system;
  const block: Anthropic.Messages.ToolResultBlockParam = toAnthropicToolResult(result);
  const params: Anthropic.Messages.MessageCreateParamsNonStreaming = { model: 'm', max_tokens: 1, ...toAnthropicMessages(history), tools: toAnthropicTools(schemas) };
  const withResult: Anthropic.Messages.MessageParam = { role: 'user', content: [toAnthropicToolResult(result)] };
  // The check has teeth: polestar's schema alone is not an Anthropic input_schema (no literal type: 'object').
  // @ts-expect-error input_schema needs the literal type 'object'
  const raw: Anthropic.Messages.Tool[] = schemas.map((s) => ({ name: s.name, input_schema: s.parameters }));
  void raw;

  const response = {} as Anthropic.Messages.Message;
  const check = (): void => {
    fromAnthropicMessages(params);
    fromAnthropicMessages({ messages: [{ role: 'assistant', content: response.content }] });
    fromAnthropicMessages(params.messages);
    for (const b of response.content) if (b.type === 'tool_use') fromAnthropicToolUse(b, new AbortController().signal);
    const use: Anthropic.Messages.ToolUseBlockParam = { type: 'tool_use', id: 'i', name: 'n', input: {} };
    fromAnthropicToolUse(use);
  };
  void check;
  expect([tools, union, sdkMessages, sdkSystem, block, params, withResult].every((x) => x !== undefined || x === sdkSystem)).toBe(true);
});

test('the SDKs are devDependencies only: polestar-di/adapters imports none of them at run time', async () => {
  const { readFile } = await import('node:fs/promises');
  // Every module polestar-di/adapters loads (its own entry's import graph; the ai-sdk and
  // openai-agents entries import their own SDK, and only they do).
  const seen = new Set<string>();
  const queue = [new URL('../../src/adapters/index.ts', import.meta.url).href];
  while (queue.length > 0) {
    const href = queue.pop() as string;
    if (seen.has(href)) continue;
    seen.add(href);
    const src = await readFile(new URL(href), 'utf8');
    expect([href, src.match(/^(?:import|export)\b[^;]*?from '(openai|@anthropic-ai\/sdk|@modelcontextprotocol\/[^']+|ai|@openai\/agents)(\/[^']*)?'/m)?.[0]]).toEqual([href, undefined]);
    for (const m of src.matchAll(/^(?:import|export)\b[^;]*?from '(\.{1,2}\/[^']+)\.js'/gm)) queue.push(new URL(`${m[1]}.ts`, href).href);
  }
  expect(seen.size).toBeGreaterThan(10);
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
  for (const sdk of ['openai', '@anthropic-ai/sdk', '@modelcontextprotocol/sdk', 'ai', '@openai/agents']) expect(pkg.dependencies[sdk]).toBeUndefined();
});
