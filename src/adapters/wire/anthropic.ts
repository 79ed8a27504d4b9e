/**
 * Anthropic Messages: tools, `tool_use` blocks, `tool_result` blocks and whole
 * conversations (`{ system?, messages }`), as plain JSON whose types are assignable to the
 * `@anthropic-ai/sdk` types (`Tool`, `MessageParam`, …) without importing it.
 */
import { snapshotChatMessage, type ChatMessage, type ChatToolCall } from '../../conversation/chat-message.js';
import { describeValue } from '../../util/describe-value.js';
import { thawJson, type JsonValue } from '../../util/lossless-json.js';
import type { ToolCall, ToolResult, ToolSchema } from '../../tools/types.js';
import { extrasOf, isObj, jsonEqual, metaWith, residualOf, withExtras, type Obj } from './provider-meta.js';
import { checkToolNames } from './tool-names.js';
import { TEXT_JOIN, decodeContent, encodeContent, isPlaceholder, isTextPart, splitJoined } from './text-layout.js';

/** A client tool for `messages.create({ tools })` (assignable to the SDK's `Tool`). */
export interface AnthropicTool {
  /** The tool's name. */
  name: string;
  /** The tool's description. */
  description: string;
  /** The tool's JSON Schema (a detached copy) with the literal root `type: 'object'` Anthropic requires. */
  input_schema: {
    /** Always the literal `'object'`. */
    type: 'object';
    /** The rest of the schema. */
    [key: string]: unknown;
  };
}

/** A `tool_use` block as the model sends it (the SDK's `ToolUseBlock`). */
export interface AnthropicToolUseLike {
  /** The call id. */
  readonly id: string;
  /** The tool's name. */
  readonly name: string;
  /** The arguments (already parsed JSON). */
  readonly input: unknown;
}

/** A text block. */
export interface AnthropicTextBlock {
  /** Always `'text'`. */
  type: 'text';
  /** The text. */
  text: string;
}

/** A `tool_use` block of an assistant message (assignable to the SDK's `ToolUseBlockParam`). */
export interface AnthropicToolUseBlock {
  /** Always `'tool_use'`. */
  type: 'tool_use';
  /** The call id (polestar's `callId`). */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments (polestar's `arguments`; the model's raw text when it was not valid JSON). */
  input: unknown;
}

/** A `tool_result` block answering a call (assignable to the SDK's `ToolResultBlockParam`). */
export interface AnthropicToolResult {
  /** Always `'tool_result'`. */
  type: 'tool_result';
  /** The id of the `tool_use` this answers. */
  tool_use_id: string;
  /** The result text (text blocks only when restored from a conversation). */
  content: string | AnthropicTextBlock[];
  /** `true` when the call failed. */
  is_error?: boolean;
}

/**
 * A message of `messages` as {@link toAnthropicMessages} writes it (assignable to the
 * SDK's `MessageParam`). Blocks and properties a conversation read by
 * {@link fromAnthropicMessages} carried (thinking, images, documents, citations,
 * `cache_control`, server tool blocks, …) are written back as they were read; their types
 * are then the SDK's own.
 */
export type AnthropicMessage =
  | {
      /** A user message: text, and the tool results answering the previous assistant message. */
      role: 'user';
      /** A string, or blocks. */
      content: string | (AnthropicTextBlock | AnthropicToolResult)[];
    }
  | {
      /** A model message: text and tool calls. */
      role: 'assistant';
      /** A string, or blocks. */
      content: string | (AnthropicTextBlock | AnthropicToolUseBlock)[];
    }
  | {
      /** A system message after the conversation started. */
      role: 'system';
      /** A string, or text blocks. */
      content: string | AnthropicTextBlock[];
    };

/** What {@link toAnthropicMessages} returns: spread it into `messages.create({ … })`. */
export interface AnthropicConversation {
  /** The leading system messages: one as a string, several as text blocks; absent when there are none. */
  system?: string | AnthropicTextBlock[];
  /** The conversation. */
  messages: AnthropicMessage[];
}

/** A Messages API message as the SDK types it (read by {@link fromAnthropicMessages}). */
export interface AnthropicMessageLike {
  /** `'user'`, `'assistant'` or `'system'`. */
  readonly role: string;
  /** A string or an array of content blocks. */
  readonly content: unknown;
}

/** What {@link fromAnthropicMessages} reads: `{ system?, messages }` (e.g. the request params). */
export interface AnthropicConversationLike {
  /** The system prompt: a string or text blocks. */
  readonly system?: unknown;
  /** The messages. */
  readonly messages: readonly AnthropicMessageLike[];
}

const KEY = 'anthropic';
const TEXT = ['text'];
const textBlock = (text: string): Obj => ({ type: 'text', text });

/**
 * Tools for `messages.create({ tools })`: `{ name, description, input_schema }`, with the
 * root `type` set to the literal `'object'` (a root without `type`, or with a `type` list
 * that includes `'object'`, is shown as an object; polestar still validates the call against
 * the registered schema).
 *
 * @throws TypeError naming every tool whose name does not match `^[a-zA-Z0-9_-]{1,64}$`,
 *   and every tool whose root schema is not an object.
 */
export function toAnthropicTools(schemas: readonly ToolSchema[]): AnthropicTool[] {
  const where = 'toAnthropicTools(schemas)';
  const list = checkToolNames(schemas, where);
  const bad = list.filter((s) => {
    const t = s.parameters.type;
    return !(t === undefined || t === 'object' || (Array.isArray(t) && t.includes('object')));
  });
  if (bad.length > 0) {
    throw new TypeError(
      `${where}: Anthropic needs an object root schema ({ type: 'object', … }); not an object: ` +
        `${bad.map((s) => `${JSON.stringify(s.name)} (type ${JSON.stringify(s.parameters.type)})`).join(', ')}. ` +
        'Register such a tool with an object schema (e.g. wrap the value in a property) or hide it from this turn with Tools.restrict.',
    );
  }
  return list.map((s) => ({
    name: s.name,
    description: s.description,
    input_schema: { ...(thawJson(s.parameters as JsonValue) as { [key: string]: unknown }), type: 'object' },
  }));
}

/**
 * One `tool_use` block of the model as a polestar call for `Tools.execute` /
 * `executeToolCall` (`input` becomes `arguments`; what is not lossless JSON makes
 * `execute` answer `INVALID_ARGS`). Never throws.
 *
 * @param signal - aborts the call (becomes `ToolCall.signal`).
 */
export function fromAnthropicToolUse(block: AnthropicToolUseLike, signal?: AbortSignal): ToolCall {
  let out: ToolCall;
  try {
    const o: Obj = isObj(block) ? block : {};
    out = { callId: typeof o.id === 'string' ? o.id : '', name: typeof o.name === 'string' ? o.name : '', arguments: o.input };
  } catch {
    out = { callId: '', name: '', arguments: undefined };
  }
  return signal === undefined ? out : { ...out, signal };
}

/** A polestar result as the `tool_result` block answering the call (`is_error: true` only for a failed call). */
export function toAnthropicToolResult(result: ToolResult): AnthropicToolResult {
  return result.isError
    ? { type: 'tool_result', tool_use_id: result.callId, content: result.content, is_error: true }
    : { type: 'tool_result', tool_use_id: result.callId, content: result.content };
}

/**
 * A polestar conversation as `{ system?, messages }` for `messages.create`. The leading
 * system messages become `system` (one as a string, several as text blocks); a system
 * message after the conversation started stays in place as `{ role: 'system' }`. An
 * assistant's `toolCalls` become `tool_use` blocks after its text; tool messages become
 * `tool_result` blocks (`is_error` from `isError`), consecutive ones in one user message.
 * What {@link fromAnthropicMessages} kept in `meta.anthropic` (thinking blocks, images,
 * citations, block order and grouping, …) is restored, so
 * `toAnthropicMessages(fromAnthropicMessages(c))` deep-equals `c`.
 *
 * @throws TypeError for an invalid message.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): AnthropicConversation {
  if (!Array.isArray(messages)) throw new TypeError(`toAnthropicMessages(messages): messages must be an array of chat messages, got ${describeValue(messages)}.`);
  const list = (messages as readonly unknown[]).map((m, i) => snapshotChatMessage(m, `toAnthropicMessages(messages): messages[${i}]`));
  const out: AnthropicConversation = { messages: [] };
  let i = 0;
  const leading: { m: ChatMessage; r: Obj }[] = [];
  for (; i < list.length; i++) {
    const m = list[i];
    const r = residualOf(m, KEY);
    if (m.role !== 'system' || r.inline === true) break;
    leading.push({ m, r });
  }
  if (leading.length === 1 && !isObj(leading[0].r.block)) out.system = leading[0].m.content;
  else if (leading.length > 0) out.system = leading.map(({ m, r }) => withExtras(textBlock(m.content), r.block) as unknown as AnthropicTextBlock);
  const msgs = out.messages as Obj[];
  let prev: ChatMessage | undefined;
  for (; i < list.length; i++) {
    const m = list[i];
    const r = residualOf(m, KEY);
    const last = msgs.at(-1);
    switch (m.role) {
      case 'system':
        msgs.push(withExtras({ role: 'system', content: encodeContent(m.content, r, 'content', TEXT, textBlock) }, r.extra));
        break;
      case 'assistant':
        msgs.push(withExtras({ role: 'assistant', content: assistantContent(m.content, m.toolCalls, r) }, r.extra));
        break;
      case 'user': {
        const content = encodeContent(m.content, r, 'content', TEXT, textBlock);
        if (r.join === true && last?.role === 'user') last.content = [...blocksOf(last.content), ...blocksOf(content)];
        else msgs.push(withExtras({ role: 'user', content }, r.extra));
        break;
      }
      case 'tool': {
        const block = withExtras(
          {
            type: 'tool_result',
            tool_use_id: m.callId,
            content: encodeContent(m.content, r, 'content', TEXT, textBlock),
            is_error: m.isError,
          },
          r.block,
        );
        const merge = r.join === true || (prev?.role === 'tool' && r.split !== true);
        if (merge && last?.role === 'user') last.content = [...blocksOf(last.content), block];
        else msgs.push(withExtras({ role: 'user', content: [block] }, r.extra));
        break;
      }
    }
    prev = m;
  }
  return thawJson(out as unknown as JsonValue) as unknown as AnthropicConversation;
}

function blocksOf(content: unknown): unknown[] {
  if (Array.isArray(content)) return content;
  return typeof content === 'string' && content !== '' ? [textBlock(content)] : [];
}

function toolUseBlock(c: ChatToolCall, extras: unknown): Obj {
  return withExtras({ type: 'tool_use', id: c.callId, name: c.name, input: thawJson(c.arguments) }, extras);
}

function isToolPlaceholder(p: unknown): p is Obj {
  return isObj(p) && p.type === 'tool_use' && !('id' in p);
}

function assistantContent(text: string, calls: readonly ChatToolCall[] | undefined, r: Obj): unknown {
  const layout = r.content;
  if (!Array.isArray(layout)) {
    if (calls === undefined) return text;
    return [...(text === '' ? [] : [textBlock(text)]), ...calls.map((c) => toolUseBlock(c, undefined))];
  }
  const lengths = layout.filter((p) => isPlaceholder(p, TEXT)).map((p) => (p as { text: number }).text);
  const pieces = splitJoined(text, lengths);
  const toolSlots = layout.filter(isToolPlaceholder).length;
  const callList = calls ?? [];
  const pairCalls = toolSlots === callList.length;
  const out: unknown[] = [];
  let t = 0;
  let c = 0;
  let placed = false;
  for (const p of layout) {
    if (isPlaceholder(p, TEXT)) {
      if (pieces !== undefined) out.push({ ...p, text: pieces[t++] });
      else if (!placed) {
        placed = true;
        out.push({ ...p, text });
      }
    } else if (isToolPlaceholder(p)) {
      if (pairCalls) out.push(toolUseBlock(callList[c++], p));
    } else out.push(p);
  }
  if (pieces === undefined && !placed && text !== '') {
    const firstTool = out.findIndex((b) => isObj(b) && b.type === 'tool_use');
    out.splice(firstTool === -1 ? out.length : firstTool, 0, textBlock(text));
  }
  if (!pairCalls) out.push(...callList.map((call) => toolUseBlock(call, undefined)));
  return out;
}

/**
 * A Messages API conversation (`{ system?, messages }`, e.g. the request params, or just the
 * `messages` array) as a polestar conversation, for `ConversationHistory`. `system` becomes
 * leading system messages; an assistant message becomes one assistant message (its text
 * blocks joined with a newline, its `tool_use` blocks as `toolCalls`); a user message
 * becomes a tool message per `tool_result` block (`is_error` as `isError`) and a user
 * message for the blocks between them. Everything polestar does not model (thinking and
 * redacted thinking, images, documents, citations, `cache_control`, server tool blocks,
 * the order and grouping of blocks, …) is kept in `meta.anthropic` for
 * {@link toAnthropicMessages}.
 *
 * @throws TypeError naming the message for one that is not a Messages API message.
 */
export function fromAnthropicMessages(conversation: AnthropicConversationLike | readonly AnthropicMessageLike[]): ChatMessage[] {
  const where0 = 'fromAnthropicMessages(conversation)';
  if (!isObj(conversation) && !Array.isArray(conversation)) {
    throw new TypeError(`${where0}: conversation must be { system?, messages } or a messages array, got ${describeValue(conversation)}.`);
  }
  const messages: unknown = Array.isArray(conversation) ? conversation : (conversation as Obj).messages;
  const system: unknown = Array.isArray(conversation) ? undefined : (conversation as Obj).system;
  if (!Array.isArray(messages)) throw new TypeError(`${where0}: messages must be an array, got ${describeValue(messages)}.`);
  const out: ChatMessage[] = [];
  const push = (m: Obj, r: Obj, where: string): void => {
    out.push(snapshotChatMessage({ ...m, ...metaWith(KEY, r) }, where));
  };
  if (typeof system === 'string') push({ role: 'system', content: system }, {}, `${where0}.system`);
  else if (Array.isArray(system)) {
    system.forEach((b: unknown, j) => {
      const where = `${where0}.system[${j}]`;
      if (!isTextPart(b, TEXT)) throw new TypeError(`${where} must be a text block { type: 'text', text }, got ${describeValue(b)}.`);
      push({ role: 'system', content: b.text }, { block: extrasOf(b, ['type', 'text']) }, where);
    });
  } else if (system !== undefined) throw new TypeError(`${where0}.system must be a string or text blocks, got ${describeValue(system)}.`);

  (messages as unknown[]).forEach((msg, i) => {
    const where = `${where0}.messages[${i}]`;
    if (!isObj(msg)) throw new TypeError(`${where} must be a message object, got ${describeValue(msg)}.`);
    const extra = extrasOf(msg, ['role', 'content']);
    const withMsgExtras = (r: Obj): Obj => (Object.keys(extra).length > 0 ? { ...r, extra } : r);
    switch (msg.role) {
      case 'system': {
        const r: Obj = { inline: true };
        const content = decodeContent(msg.content, TEXT, r, 'content', where);
        push({ role: 'system', content }, withMsgExtras(r), where);
        break;
      }
      case 'assistant': {
        const r: Obj = {};
        const calls: ChatToolCall[] = [];
        let content: string;
        if (typeof msg.content === 'string') content = msg.content;
        else if (Array.isArray(msg.content)) {
          const texts: string[] = [];
          r.content = (msg.content as unknown[]).map((b, j) => {
            if (isTextPart(b, TEXT)) {
              texts.push(b.text);
              return { ...b, text: b.text.length };
            }
            if (isObj(b) && b.type === 'tool_use') {
              if (typeof b.id !== 'string' || b.id === '' || typeof b.name !== 'string' || b.name === '') {
                throw new TypeError(`${where}.content[${j}]: a tool_use block needs a non-empty id and name.`);
              }
              calls.push({ callId: b.id, name: b.name, arguments: b.input as JsonValue });
              return extrasOf(b, ['id', 'name', 'input']);
            }
            return b;
          });
          content = texts.join(TEXT_JOIN);
          // Keep the layout only when polestar's own rendering would not give the same blocks.
          if (calls.length > 0 && jsonEqual(msg.content, assistantContent(content, calls, {}))) delete r.content;
        } else throw new TypeError(`${where}: content must be a string or an array of blocks, got ${describeValue(msg.content)}.`);
        push(calls.length > 0 ? { role: 'assistant', content, toolCalls: calls } : { role: 'assistant', content }, withMsgExtras(r), where);
        break;
      }
      case 'user': {
        if (typeof msg.content === 'string') {
          push({ role: 'user', content: msg.content }, withMsgExtras({}), where);
          break;
        }
        if (!Array.isArray(msg.content)) throw new TypeError(`${where}: content must be a string or an array of blocks, got ${describeValue(msg.content)}.`);
        const blocks = msg.content as unknown[];
        // Segment: each tool_result block is a tool message; each run of other blocks a user message.
        const pieces: ({ kind: 'user'; blocks: unknown[] } | { kind: 'tool'; block: Obj; j: number })[] = [];
        blocks.forEach((b, j) => {
          if (isObj(b) && b.type === 'tool_result') pieces.push({ kind: 'tool', block: b, j });
          else {
            const lastPiece = pieces.at(-1);
            if (lastPiece?.kind === 'user') lastPiece.blocks.push(b);
            else pieces.push({ kind: 'user', blocks: [b] });
          }
        });
        if (pieces.length === 0) pieces.push({ kind: 'user', blocks: [] });
        pieces.forEach((p, k) => {
          const prevIsTool = out.at(-1)?.role === 'tool';
          const defaultMerge = prevIsTool && p.kind === 'tool';
          const r: Obj = {};
          if (k > 0 && !defaultMerge) r.join = true;
          if (k === 0 && defaultMerge) r.split = true;
          if (p.kind === 'user') {
            const content = decodeContent(p.blocks, TEXT, r, 'content', where);
            push({ role: 'user', content }, k === 0 ? withMsgExtras(r) : r, where);
          } else {
            const b = p.block;
            const bw = `${where}.content[${p.j}]`;
            if (typeof b.tool_use_id !== 'string' || b.tool_use_id === '') throw new TypeError(`${bw}: a tool_result block needs a non-empty tool_use_id.`);
            const content = decodeContent(b.content, TEXT, r, 'content', bw);
            const isError = typeof b.is_error === 'boolean' ? b.is_error : undefined;
            const blockExtra = extrasOf(b, ['type', 'tool_use_id', 'content', ...(isError === undefined ? [] : ['is_error'])]);
            if (Object.keys(blockExtra).length > 0) r.block = blockExtra;
            const m: Obj = { role: 'tool', callId: b.tool_use_id, content };
            if (isError !== undefined) m.isError = isError;
            push(m, k === 0 ? withMsgExtras(r) : r, bw);
          }
        });
        break;
      }
      default:
        throw new TypeError(`${where}: role ${describeValue(msg.role)} is not a Messages API role (user, assistant, system).`);
    }
  });
  return out;
}

