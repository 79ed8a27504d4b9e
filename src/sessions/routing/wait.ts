/**
 * @internal The wait of `sessions.open` / `sessions.resume` with `waitMs`: while another
 * owner holds the session's lease, ask it to hand the session off (when the handoff policy
 * is `'idle'`), sleep until a release is heard (or the holder's lease expires, or the next
 * poll), and try again, until `waitMs` has passed; then `SESSION_BUSY` naming the holder
 * and the time left. A session of this very process that is being opened or closed is
 * waited for the same way, and one whose disposal is still releasing its lease is always
 * waited for (bounded), so no request is refused by its own process.
 */
import { SessionError, isSessionError } from '../errors.js';
import type { LiveRuntime } from '../runtime.js';
import { routerOf } from './router.js';

/** What a wait needs to know of the open it retries. */
export interface WaitPlan {
  /** `Sessions.open` or `Sessions.resume` (for messages). */
  readonly call: string;
  readonly sessionId: string;
  /** How long to wait for another holder, in ms (0: refuse at once). */
  readonly waitMs: number;
  /** Whether to ask the holder to release (`'idle'`), or only wait (`'never'`). */
  readonly handoff: 'idle' | 'never';
  /** The caller runs inside a durable turn (a wait may then be part of a cycle). */
  readonly inTurn: boolean;
  /** How long a disposal of this process may take (its `disposeTimeoutMs`). */
  readonly disposeTimeoutMs: number;
}

/** How often a wait for a session of this very process looks again (it is woken by nothing else). */
const LOCAL_RETRY_MS = 10;

const localBusy = new WeakSet<object>();

/** @internal Marks a `SESSION_BUSY` about a session being opened or closed in this process (waited for with `waitMs`). */
export function localBusyError(err: SessionError): SessionError {
  localBusy.add(err);
  return err;
}

/** @internal Runs `attempt` until it opens the session, waiting for its holder as the module's comment says. */
export async function withWait<T>(rt: LiveRuntime, plan: WaitPlan, attempt: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const deadline = started + plan.waitMs;
  /** The lease (owner and epoch) last asked to hand off: asked once per holder. */
  let asked: string | undefined;
  const router = routerOf(rt);
  for (;;) {
    // A session of this process still giving the lease up: wait for it (always, bounded), so
    // its own process does not refuse the request.
    const ending = router.ending(plan.sessionId);
    if (ending !== undefined) {
      const bound = Math.max(deadline, started + plan.disposeTimeoutMs) - performance.now();
      if (bound > 0) {
        // Cleared once the session has ended: a ref'd timer left behind would keep a finished program alive.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const bounded = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.max(1, Math.ceil(bound)));
        });
        await Promise.race([ending._whenEnded(), bounded]);
        clearTimeout(timer);
      }
    }
    let err: unknown;
    try {
      return await attempt();
    } catch (e) {
      err = e;
    }
    if (!isSessionError(err, 'SESSION_BUSY')) throw err;
    const now = performance.now();
    const holder = err.holder;
    const ours = holder !== undefined && holder.owner === rt.owner;
    if (localBusy.has(err)) {
      // Being opened or closed in this process: wait for it only with waitMs.
      if (now >= deadline) throw waited(plan, err, now - started);
      await sleep(Math.min(LOCAL_RETRY_MS, deadline - now));
      continue;
    }
    if (ours) {
      // The store still records a lease of this owner that no live session here holds: a
      // session of this process is releasing it (its disposal runs). Wait for that, bounded.
      const until = Math.max(deadline, started + plan.disposeTimeoutMs);
      if (now >= until) throw waited(plan, err, now - started);
      await sleep(Math.min(LOCAL_RETRY_MS, until - now));
      continue;
    }
    if (now >= deadline) throw waited(plan, err, now - started);
    const lease = holder === undefined ? undefined : `${holder.owner}\u0000${holder.epoch}`;
    if (plan.handoff === 'idle' && lease !== undefined && lease !== asked) {
      asked = lease;
      await router.askHandoff(plan.sessionId, Date.now() + (deadline - performance.now()));
    }
    const left = deadline - performance.now();
    if (left <= 0) continue;
    // Until a release is heard, the lease expires (plus a little: the store's clock decides), or the next try.
    const expiry = holder === undefined ? Infinity : holder.remainingMs + 5;
    await router.sleep(plan.sessionId, Math.min(left, expiry, router.retryMs));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(ms))));
}

/** The `SESSION_BUSY` of a wait that ran out (or of no wait at all). */
function waited(plan: WaitPlan, busy: SessionError, ms: number): SessionError {
  const holder = busy.holder;
  if (plan.waitMs === 0) {
    if (holder === undefined) return busy;
    const ask = plan.handoff === 'idle' ? ' (the holder is then asked to hand it off, and does once it has no turn in flight)' : '';
    return new SessionError(
      'SESSION_BUSY',
      `${plan.call}({ sessionId: "${plan.sessionId}" }): session busy: owner "${holder.owner}" (epoch ${holder.epoch}) holds it, with ${Math.max(0, Math.round(holder.remainingMs))} ms left on its lease. Pass waitMs to wait for it${ask}.`,
      { sessionId: plan.sessionId, holder, cause: busy },
    );
  }
  const who =
    holder === undefined
      ? 'it stayed busy'
      : `owner "${holder.owner}" (epoch ${holder.epoch}) still holds it, with ${Math.max(0, Math.round(holder.remainingMs))} ms left on its lease`;
  const hint =
    plan.handoff === 'idle'
      ? 'The holder was asked to hand it off: it keeps a session while a turn runs or is queued, for handoffGraceMs after its open, or always with handoff: "never".'
      : 'No handoff was asked (handoff: "never"): it is released when its holder closes it or its lease expires.';
  const cycle = plan.inTurn
    ? ' This wait runs inside a durable turn, which holds its own session meanwhile: a possible wait cycle (two turns each waiting for the other\'s session); do not open other durable sessions from inside a turn, or keep waitMs short.'
    : '';
  return new SessionError(
    'SESSION_BUSY',
    `${plan.call}({ sessionId: "${plan.sessionId}", waitMs: ${plan.waitMs} }): session busy after waiting ${Math.round(ms)} ms: ${who}. ${hint}${cycle} (${busy.message})`,
    { sessionId: plan.sessionId, ...(holder !== undefined ? { holder } : {}), cause: busy },
  );
}
