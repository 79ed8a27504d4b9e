/**
 * @internal Aborting one durable turn: by its `signal` (`turn(fn, { signal })`) or by a
 * cancel (`sessions.cancel`, in this process or relayed from another). Queued, the turn
 * leaves the queue; running, its turn context's disposal starts (`turnCtx.signal` aborts
 * with a `ContextDisposedError` whose `cause` is the abort reason; tool executions in it
 * are aborted and awaited), its attempt is aborted and not committed, and `turn()` rejects
 * with the reason. Once `fn` has returned, an abort changes nothing.
 */
import type { SystemContext } from '../../context/system-context.js';
import { describeValue } from '../../context/token.js';
import { abortTurnContext } from '../../conversation/session.js';
import type { BegunAttempt } from '../store/contract.js';

/** @internal Where the turn is: waiting for the slot, holding it, or settled. */
export type TurnPhase = 'queued' | 'running' | 'done';

/** @internal The abort state of one durable turn (one per `turn()` call that can be aborted). */
export class TurnAbort {
  /** The caller's signal, if any (one listener, removed when the turn settles). */
  readonly signal: AbortSignal | undefined;
  phase: TurnPhase = 'queued';
  /** What `turn()` rejects with once aborted before `fn` returned; `undefined` while not aborted. */
  error: unknown = undefined;
  /** True once aborted (before `fn` returned). */
  aborted = false;
  /** True once `fn` returned or threw: from then on an abort changes nothing. */
  fnDone = false;
  /** The turn context while `fn` runs. */
  ctx: SystemContext | undefined = undefined;
  /** The begun attempt, once `begin` resolved. */
  attempt: BegunAttempt | undefined = undefined;
  /**
   * A cancel from another process that named an attempt before `begin` answered here (the
   * store had opened it, its reply was still on its way): applied once `begin` resolves, if
   * it opened that very attempt.
   */
  early: { readonly turn: number; readonly attempt: number; readonly error: unknown } | undefined = undefined;
  /** While queued: takes the turn out of the queue and rejects it with the reason (set by the queue's caller). */
  leaveQueue: ((reason: unknown) => void) | undefined = undefined;
  readonly #listener: (() => void) | undefined;

  /** @param signal - a checked `AbortSignal` (not aborted yet), or `undefined`. */
  constructor(signal: AbortSignal | undefined) {
    this.signal = signal;
    if (signal !== undefined) {
      this.#listener = () => this.abort(signal.reason);
      signal.addEventListener('abort', this.#listener, { once: true });
    }
  }

  /**
   * Aborts the turn with `error` (what `turn()` rejects with). Queued: it leaves the queue.
   * Running: its turn context is disposed unless `fn` had returned. True when the abort
   * reached a turn still queued or running (even one whose `fn` had returned, which then
   * commits); false once the turn settled.
   */
  abort(error: unknown): boolean {
    if (this.phase === 'done') return false;
    if (this.phase === 'queued') {
      const leave = this.leaveQueue;
      this.leaveQueue = undefined;
      this.aborted = true;
      this.error = error;
      leave?.(error);
      return true;
    }
    if (this.fnDone || this.aborted) return true;
    this.aborted = true;
    this.error = error;
    const ctx = this.ctx;
    if (ctx !== undefined) abortTurnContext(ctx, error);
    return true;
  }

  /** `begin` opened `a`: a cancel that named it before its reply came aborts the turn now. */
  begun(a: BegunAttempt): void {
    this.attempt = a;
    const e = this.early;
    this.early = undefined;
    if (e !== undefined && e.turn === a.turn && e.attempt === a.attempt) this.abort(e.error);
  }

  /** True once aborted before `fn` returned (a method, so that a check after an await reads it again). */
  wasAborted(): boolean {
    return this.aborted;
  }

  /** The turn settled: the signal's listener is removed (a long-lived signal keeps none). */
  done(): void {
    this.phase = 'done';
    this.leaveQueue = undefined;
    this.early = undefined;
    this.ctx = undefined;
    if (this.#listener !== undefined) this.signal?.removeEventListener('abort', this.#listener);
  }
}

/** @internal `value` when it is an `AbortSignal` (or `undefined`); a `TypeError` naming `where` otherwise. */
export function checkSignal(value: unknown, where: string): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw new TypeError(`${where} must be an AbortSignal (e.g. controller.signal, or AbortSignal.timeout(ms)), got ${describeValue(value)}.`);
}
