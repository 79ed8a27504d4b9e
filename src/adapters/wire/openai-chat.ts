/**
 * OpenAI Chat Completions: tools, tool calls, tool results and whole conversations
 * (`messages`), as plain JSON whose types are assignable to the `openai` SDK's own
 * (`ChatCompletionTool`, `ChatCompletionMessageParam`, …) without importing it.
 */
import { snapshotChatMessage, type ChatMessage, type ChatToolCall } from '../../conversation/chat-message.js';
import { describeValue } from '../../util/describe-value.js';
import { thawJson, type JsonValue } from '../../util/lossless-json.js';
import type { ToolCall, ToolResult, ToolSchema } from '../../tools/types.js';
import { extrasOf, isObj, metaWith, residualOf, withExtras, type Obj } from './provider-meta.js';
import { argumentsText, argumentsTextPreferring, parseArguments, rawArgumentsToKeep } from './tool-arguments.js';
import { checkToolNames } from './tool-names.js';
import { decodeContent, encodeContent } from './text-layout.js';

/** A function tool for Chat Completions (assignable to the SDK's `ChatCompletionTool`). */
export interface OpenAIChatTool {
  /** Always `'function'`. */
  type: 'function';
  /** The function the model may call. */
  function: {
    /** The tool's name. */
    name: string;
    /** The tool's description. */
    description: string;
    /** The tool's JSON Schema (a detached copy). */
    parameters: { [key: string]: unknown };
  };
}

/**
 * A tool call as the model sends it in `message.tool_calls` (the SDK's
 * `ChatCompletionMessageToolCall`: a function call, or a custom tool call).
 */
export interface OpenAIChatToolCallLike {
  /** The call id. */
  readonly id: string;
  /** `'function'` or `'custom'`. */
  readonly type?: string;
  /** A function call's name and arguments (JSON text). */
  readonly function?: {
    /** The tool's name. */
    readonly name: string;
    /** The arguments as JSON text. */
    readonly arguments: string;
  };
  /** A custom tool call's name and free-form input. */
  readonly custom?: {
    /** The custom tool's name. */
    readonly name: string;
    /** Its free-form input. */
    readonly input: string;
  };
}

/** A text part of Chat Completions content. */
export interface OpenAIChatTextPart {
  /** Always `'text'`. */
  type: 'text';
  /** The text. */
  text: string;
}

/** A function call in an assistant message (assignable to the SDK's `ChatCompletionMessageFunctionToolCall`). */
export interface OpenAIChatFunctionCall {
  /** The call id (polestar's `callId`). */
  id: string;
  /** Always `'function'`. */
  type: 'function';
  /** The function's name and its arguments as JSON text. */
  function: {
    /** The tool's name. */
    name: string;
    /** The arguments as JSON text (the model's raw text when it was not valid JSON). */
    arguments: string;
  };
}

/** The tool result message (assignable to the SDK's `ChatCompletionToolMessageParam`). */
export interface OpenAIChatToolMessage {
  /** Always `'tool'`. */
  role: 'tool';
  /** The id of the call this answers. */
  tool_call_id: string;
  /** The result text (text parts only when restored from a conversation). */
  content: string | OpenAIChatTextPart[];
}

/**
 * A Chat Completions message as these converters write it (assignable to the SDK's
 * `ChatCompletionMessageParam`). Parts and properties that a conversation read by
 * {@link fromOpenAIChatMessages} carried (images, audio, refusals, `name`, …) are written
 * back as they were read; their types are then the SDK's own.
 */
export type OpenAIChatMessage =
  | {
      /** A system message (`'developer'` when that is what was read). */
      role: 'system';
      /** The text. */
      content: string | OpenAIChatTextPart[];
    }
  | {
      /** A developer message (read as a polestar system message). */
      role: 'developer';
      /** The text. */
      content: string | OpenAIChatTextPart[];
    }
  | {
      /** A user message. */
      role: 'user';
      /** The text. */
      content: string | OpenAIChatTextPart[];
    }
  | {
      /** A model message. */
      role: 'assistant';
      /** The text (`null` or absent only when it was read so). */
      content?: string | OpenAIChatTextPart[] | null;
      /** The tool calls, from `toolCalls`. */
      tool_calls?: OpenAIChatFunctionCall[];
    }
  | OpenAIChatToolMessage
  | {
      /** A deprecated function result (read as a tool message whose `callId` is the function's name). */
      role: 'function';
      /** The function's name. */
      name: string;
      /** The result text. */
      content: string | null;
    };

/** A Chat Completions message as the SDK types it: anything with a `role` (read by {@link fromOpenAIChatMessages}). */
export interface OpenAIChatMessageLike {
  /** `'system'`, `'developer'`, `'user'`, `'assistant'`, `'tool'` or `'function'`. */
  readonly role: string;
  /** A string, an array of parts, or `null`. */
  readonly content?: unknown;
  /** An assistant message's tool calls. */
  readonly tool_calls?: unknown;
  /** A tool message's call id. */
  readonly tool_call_id?: unknown;
  /** The participant's (or, for `role: 'function'`, the function's) name. */
  readonly name?: unknown;
  /** An assistant message's refusal. */
  readonly refusal?: unknown;
}

const KEY = 'openaiChat';
const TEXT = ['text'];
const textPart = (text: string): Obj => ({ type: 'text', text });

/**
 * Tools for `chat.completions.create({ tools })`: `{ type: 'function', function: { name,
 * description, parameters } }` (no `strict`: polestar validates the arguments itself;
 * strict mode needs a strict-compatible schema at registration).
 *
 * @throws TypeError naming every tool whose name does not match `^[a-zA-Z0-9_-]{1,64}$`.
 */
export function toOpenAIChatTools(schemas: readonly ToolSchema[]): OpenAIChatTool[] {
  return checkToolNames(schemas, 'toOpenAIChatTools(schemas)').map((s) => ({
    type: 'function',
    function: { name: s.name, description: s.description, parameters: thawJson(s.parameters as JsonValue) as { [key: string]: unknown } },
  }));
}

/**
 * One tool call of the model (an entry of `message.tool_calls`) as a polestar call for
 * `Tools.execute` / `executeToolCall`. Arguments that are not valid JSON are passed on as
 * the raw text, so `execute` answers `INVALID_ARGS`; blank arguments stand for `{}`.
 * Never throws: a malformed call becomes one `execute` refuses.
 *
 * @param signal - aborts the call (becomes `ToolCall.signal`).
 */
export function fromOpenAIChatToolCall(call: OpenAIChatToolCallLike, signal?: AbortSignal): ToolCall {
  let out: ToolCall;
  try {
    const o: Obj = isObj(call) ? call : {};
    const custom = o.type === 'custom' || (!isObj(o.function) && isObj(o.custom));
    const fn: Obj = isObj(custom ? o.custom : o.function) ? ((custom ? o.custom : o.function) as Obj) : {};
    out = {
      callId: typeof o.id === 'string' ? o.id : '',
      name: typeof fn.name === 'string' ? fn.name : '',
      arguments: custom ? (typeof fn.input === 'string' ? fn.input : '') : parseArguments(fn.arguments),
    };
  } catch {
    out = { callId: '', name: '', arguments: '' };
  }
  return signal === undefined ? out : { ...out, signal };
}

/** A polestar result as the `{ role: 'tool', tool_call_id, content }` message answering the call. */
export function toOpenAIChatToolMessage(result: ToolResult): OpenAIChatToolMessage {
  return { role: 'tool', tool_call_id: result.callId, content: result.content };
}

/**
 * A polestar conversation as Chat Completions `messages`. System messages stay in place
 * (`role: 'system'`, or `'developer'` when that is what was read), an assistant's
 * `toolCalls` become `tool_calls` (arguments as JSON text; a raw string verbatim), a tool
 * message becomes `{ role: 'tool', tool_call_id, content }` (`isError` has no field here:
 * the content already reads `Error: …`). What {@link fromOpenAIChatMessages} kept in
 * `meta.openaiChat` is restored, so `toOpenAIChatMessages(fromOpenAIChatMessages(m))`
 * deep-equals `m`.
 *
 * @throws TypeError for an invalid message.
 */
export function toOpenAIChatMessages(messages: readonly ChatMessage[]): OpenAIChatMessage[] {
  if (!Array.isArray(messages)) throw new TypeError(`toOpenAIChatMessages(messages): messages must be an array of chat messages, got ${describeValue(messages)}.`);
  const out = (messages as readonly unknown[]).map((raw, i) => {
    const m = snapshotChatMessage(raw, `toOpenAIChatMessages(messages): messages[${i}]`);
    const r = residualOf(m, KEY);
    const content = encodeContent(m.content, r, 'content', TEXT, textPart);
    switch (m.role) {
      case 'system':
        return withExtras({ role: r.role === 'developer' ? 'developer' : 'system', content }, r.extra) as OpenAIChatMessage;
      case 'user':
        return withExtras({ role: 'user', content }, r.extra) as OpenAIChatMessage;
      case 'assistant': {
        const calls = m.toolCalls;
        const kept = Array.isArray(r.toolCalls) && calls !== undefined && r.toolCalls.length === calls.length ? (r.toolCalls as unknown[]) : [];
        const tool_calls = calls?.map((c, j) => callOut(c, isObj(kept[j]) ? kept[j] : {}));
        return withExtras({ role: 'assistant', content, tool_calls }, r.extra) as OpenAIChatMessage;
      }
      case 'tool':
        return withExtras(r.role === 'function' ? { role: 'function', name: m.callId, content } : { role: 'tool', tool_call_id: m.callId, content }, r.extra) as OpenAIChatMessage;
    }
  });
  // Parts restored from meta are frozen: hand out a detached, mutable copy.
  return thawJson(out as unknown as JsonValue) as unknown as OpenAIChatMessage[];
}

function callOut(c: ChatToolCall, cr: Obj): Obj {
  if (cr.type === 'custom') {
    return withExtras({ id: c.callId, type: 'custom', custom: withExtras({ name: c.name, input: argumentsText(c.arguments) }, cr.fnExtra) }, cr.extra);
  }
  const type = cr.type === null ? undefined : typeof cr.type === 'string' ? cr.type : 'function';
  const fn = withExtras({ name: c.name, arguments: argumentsTextPreferring(c.arguments, cr.arguments) }, cr.fnExtra);
  return withExtras({ id: c.callId, type, function: fn }, cr.extra);
}

/**
 * Chat Completions `messages` (request messages, or a response's `choices[0].message`) as a
 * polestar conversation, for `ConversationHistory`. `developer` messages become system
 * messages; `tool_calls` become `toolCalls` (arguments parsed, or the raw text when it is
 * not valid JSON); `{ role: 'tool', tool_call_id }` becomes a tool message. Everything
 * polestar does not model (content parts such as images and audio, refusals, `name`,
 * `annotations`, `audio`, custom tool calls, the model's exact argument text, …) is kept
 * in `meta.openaiChat` for {@link toOpenAIChatMessages}. Text parts are joined with a newline.
 *
 * @throws TypeError naming the message for one that is not a Chat Completions message.
 */
export function fromOpenAIChatMessages(messages: readonly OpenAIChatMessageLike[]): ChatMessage[] {
  if (!Array.isArray(messages)) throw new TypeError(`fromOpenAIChatMessages(messages): messages must be an array, got ${describeValue(messages)}.`);
  return (messages as readonly unknown[]).map((m, i) => {
    const where = `fromOpenAIChatMessages(messages): messages[${i}]`;
    if (!isObj(m)) throw new TypeError(`${where} must be a message object, got ${describeValue(m)}.`);
    const r: Obj = {};
    const content = decodeContent(m.content, TEXT, r, 'content', where);
    let out: Obj;
    switch (m.role) {
      case 'system':
      case 'developer':
        if (m.role === 'developer') r.role = 'developer';
        out = { role: 'system', content };
        keepExtras(r, m, ['role', 'content']);
        break;
      case 'user':
        out = { role: 'user', content };
        keepExtras(r, m, ['role', 'content']);
        break;
      case 'assistant': {
        out = { role: 'assistant', content };
        if (Array.isArray(m.tool_calls)) {
          const kept: (Obj | null)[] = [];
          out.toolCalls = (m.tool_calls as unknown[]).map((tc, j) => callIn(tc, `${where}.tool_calls[${j}]`, kept));
          if (kept.some((k) => k !== null)) r.toolCalls = kept;
          keepExtras(r, m, ['role', 'content', 'tool_calls']);
        } else keepExtras(r, m, ['role', 'content']);
        break;
      }
      case 'tool':
        out = { role: 'tool', callId: nonEmpty(m.tool_call_id, `${where}.tool_call_id`), content };
        keepExtras(r, m, ['role', 'content', 'tool_call_id']);
        break;
      case 'function':
        r.role = 'function';
        out = { role: 'tool', callId: nonEmpty(m.name, `${where}.name`), content };
        keepExtras(r, m, ['role', 'content', 'name']);
        break;
      default:
        throw new TypeError(`${where}: role ${describeValue(m.role)} is not a Chat Completions role (system, developer, user, assistant, tool, function).`);
    }
    return snapshotChatMessage({ ...out, ...metaWith(KEY, r) }, where);
  });
}

function keepExtras(r: Obj, m: Obj, consumed: readonly string[]): void {
  const extra = extrasOf(m, consumed);
  if (Object.keys(extra).length > 0) r.extra = extra;
}

function nonEmpty(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.length === 0) throw new TypeError(`${where} must be a non-empty string, got ${describeValue(v)}.`);
  return v;
}

function callIn(tc: unknown, where: string, kept: (Obj | null)[]): ChatToolCall {
  if (!isObj(tc)) throw new TypeError(`${where} must be a tool call object, got ${describeValue(tc)}.`);
  const callId = nonEmpty(tc.id, `${where}.id`);
  const cr: Obj = {};
  let fn: unknown;
  let args: JsonValue;
  if (tc.type === 'custom') {
    cr.type = 'custom';
    fn = tc.custom;
    if (!isObj(fn) || typeof fn.input !== 'string') throw new TypeError(`${where}.custom must be { name, input: string }, got ${describeValue(fn)}.`);
    args = fn.input;
    const fe = extrasOf(fn, ['name', 'input']);
    if (Object.keys(fe).length > 0) cr.fnExtra = fe;
  } else {
    if (tc.type === undefined) cr.type = null;
    else if (tc.type !== 'function') cr.type = tc.type as JsonValue;
    fn = tc.function;
    if (!isObj(fn) || typeof fn.arguments !== 'string') throw new TypeError(`${where}.function must be { name, arguments: string }, got ${describeValue(fn)}.`);
    args = parseArguments(fn.arguments);
    const raw = rawArgumentsToKeep(fn.arguments, args);
    if (raw !== undefined) cr.arguments = raw;
    const fe = extrasOf(fn, ['name', 'arguments']);
    if (Object.keys(fe).length > 0) cr.fnExtra = fe;
  }
  const name = nonEmpty(fn.name, `${where} name`);
  const extra = extrasOf(tc, ['id', 'type', tc.type === 'custom' ? 'custom' : 'function']);
  if (Object.keys(extra).length > 0) cr.extra = extra;
  kept.push(Object.keys(cr).length > 0 ? cr : null);
  return { callId, name, arguments: args };
}
