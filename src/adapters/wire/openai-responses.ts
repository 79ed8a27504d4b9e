/**
 * OpenAI Responses API: tools, `function_call` items, `function_call_output` items and
 * whole conversations (the `input` item list), as plain JSON whose types are assignable
 * to the `openai` SDK's (`FunctionTool`, `ResponseInputItem`, …) without importing it.
 * The OpenAI Agents SDK's model items have the same shapes.
 */
import { snapshotChatMessage, type ChatMessage, type ChatToolCall } from '../../conversation/chat-message.js';
import { describeValue } from '../../util/describe-value.js';
import { thawJson, type JsonValue } from '../../util/lossless-json.js';
import type { ToolCall, ToolResult, ToolSchema } from '../../tools/types.js';
import { extrasOf, isObj, metaWith, residualOf, withExtras, type Obj } from './provider-meta.js';
import { argumentsTextPreferring, parseArguments, rawArgumentsToKeep } from './tool-arguments.js';
import { checkToolNames } from './tool-names.js';
import { decodeContent, encodeContent } from './text-layout.js';

/** A function tool for `responses.create({ tools })` (assignable to the SDK's `FunctionTool`). */
export interface OpenAIResponsesTool {
  /** Always `'function'`. */
  type: 'function';
  /** The tool's name. */
  name: string;
  /** The tool's description. */
  description: string;
  /** The tool's JSON Schema (a detached copy). */
  parameters: { [key: string]: unknown };
  /** Always `false`: polestar validates the arguments itself (strict mode needs a strict-compatible schema at registration). */
  strict: false;
}

/** A `function_call` item as the model sends it (the SDK's `ResponseFunctionToolCall`). */
export interface OpenAIResponsesFunctionCallLike {
  /** The call id. */
  readonly call_id: string;
  /** The tool's name. */
  readonly name: string;
  /** The arguments as JSON text. */
  readonly arguments: string;
}

/** An `input_text` content part. */
export interface OpenAIResponsesInputText {
  /** Always `'input_text'`. */
  type: 'input_text';
  /** The text. */
  text: string;
}

/** A `function_call` item (assignable to the SDK's `ResponseFunctionToolCall`). */
export interface OpenAIResponsesFunctionCall {
  /** Always `'function_call'`. */
  type: 'function_call';
  /** The call id (polestar's `callId`). */
  call_id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as JSON text (the model's raw text when it was not valid JSON). */
  arguments: string;
}

/** A `function_call_output` item answering a call (assignable to the SDK's `ResponseInputItem.FunctionCallOutput`). */
export interface OpenAIResponsesFunctionOutput {
  /** Always `'function_call_output'`. */
  type: 'function_call_output';
  /** The id of the call this answers. */
  call_id: string;
  /** The result text (`input_text` parts only when restored from a conversation). */
  output: string | OpenAIResponsesInputText[];
}

/**
 * An item of `input` as {@link toOpenAIResponsesInput} writes it (assignable to the SDK's
 * `ResponseInputItem`). Items and properties a conversation read by
 * {@link fromOpenAIResponsesInput} carried (reasoning items, output messages with ids and
 * annotations, images, files, other tools' calls, …) are written back as they were read;
 * their types are then the SDK's own.
 */
export type OpenAIResponsesInputItem =
  | {
      /** Who said it (`'developer'` for a system message read as one). */
      role: 'user' | 'system' | 'developer' | 'assistant';
      /** The text. */
      content: string | OpenAIResponsesInputText[];
    }
  | OpenAIResponsesFunctionCall
  | OpenAIResponsesFunctionOutput;

const KEY = 'openaiResponses';
const TEXT = ['input_text', 'output_text'];
const OUTPUT_TEXT = ['input_text'];
const inputText = (text: string): Obj => ({ type: 'input_text', text });
const outputText = (text: string): Obj => ({ type: 'output_text', text, annotations: [] });

/**
 * Tools for `responses.create({ tools })`: `{ type: 'function', name, description,
 * parameters, strict: false }`.
 *
 * @throws TypeError naming every tool whose name does not match `^[a-zA-Z0-9_-]{1,64}$`.
 */
export function toOpenAIResponsesTools(schemas: readonly ToolSchema[]): OpenAIResponsesTool[] {
  return checkToolNames(schemas, 'toOpenAIResponsesTools(schemas)').map((s) => ({
    type: 'function',
    name: s.name,
    description: s.description,
    parameters: thawJson(s.parameters as JsonValue) as { [key: string]: unknown },
    strict: false,
  }));
}

/**
 * One `function_call` output item of the model as a polestar call for `Tools.execute` /
 * `executeToolCall`. Arguments that are not valid JSON are passed on as the raw text, so
 * `execute` answers `INVALID_ARGS`; blank arguments stand for `{}`. Never throws.
 *
 * @param signal - aborts the call (becomes `ToolCall.signal`).
 */
export function fromOpenAIResponsesFunctionCall(item: OpenAIResponsesFunctionCallLike, signal?: AbortSignal): ToolCall {
  let out: ToolCall;
  try {
    const o: Obj = isObj(item) ? item : {};
    out = {
      callId: typeof o.call_id === 'string' ? o.call_id : '',
      name: typeof o.name === 'string' ? o.name : '',
      arguments: parseArguments(o.arguments),
    };
  } catch {
    out = { callId: '', name: '', arguments: '' };
  }
  return signal === undefined ? out : { ...out, signal };
}

/** A polestar result as the `function_call_output` item answering the call. */
export function toOpenAIResponsesFunctionOutput(result: ToolResult): OpenAIResponsesFunctionOutput {
  return { type: 'function_call_output', call_id: result.callId, output: result.content };
}

/**
 * A polestar conversation as a Responses `input` item list: system and user messages as
 * `{ role, content }`, an assistant message as `{ role: 'assistant', content }` followed by a
 * `function_call` item per tool call, a tool message as a `function_call_output` item
 * (`isError` has no field here: the content already reads `Error: …`). What
 * {@link fromOpenAIResponsesInput} kept in `meta.openaiResponses` (reasoning and other
 * items, output-message ids and annotations, parts, …) is restored, so
 * `toOpenAIResponsesInput(fromOpenAIResponsesInput(items))` deep-equals `items`.
 *
 * @throws TypeError for an invalid message.
 */
export function toOpenAIResponsesInput(messages: readonly ChatMessage[]): OpenAIResponsesInputItem[] {
  if (!Array.isArray(messages)) throw new TypeError(`toOpenAIResponsesInput(messages): messages must be an array of chat messages, got ${describeValue(messages)}.`);
  const out: unknown[] = [];
  (messages as readonly unknown[]).forEach((raw, i) => {
    const m = snapshotChatMessage(raw, `toOpenAIResponsesInput(messages): messages[${i}]`);
    const r = residualOf(m, KEY);
    if (Array.isArray(r.before)) out.push(...r.before);
    switch (m.role) {
      case 'system':
      case 'user':
        out.push(withExtras({ role: m.role === 'system' && r.role === 'developer' ? 'developer' : m.role, content: encodeContent(m.content, r, 'content', TEXT, inputText) }, r.extra));
        break;
      case 'assistant': {
        if (!(r.noMessage === true && m.content === '')) {
          out.push(withExtras({ role: 'assistant', content: encodeContent(m.content, r, 'content', TEXT, outputText) }, r.extra));
        }
        const calls = m.toolCalls ?? [];
        const kept = Array.isArray(r.calls) && r.calls.length === calls.length ? (r.calls as unknown[]) : [];
        calls.forEach((c, j) => out.push(callOut(c, isObj(kept[j]) ? kept[j] : {})));
        break;
      }
      case 'tool':
        out.push(withExtras({ type: 'function_call_output', call_id: m.callId, output: encodeContent(m.content, r, 'content', OUTPUT_TEXT, inputText) }, r.extra));
        break;
    }
    if (Array.isArray(r.after)) out.push(...r.after);
  });
  // Items restored from meta are frozen: hand out a detached, mutable copy.
  return thawJson(out as JsonValue) as unknown as OpenAIResponsesInputItem[];
}

function callOut(c: ChatToolCall, cr: Obj): Obj {
  return withExtras({ type: 'function_call', call_id: c.callId, name: c.name, arguments: argumentsTextPreferring(c.arguments, cr.arguments) }, cr.extra);
}

interface Draft {
  readonly m: Obj;
  readonly r: Obj;
  readonly where: string;
  calls?: (Obj | null)[];
}

function isMessageItem(item: Obj): boolean {
  return item.type === 'message' || (item.type === undefined && typeof item.role === 'string' && 'content' in item);
}

/**
 * A Responses `input` item list (or a response's `output` items) as a polestar
 * conversation, for `ConversationHistory`. Message items become system (`developer`
 * included), user and assistant messages (text parts joined with a newline); the
 * `function_call` items that follow an assistant message (or that stand alone) become its
 * `toolCalls`; a `function_call_output` item becomes a tool message. Everything else
 * (reasoning items, other tools' calls and outputs, item references, output-message ids,
 * annotations, images and files, the model's exact argument text, …) is kept in
 * `meta.openaiResponses` of a neighbouring message for {@link toOpenAIResponsesInput}.
 *
 * @throws TypeError naming the item for a message or function item that is malformed.
 */
export function fromOpenAIResponsesInput(items: readonly object[]): ChatMessage[] {
  const where0 = 'fromOpenAIResponsesInput(items)';
  if (!Array.isArray(items)) throw new TypeError(`${where0}: items must be an array of input items, got ${describeValue(items)}.`);
  const drafts: Draft[] = [];
  let pending: unknown[] = [];
  let open: Draft | undefined;
  const start = (m: Obj, r: Obj, where: string): Draft => {
    if (pending.length > 0) r.before = pending;
    pending = [];
    const d: Draft = { m, r, where };
    drafts.push(d);
    return d;
  };
  (items as readonly unknown[]).forEach((item, j) => {
    const where = `${where0}[${j}]`;
    if (!isObj(item)) throw new TypeError(`${where} must be an item object, got ${describeValue(item)}.`);
    if (isMessageItem(item)) {
      const role = item.role;
      if (role !== 'user' && role !== 'system' && role !== 'developer' && role !== 'assistant') {
        throw new TypeError(`${where}: a message's role must be user, system, developer or assistant, got ${describeValue(role)}.`);
      }
      const r: Obj = {};
      const content = decodeContent(item.content, TEXT, r, 'content', where);
      if (role === 'developer') r.role = 'developer';
      const extra = extrasOf(item, ['role', 'content']);
      if (Object.keys(extra).length > 0) r.extra = extra;
      const d = start({ role: role === 'developer' ? 'system' : role, content }, r, where);
      open = role === 'assistant' ? d : undefined;
      return;
    }
    if (item.type === 'function_call') {
      const { call_id: callId, name, arguments: text } = item;
      if (typeof callId !== 'string' || callId === '' || typeof name !== 'string' || name === '' || typeof text !== 'string') {
        throw new TypeError(`${where}: a function_call item needs a non-empty call_id and name and string arguments.`);
      }
      const args = parseArguments(text);
      const cr: Obj = {};
      const raw = rawArgumentsToKeep(text, args);
      if (raw !== undefined) cr.arguments = raw;
      const extra = extrasOf(item, ['type', 'call_id', 'name', 'arguments']);
      if (Object.keys(extra).length > 0) cr.extra = extra;
      const call: ChatToolCall = { callId, name, arguments: args };
      let d = open;
      if (d === undefined || pending.length > 0) {
        d = start({ role: 'assistant', content: '' }, { noMessage: true }, where);
        open = d;
      }
      ((d.m.toolCalls ??= []) as ChatToolCall[]).push(call);
      (d.calls ??= []).push(Object.keys(cr).length > 0 ? cr : null);
      return;
    }
    if (item.type === 'function_call_output' && typeof item.call_id === 'string' && item.call_id !== '') {
      const r: Obj = {};
      const content = decodeContent(item.output, OUTPUT_TEXT, r, 'content', where);
      const extra = extrasOf(item, ['type', 'call_id', 'output']);
      if (Object.keys(extra).length > 0) r.extra = extra;
      start({ role: 'tool', callId: item.call_id, content }, r, where);
      open = undefined;
      return;
    }
    pending.push(item);
  });
  if (pending.length > 0) {
    const last = drafts.at(-1);
    if (last !== undefined) last.r.after = pending;
    else start({ role: 'assistant', content: '' }, { noMessage: true }, `${where0}`);
  }
  return drafts.map((d) => {
    if (d.calls?.some((c) => c !== null)) d.r.calls = d.calls;
    return snapshotChatMessage({ ...d.m, ...metaWith(KEY, d.r) }, d.where);
  });
}
