/**
 * @internal `sessions.cancel(sessionId, reason)`: aborts the turn in flight of a session
 * wherever it runs. Live in this process, the turn is aborted at once; otherwise the cancel
 * is recorded in the store for the session's open attempt, and its holder (woken by a
 * notification, or polling) aborts that attempt's turn. Never waits for the turn to settle.
 */
import type { LiveRuntime } from '../runtime.js';
import type { RoutedSession } from './router.js';

/** @internal True once the abort was delivered here or recorded for the open attempt; false when none was open. */
export async function cancelSession(rt: LiveRuntime, sessionId: string, reason: string): Promise<boolean> {
  const live = rt.registry.get(sessionId) as RoutedSession | undefined;
  if (live !== undefined && !live.isDisposed) return live._cancel(reason);
  const store = rt.store;
  if (!store.routes) {
    throw new TypeError(
      `Sessions.cancel("${sessionId}"): the session is not live in this process, and this store can not carry a cancel to another process (it has no requestCancel()). ` +
        'Use MemorySessionStore, SqliteSessionStore or PostgresSessionStore, or cancel through the process that runs the turn.',
    );
  }
  return (await store.requestCancel(sessionId, reason)) !== undefined;
}
