/**
 * Conversations with tool calls: the {@link ChatMessage} union and the
 * {@link ConversationHistory} a session keeps. Every message is validated and snapshotted
 * (a detached, deep-frozen copy) on the way in; the history's `messages` is a frozen array
 * that is never mutated: every change makes a new one (lazily, on the next read), while
 * `append` itself is amortized O(1).
 */
import { describeValue } from '../context/token.js';
import { NotLosslessJsonError, snapshotJson, type JsonValue } from '../tools/lossless-json.js';

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

/**
 * @internal A change of a {@link ConversationHistory}, as its observer sees it.
 * `messages` are the validated, frozen messages that were added.
 */
export type HistoryChange =
  | { readonly kind: 'append'; readonly message: ChatMessage }
  | { readonly kind: 'replace'; readonly start: number; readonly end: number; readonly messages: readonly ChatMessage[] };

/**
 * @internal The hook a durable history uses. `check()` runs after the change
 * was validated and before it is applied: it may throw (a durable history changes only
 * inside `turn()`), and the history is then unchanged. `changed(c)` runs after the change
 * was applied.
 */
export interface HistoryObserver {
  check(): void;
  changed(change: HistoryChange): void;
}

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

const EMPTY: readonly ChatMessage[] = Object.freeze([]);

/** Reads `obj[key]` once, turning a throwing getter into a TypeError. */
function read(obj: object, key: string, where: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    throw new TypeError(`${where}: reading "${key}" threw: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function json(value: unknown, where: string, field: string): JsonValue {
  try {
    return snapshotJson(value, `${where}: ${field}`, field);
  } catch (err) {
    if (err instanceof NotLosslessJsonError) throw err;
    throw new TypeError(`${where}: ${field} could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function ownKeys(obj: object, where: string): string[] {
  let keys: (string | symbol)[];
  try {
    keys = Reflect.ownKeys(obj);
  } catch (err) {
    throw new TypeError(`${where}: its properties could not be listed: ${err instanceof Error ? err.message : String(err)}`);
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
  return frozen;
}

function snapshotList(messages: unknown, where: string): ChatMessage[] {
  if (messages === null || typeof messages !== 'object' || !(Symbol.iterator in messages)) {
    throw new TypeError(`${where} must be an array of chat messages, got ${describeValue(messages)}.`);
  }
  const list = Array.from(messages as Iterable<unknown>);
  return list.map((m, i) => snapshotChatMessage(m, `${where}[${i}]`));
}

/**
 * @internal A point of a {@link ConversationHistory} that `_restore` can go back to (taken
 * by `_mark()`, O(1)). Opaque: the backing array it names is never changed below `length`
 * while the mark can still be restored.
 */
export interface HistoryMark {
  /** The history it was taken of. */
  readonly history: ConversationHistory;
  /** The backing array of the history when the mark was taken. */
  readonly items: readonly ChatMessage[];
  /** The number of messages then. */
  readonly length: number;
}

/**
 * The messages of one session (a local of the session context). The history changes only
 * through {@link ConversationHistory.append} and {@link ConversationHistory.replace}; both
 * validate first and refuse an invalid message with a `TypeError`, leaving the history
 * unchanged. Every change makes `messages` a new frozen array, so an array read earlier
 * is a stable snapshot.
 *
 * What each operation costs, for a history of n messages:
 *
 * - `append` is amortized O(1) (plus validating the message): the history keeps its
 *   messages in a private growable array and never copies it to append, so a conversation
 *   of n messages costs O(n) to build, not O(n²);
 * - `length` is O(1);
 * - `messages` is O(1) when the history did not change since the last read (the same
 *   frozen array is returned), and O(n) on the first read after a change, which makes and
 *   keeps a frozen copy. A loop that appends and reads only now and then stays linear;
 *   one that reads after every append pays one copy per read;
 * - `replace(start, end, messages)` is O(n − start + messages.length), or O(n) when it
 *   has to copy (after a durable session marked a point at or after `start`).
 *
 * @example
 * ```ts
 * const history = new ConversationHistory();
 * history.append({ role: 'user', content: 'weather in Paris?' });
 * history.append({ role: 'assistant', content: '', toolCalls: [{ callId: 'c1', name: 'weather', arguments: { city: 'Paris' } }] });
 * history.append({ role: 'tool', callId: 'c1', content: 'sunny' });
 * history.replace(0, 3, [{ role: 'system', content: 'Summary: it is sunny in Paris.' }]); // compaction
 * ```
 */
export class ConversationHistory {
  /**
   * The messages. Private and mutable, never handed out: appends push onto it. Entries
   * below `#marked` are never changed in place (a {@link HistoryMark} may name them); a
   * change below it first copies the array.
   */
  #items: ChatMessage[];
  /** The highest `length` of a mark taken of `#items` (0 when none). */
  #marked = 0;
  /** The frozen copy `messages` returned since the last change, if any. */
  #snapshot: readonly ChatMessage[] | undefined;

  /** @internal The durable-history hook; see {@link HistoryObserver}. */
  _observer?: HistoryObserver;

  /**
   * @param messages - the messages to start from (e.g. a restored conversation), each
   *   validated and snapshotted like an appended one; empty by default.
   * @throws TypeError for an invalid message.
   */
  constructor(messages?: Iterable<ChatMessage>) {
    if (messages === undefined) {
      this.#items = [];
      this.#snapshot = EMPTY;
    } else {
      this.#items = snapshotList(messages, 'new ConversationHistory(messages)');
    }
  }

  /**
   * The messages, oldest first: a frozen array of frozen messages. Every change makes it a
   * new array; an array read earlier never changes, so it may be kept as a snapshot.
   * Reading twice without a change in between returns the same array.
   *
   * Cost: O(1) when nothing changed since the last read; O(n) on the first read after a
   * change (it copies the n messages into a new frozen array, then keeps it).
   */
  get messages(): readonly ChatMessage[] {
    let s = this.#snapshot;
    if (s === undefined) {
      // Array.from, not slice: copying from the private (unfrozen) array is the fast path.
      s = Object.freeze(Array.from(this.#items));
      this.#snapshot = s;
    }
    return s;
  }

  /** Number of messages (O(1)). */
  get length(): number {
    return this.#items.length;
  }

  /**
   * Appends a message (validated and snapshotted: later changes to the caller's object
   * change nothing) and returns the number of messages. Amortized O(1): it never copies the
   * history (an array read from `messages` earlier stays as it was).
   *
   * @throws TypeError for an invalid message (naming the field), leaving the history unchanged.
   */
  append(message: ChatMessage): number {
    const m = snapshotChatMessage(message, 'ConversationHistory.append(message)');
    this._observer?.check();
    const n = this.#items.push(m);
    this.#snapshot = undefined;
    this._observer?.changed({ kind: 'append', message: m });
    return n;
  }

  /**
   * Replaces the messages from index `start` up to, not including, `end` with `messages`
   * (like `splice(start, end - start, ...messages)`; e.g. compaction replaces a prefix
   * with a summary) and returns the removed messages (a frozen array). Indices are
   * integers with `0 <= start <= end <= length`: they are never clamped nor counted from
   * the end. Costs O(length − start + messages.length), at most O(length + messages.length).
   *
   * @throws TypeError for an invalid message or a non-integer index, RangeError for an
   *   index out of range; the history is then unchanged.
   */
  replace(start: number, end: number, messages: readonly ChatMessage[]): readonly ChatMessage[] {
    const where = 'ConversationHistory.replace(start, end, messages)';
    for (const [name, v] of [['start', start], ['end', end]] as const) {
      if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${where}: ${name} must be an integer index, got ${describeValue(v)}.`);
    }
    const len = this.#items.length;
    if (start < 0 || end < start || end > len) {
      throw new RangeError(`${where}: needs 0 <= start <= end <= length (${len}), got start ${start} and end ${end}.`);
    }
    const added = Object.freeze(snapshotList(messages, `${where}: messages`));
    this._observer?.check();
    const items = this.#items;
    let removed: ChatMessage[];
    if (start >= this.#marked) {
      // Nothing a mark names is touched: change the array in place (no spread into a
      // call, so any number of messages fits).
      removed = items.slice(start, end);
      const tail = end === items.length ? [] : items.slice(end);
      items.length = start;
      for (const m of added) items.push(m);
      for (const m of tail) items.push(m);
    } else {
      removed = items.slice(start, end);
      this.#items = [...items.slice(0, start), ...added, ...items.slice(end)];
      this.#marked = 0;
    }
    this.#snapshot = undefined;
    this._observer?.changed({ kind: 'replace', start, end, messages: added });
    return Object.freeze(removed);
  }

  /**
   * @internal Marks the current messages so that `_restore` can go back to them: O(1)
   * (no copy). Later appends keep the mark valid at no cost; a replace that reaches below
   * the mark copies the array once.
   */
  _mark(): HistoryMark {
    const length = this.#items.length;
    if (length > this.#marked) this.#marked = length;
    return Object.freeze({ history: this, items: this.#items, length });
  }

  /**
   * @internal Puts the messages back to `mark` (taken of this history by `_mark()`)
   * without telling the observer (a durable session undoing a failed turn). O(messages
   * removed) when only appends happened since the mark; O(mark.length) otherwise.
   */
  _restore(mark: HistoryMark): void {
    if (mark.history !== this) throw new TypeError('ConversationHistory._restore(mark): the mark was taken of another history.');
    const items = this.#items;
    if (mark.items === items && mark.length <= items.length && mark.length >= this.#marked) {
      // Only appends since the mark, and no later mark to keep: drop them in place.
      items.length = mark.length;
    } else {
      this.#items = mark.items.slice(0, mark.length);
      this.#marked = 0;
    }
    this.#snapshot = undefined;
  }
}
