/**
 * @internal Reading a durable session back from its stored events: the history its
 * committed changes make, and a stored event as the public API shows it.
 */
import type { ChatMessage } from '../../conversation/chat-message.js';
import { ConversationHistory } from '../../conversation/conversation-history.js';
import { describeValue, errorText } from '../../context/token.js';
import { SessionError } from '../errors.js';
import type { SessionEventRecord } from '../runtime.js';
import type { StoredSessionEvent } from '../store/contract.js';

/** @internal A stored event as the public API shows it (frozen). */
export function eventRecord(e: StoredSessionEvent, status = e.status): SessionEventRecord {
  return Object.freeze({ seq: e.seq, turn: e.turn, kind: e.kind, body: e.body, status });
}

/** @internal Replays committed history changes into the history they make; a malformed one is `CORRUPT_ROW`. */
export function replayHistory(events: readonly StoredSessionEvent[], sessionId: string): ConversationHistory {
  const messages: ChatMessage[] = [];
  for (const e of events) {
    const bad = (why: string): SessionError =>
      new SessionError('CORRUPT_ROW', `corrupt row: event ${e.seq} (${e.kind}) of session "${sessionId}" can not be replayed: ${why}.`, { sessionId });
    if (e.kind === 'history/append') {
      messages.push(e.body as unknown as ChatMessage);
    } else if (e.kind === 'history/replace') {
      const b = e.body as { start?: unknown; end?: unknown; messages?: unknown } | null;
      if (b === null || typeof b !== 'object' || !Array.isArray(b.messages)) throw bad('the body is not { start, end, messages }');
      const { start, end } = b;
      if (typeof start !== 'number' || typeof end !== 'number' || !Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end > messages.length) {
        throw bad(`start ${describeValue(start)} and end ${describeValue(end)} do not fit a history of ${messages.length} messages`);
      }
      // splice without spreading into a call: a compaction may hold any number of messages.
      const tail = messages.slice(end);
      messages.length = start;
      for (const m of b.messages as ChatMessage[]) messages.push(m);
      for (const m of tail) messages.push(m);
    } else {
      throw bad('it is not a history change');
    }
  }
  try {
    return new ConversationHistory(messages);
  } catch (err) {
    throw new SessionError('CORRUPT_ROW', `corrupt row: the history of session "${sessionId}" holds an invalid message: ${errorText(err)}.`, { sessionId, cause: err });
  }
}
