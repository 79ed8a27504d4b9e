/**
 * @internal The end of a durable session: `close()` drains the turn in flight (bounded by
 * the server's `disposeTimeoutMs`) and disposes; the teardown installed on the agent's
 * context announces the end (`session/disposed`) while the agent's listeners are still
 * registered, and gives the lease up (or removes the row of a create that never settled)
 * last.
 */
import type { Agent } from '../../agents/agent.js';
import { SessionError } from '../errors.js';
import { bounded, isStoreTimeout } from '../store/bounded-call.js';
import { noop, type ClosedBy, type DurableState } from './state.js';

/**
 * @internal `durableSession.close()`: no new turns, the queued ones rejected
 * (`SESSION_CLOSED`), drain the one in flight (bounded), then dispose. Memoized.
 */
export function closeSession(s: DurableState): Promise<void> {
  if (s.closing !== undefined) return s.closing;
  const agent = s.agent;
  if (s.state === 'disposed' || agent === undefined) return s.dispose();
  s.state = 'closing';
  s.closedBy ??= 'close';
  s.stopTimers();
  s.rejectQueued();
  const drain = s.busyDone;
  s.closing = (async () => {
    if (drain !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((resolve) => {
        // Ref'd: the caller waits for the drain, and it is cleared once the drain is done.
        timer = setTimeout(resolve, agent.ctx.server.options.disposeTimeoutMs);
      });
      await Promise.race([drain, bound]);
      clearTimeout(timer);
    }
    await s.dispose();
  })();
  return s.closing;
}

/** @internal Closes the session by itself (`reason`): as `close()`, its refusals naming the reason. */
export function closeBy(s: DurableState, reason: ClosedBy): void {
  if (s.closing !== undefined || s.state !== 'open') return;
  s.closedBy = reason;
  // Failures of the disposal are the agent's (its listeners, the store's release): nobody awaits this close.
  void closeSession(s).catch(noop);
}

/** @internal Installs the session's teardown on its agent's context (see the module's comment). */
export function installTeardown(s: DurableState, agent: Agent): void {
  const ctx = agent.ctx;
  // Runs last (registered first): give the lease up (or, for a create that never
  // settled, remove the row it wrote) and free the session id; then the session has ended.
  ctx.onDispose(async () => {
    try {
      await giveUp(s, ctx);
    } finally {
      s.markEnded();
    }
  });
  // Runs first, while the agent's listeners are still registered: announce the end.
  const agentPrelude = ctx._prelude;
  ctx._prelude = async () => {
    const was = s.published;
    tearDown(s);
    const errors = was ? await s.emit('session/disposed') : [];
    try {
      await agentPrelude?.();
    } catch (err) {
      errors.push(err);
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `disposing session "${s.id}" failed`);
  };
}

/** The last step of the teardown: gives the lease up (or removes the row of a create that never settled). */
async function giveUp(s: DurableState, ctx: Agent['ctx']): Promise<void> {
  tearDown(s);
  const remove = s.mode === 'create' && !s.settled;
  // A create whose reply was lost wrote its row under the first lease it would have
  // returned (this owner and incarnation, epoch 1): remove it with that lease, so a
  // retry is not refused by a row leased to this very process.
  const lease = s.lease ?? (remove && s.createSent ? { sessionId: s.id, owner: s.rt.owner, epoch: 1, incarnation: s.rt.incarnation } : undefined);
  if (lease === undefined) return;
  const { store } = s.rt;
  const call = remove ? 'delete' : 'release';
  const ms = ctx.server.options.disposeTimeoutMs;
  // Bounded by storeTimeoutMs (the store's own bound) and by the server's
  // disposeTimeoutMs: a store that never answers does not keep the disposal waiting.
  const work = remove ? store.delete(s.id, { lease }) : store.release(lease);
  try {
    await bounded(work, ms, () => disposeTimeout(s, call, ms));
  } catch (err) {
    // A refusal is nothing to report (the lease is gone either way); a call that did
    // not answer is: the lease may still be held until it expires.
    if (isStoreTimeout(err)) throw err;
  }
}

/** Marks the session torn down: disposed, no more renewals, its id free (idempotent: the prelude and the last cleanup both run it). */
function tearDown(s: DurableState): void {
  s.state = 'disposed';
  s.tornDown = true;
  s.keeper?.stop();
  s.stopTimers();
  s.rejectQueued();
  s.rt.registry.leave(s.handle);
}

/** The rejection of a disposal whose `store.release()` (or `delete`) did not answer within `disposeTimeoutMs`. */
function disposeTimeout(s: DurableState, call: string, ms: number): SessionError {
  return new SessionError(
    'STORE_ERROR',
    `disposing session "${s.id}": store.${call}() did not answer within ${ms} ms (new Server({ disposeTimeoutMs })); the disposal went on without it, ` +
      `so the lease may stay held until it expires (leaseTtlMs). Check the store, or raise disposeTimeoutMs.`,
    { sessionId: s.id },
  );
}
