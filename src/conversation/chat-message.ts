/**
 * Chat messages: the {@link ChatMessage} union (system, user, assistant with tool calls,
 * tool results) and their validation. Every message a conversation takes is validated and
 * snapshotted (a detached, deep-frozen copy) on the way in.
 */
import { describeValue } from '../context/token.js';
import { errorText } from '../util/error-text.js';
import { NotLosslessJsonError, markSnapshot, snapshotJson, type JsonValue } from '../util/lossless-json.js';
import { readQuotedField } from '../util/read-field.js';

/** A system (instruction) message. */
export interface ChatSystemMessage {
  /** Always `'system'`. */
  readonly role: 'system';
  /** The instruction text. */
  readonly content: string;
  /** Anything the application or a converter keeps with the message (lossless JSON, kept verbatim). */
  readonly meta?: JsonValue;
}

/** A user message. */
export interface ChatUserMessage {
  /** Always `'user'`. */
  readonly role: 'user';
  /** What the user said. */
  readonly content: string;
  /** Anything the application or a converter keeps with the message (lossless JSON, kept verbatim). */
  readonly meta?: JsonValue;
}

/** One tool call the model made in an assistant message. */
export interface ChatToolCall {
  /** The model's id of the call (a non-empty string); the answering tool message carries it as `callId`. */
  readonly callId: string;
  /** The tool the model called (a non-empty string). */
  readonly name: string;
  /**
   * The model's arguments: lossless JSON, or a string holding the model's raw text when it
   * was not valid JSON (the converters write a string back verbatim).
   */
  readonly arguments: JsonValue;
}

/** A message of the model: its text and the tool calls it made. */
export interface ChatAssistantMessage {
  /** Always `'assistant'`. */
  readonly role: 'assistant';
  /** The model's text (`''` when it only called tools). */
  readonly content: string;
  /** The tool calls the model made, in order; absent when it made none. */
  readonly toolCalls?: readonly ChatToolCall[];
  /** Anything the application or a converter keeps with the message (lossless JSON, kept verbatim). */
  readonly meta?: JsonValue;
}

/** The result of one tool call, answering the assistant's call with the same `callId`. */
export interface ChatToolMessage {
  /** Always `'tool'`. */
  readonly role: 'tool';
  /** The `callId` of the {@link ChatToolCall} this answers (a non-empty string). */
  readonly callId: string;
  /** The result text for the model (e.g. `ToolResult.content`). */
  readonly content: string;
  /** `true` when the call failed (e.g. `ToolResult.isError`). */
  readonly isError?: boolean;
  /** Anything the application or a converter keeps with the message (lossless JSON, kept verbatim). */
  readonly meta?: JsonValue;
}

/**
 * One message of a conversation. `content` is always a string; `meta` (lossless JSON) is
 * kept verbatim and is where converters keep provider parts polestar does not model; any
 * other property is refused.
 */
export type ChatMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

const ROLES = ['system', 'user', 'assistant', 'tool'] as const;
const KEYS: Readonly<Record<ChatMessage['role'], readonly string[]>> = {
  system: ['role', 'content', 'meta'],
  user: ['role', 'content', 'meta'],
  assistant: ['role', 'content', 'toolCalls', 'meta'],
  tool: ['role', 'callId', 'content', 'isError', 'meta'],
};
const CALL_KEYS = ['callId', 'name', 'arguments'];

/** Messages this module made: validated and deep-frozen, so they can be reused as is. */
const checked = new WeakSet<object>();

/** Reads `obj[key]` once, turning a throwing getter into a TypeError naming `where` and the field. */
const read = readQuotedField;

function json(value: unknown, where: string, field: string): JsonValue {
  try {
    return snapshotJson(value, `${where}: ${field}`, field);
  } catch (err) {
    if (err instanceof NotLosslessJsonError) throw err;
    throw new TypeError(`${where}: ${field} could not be read: ${errorText(err)}`, { cause: err });
  }
}

function ownKeys(obj: object, where: string): string[] {
  let keys: (string | symbol)[];
  try {
    keys = Reflect.ownKeys(obj);
  } catch (err) {
    throw new TypeError(`${where}: its properties could not be listed: ${errorText(err)}`, { cause: err });
  }
  const sym = keys.find((k) => typeof k === 'symbol');
  if (sym !== undefined) throw new TypeError(`${where}: has a symbol key ${String(sym)}; a chat message is plain JSON.`);
  return keys as string[];
}

function nonEmpty(value: unknown, where: string, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${where}: ${field} must be a non-empty string, got ${describeValue(value)}.`);
  }
  return value;
}

function snapshotCall(call: unknown, where: string): ChatToolCall {
  if (call === null || typeof call !== 'object' || Array.isArray(call)) {
    throw new TypeError(`${where} must be an object { callId, name, arguments }, got ${describeValue(call)}.`);
  }
  if (checked.has(call)) return call as ChatToolCall;
  for (const k of ownKeys(call, where)) {
    if (!CALL_KEYS.includes(k)) {
      throw new TypeError(`${where}: unexpected property "${k}"; a tool call is exactly { callId, name, arguments }.`);
    }
  }
  const callId = nonEmpty(read(call, 'callId', where), where, 'callId');
  const name = nonEmpty(read(call, 'name', where), where, 'name');
  if (!Object.hasOwn(call, 'arguments')) {
    throw new TypeError(`${where}: arguments is missing (lossless JSON, or the model's raw text as a string).`);
  }
  const args = json(read(call, 'arguments', where), where, 'arguments');
  const out = Object.freeze({ callId, name, arguments: args });
  checked.add(out);
  return out;
}

/**
 * @internal Validates one message and returns a detached deep-frozen copy (or the message
 * itself when it already is one). `where` prefixes error messages, e.g.
 * `ConversationHistory.append(message)`.
 *
 * @throws TypeError naming the offending field.
 */
export function snapshotChatMessage(message: unknown, where: string): ChatMessage {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new TypeError(`${where} must be a chat message object { role, content, ... }, got ${describeValue(message)}.`);
  }
  if (checked.has(message)) return message as ChatMessage;
  const proto = Object.getPrototypeOf(message) as object | null;
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError(`${where} must be a plain object, got ${describeValue(message)}.`);
  }
  const role = read(message, 'role', where);
  if (!(ROLES as readonly unknown[]).includes(role)) {
    throw new TypeError(`${where}: role must be one of ${ROLES.map((r) => `'${r}'`).join(', ')}, got ${describeValue(role)}.`);
  }
  const r = role as ChatMessage['role'];
  const allowed = KEYS[r];
  const keys = ownKeys(message, where);
  if (r === 'tool' && !keys.includes('callId') && keys.includes('name')) {
    throw new TypeError(
      `${where}: a tool message needs callId, the id of the assistant's tool call it answers; ` +
        `the old { role: 'tool', content, name } shape is no longer accepted: add callId (e.g. result.callId) and drop name.`,
    );
  }
  for (const k of keys) {
    if (!allowed.includes(k)) {
      const hint = r === 'tool' && k === 'name' ? ' (a tool message is answered by callId; drop name)' : '';
      throw new TypeError(
        `${where}: unexpected property "${k}" on a ${r} message${hint}; allowed: ${allowed.join(', ')} ` +
          `(keep anything else in meta, which is kept verbatim).`,
      );
    }
  }
  // Each field is read once. Known optional fields may be present with the value
  // undefined (as when spread from optional variables); they are then left out.
  const v: Record<string, unknown> = {};
  for (const k of keys) if (k !== 'role') v[k] = read(message, k, where);
  const content = v.content;
  if (typeof content !== 'string') {
    throw new TypeError(`${where}: content must be a string, got ${describeValue(content)}.`);
  }
  const out: Record<string, unknown> = { role: r };
  if (r === 'tool') out.callId = nonEmpty(v.callId, where, 'callId');
  out.content = content;
  if (r === 'assistant' && v.toolCalls !== undefined) {
    const calls = v.toolCalls;
    if (!Array.isArray(calls)) {
      throw new TypeError(`${where}: toolCalls must be an array of { callId, name, arguments }, got ${describeValue(calls)}.`);
    }
    const copy = Array.from(calls as unknown[]);
    out.toolCalls = Object.freeze(copy.map((c, i) => snapshotCall(c, `${where}: toolCalls[${i}]`)));
  }
  if (r === 'tool' && v.isError !== undefined) {
    if (typeof v.isError !== 'boolean') throw new TypeError(`${where}: isError must be a boolean, got ${describeValue(v.isError)}.`);
    out.isError = v.isError;
  }
  if (v.meta !== undefined) out.meta = json(v.meta, where, 'meta');
  const frozen = Object.freeze(out) as unknown as ChatMessage;
  checked.add(frozen);
  // every field above is a string, a boolean or a lossless JSON snapshot: a store may take it as it is
  markSnapshot(frozen);
  return frozen;
}

/**
 * @internal Validates a list of messages (any iterable) like {@link snapshotChatMessage},
 * each named `where[i]` in errors, and returns the snapshots in a new array.
 *
 * @throws TypeError for a value that is not iterable or an invalid message.
 */
export function snapshotChatMessages(messages: unknown, where: string): ChatMessage[] {
  if (messages === null || typeof messages !== 'object' || !(Symbol.iterator in messages)) {
    throw new TypeError(`${where} must be an array of chat messages, got ${describeValue(messages)}.`);
  }
  const list = Array.from(messages as Iterable<unknown>);
  return list.map((m, i) => snapshotChatMessage(m, `${where}[${i}]`));
}
