/**
 * @internal Putting a durable session's memory back to its last committed turn, after a
 * turn that failed or whose commit was found not applied.
 */
import type { HistoryMark } from '../../conversation/conversation-history.js';
import type { Session } from '../../conversation/session.js';
import { errorText } from '../../context/token.js';
import { SessionError } from '../errors.js';
import { deserializeLocals, insertLocals } from '../serializers.js';
import type { PersistedLocal } from '../store/contract.js';
import { noop, type DurableState } from './state.js';

/**
 * @internal Puts the history back to the last committed turn (O(messages the failed turn
 * added) when it only appended) and the persisted locals to `locals`: in place through
 * `restore` where the serializer has one, replaced otherwise. When a deserializer or a
 * `restore` throws, memory can not be brought back to the store's state: the session is
 * disposed (so nothing uncommitted can ever be committed) and this rejects with
 * `DESERIALIZE_FAILED`.
 */
export async function restoreCommitted(s: DurableState, locals: readonly PersistedLocal[]): Promise<void> {
  (s.session as Session).history._restore(s.committedMark as HistoryMark);
  const homes = s.homes();
  try {
    const restored = deserializeLocals(s.rt.serializers, locals, 'drop', s.id, homes);
    // Disposing a replaced instance that throws does not make memory disagree with the store.
    await insertLocals(restored, homes, s.id);
  } catch (err) {
    void s.dispose().catch(noop);
    throw new SessionError(
      'DESERIALIZE_FAILED',
      `session "${s.id}": putting the persisted locals back to turn ${s.committedTurn} failed (${errorText(err)}); ` +
        `the session was disposed so that nothing uncommitted is committed; fix the serializer, then resume it (sessions.resume) to continue from turn ${s.committedTurn}.`,
      { sessionId: s.id, cause: err },
    );
  }
}
