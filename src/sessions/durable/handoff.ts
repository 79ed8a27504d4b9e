/**
 * @internal Handoff requests: another process waiting to open this session (`open({ waitMs })`)
 * asks its holder to close it. A request carries the waiter's deadline (`Date.now()`-based)
 * and is ignored once it passed, or when the session's policy is `'never'`. A session that is
 * not pinned closes at once (as `close()`); a pinned one (from its open until its first turn
 * settles or `handoffGraceMs` passed, and while a turn is in flight or queued) remembers the
 * request and closes the moment it is unpinned, if the deadline has not passed by then.
 */
import { closeBy } from './close.js';
import type { DurableState } from './state.js';

/** @internal A handoff request with the waiter's deadline `until` (see the module's comment). */
export function requestHandoff(s: DurableState, until: number): void {
  if (s.handoff === 'never' || typeof until !== 'number' || !(until > Date.now())) return;
  if (s.closing !== undefined || s.isDisposed) return;
  // The waiter that waits longest is the one to serve.
  if (s.handoffUntil === undefined || until > s.handoffUntil) s.handoffUntil = until;
  unpinned(s);
}

/** @internal Honours the remembered request if the session is not pinned (any more); else waits for the moment it will be. */
export function unpinned(s: DurableState): void {
  const until = s.handoffUntil;
  if (until === undefined || s.closing !== undefined || s.isDisposed) return;
  if (until <= Date.now()) {
    s.handoffUntil = undefined;
    return;
  }
  if (s.state === 'loading' || s.queue.busy) return; // the open, or the turn's end, calls again
  const graceLeft = s.firstTurnSettled || s.openedAt === undefined ? 0 : s.openedAt + s.rt.handoffGraceMs - performance.now();
  if (graceLeft > 0) {
    if (s.graceTimer === undefined) {
      const timer = setTimeout(() => {
        s.graceTimer = undefined;
        unpinned(s);
      }, Math.ceil(graceLeft));
      timer.unref?.();
      s.graceTimer = timer;
    }
    return;
  }
  s.handoffUntil = undefined;
  closeBy(s, 'handoff');
}
