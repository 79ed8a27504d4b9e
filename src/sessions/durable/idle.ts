/**
 * @internal A durable session closing by itself: `idleCloseMs` (no turn for that long,
 * counted from the end of the last one or from the open) and the moments a remembered
 * handoff request may be honoured (the slot given up with nothing queued). One unref'd timer
 * per session, re-armed only when it fires: a turn costs a timestamp, not a timer.
 */
import { closeBy } from './close.js';
import { unpinned } from './handoff.js';
import type { DurableState, SlotKind } from './state.js';

/** @internal The session was published: the idle clock and the handoff grace start now. */
export function opened(s: DurableState): void {
  const now = performance.now();
  s.openedAt = now;
  s.lastActive = now;
  const ms = s.rt.idleCloseMs;
  if (ms !== undefined) armIdle(s, ms);
  // A request remembered while loading: honoured once the grace is over.
  unpinned(s);
}

/**
 * @internal `sessions.open` returned the published session again: the idle clock and the
 * handoff grace restart (it is pinned again until its next turn settles or the grace has
 * passed), so a request that opened it is not closed away under it.
 */
export function reopened(s: DurableState): void {
  const now = performance.now();
  s.openedAt = now;
  s.lastActive = now;
  s.firstTurnSettled = false;
}

/** @internal The slot was given up and nothing is queued: the idle clock restarts, and a remembered handoff may be honoured. */
export function slotFreed(s: DurableState, kind: SlotKind): void {
  s.lastActive = performance.now();
  if (kind === 'turn') s.firstTurnSettled = true;
  unpinned(s);
}

function armIdle(s: DurableState, ms: number): void {
  const timer = setTimeout(() => idleFired(s), ms);
  timer.unref?.();
  s.idleTimer = timer;
}

/** The idle timer fired: close when the session was idle long enough, else re-arm for the rest. */
function idleFired(s: DurableState): void {
  s.idleTimer = undefined;
  const ms = s.rt.idleCloseMs;
  if (ms === undefined || s.state !== 'open' || s.closing !== undefined) return;
  // Never while a turn runs or waits: its end restarts the clock, checked when this fires again.
  if (s.queue.busy) return armIdle(s, ms);
  const left = s.lastActive + ms - performance.now();
  if (left > 0) return armIdle(s, Math.ceil(left));
  closeBy(s, 'idle');
}
