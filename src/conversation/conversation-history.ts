/**
 * The {@link ConversationHistory} a session keeps. Every message is validated and
 * snapshotted on the way in (see {@link ChatMessage}); the history's `messages` is a frozen
 * array that is never mutated: every change makes a new one (lazily, on the next read),
 * while `append` itself is amortized O(1).
 */
import { describeValue } from '../context/token.js';
import { snapshotChatMessage, snapshotChatMessages, type ChatMessage } from './chat-message.js';

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

const EMPTY: readonly ChatMessage[] = Object.freeze([]);

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
      this.#items = snapshotChatMessages(messages, 'new ConversationHistory(messages)');
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
    const added = Object.freeze(snapshotChatMessages(messages, `${where}: messages`));
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
