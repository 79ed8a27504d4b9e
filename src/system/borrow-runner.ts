/**
 * The borrow runner: "take the borrows, call, release them when the call settles", shared
 * by `ctx.run` (`run.ts`), `ctx.withMut` / `ctx.withRes` (`with-borrow.ts`) and tool
 * systems (`tools/tool-system.ts`).
 *
 * - {@link takeNow} / {@link waitFor}: the `'wait'` rule's acquisition, all borrows at
 *   once (a `'fail'` run fetches with the system's own fetchers instead);
 * - {@link holdUntilSettled}: a body returned a thenable, so its borrows stay held (by a
 *   {@link Hold} in its context's group) until it settles;
 * - {@link passResult}: the same for work whose result and failure pass through unchanged;
 * - {@link paramFailure}: the one message a parameter that could not be fetched reads
 *   with, `system "x" → parameter #1 ResMut(Notes): …`.
 *
 * Each caller keeps its own call of the body (a system's unrolled arguments, a
 * callback's one value, a tool system's arguments and execution), so no run pays for
 * another's shape: nothing here adds an allocation, a closure or a promise to a run that
 * does not need it.
 */
import { types } from 'node:util';
import type { SystemContext } from '../context/system-context.js';
import { describeValue, nameOf } from '../context/token.js';
import { fillArgs, resolveAll, waitAll, type ParamFailure } from './acquire.js';
import { Hold, release, tryTake, type BorrowRequest, type Held } from './borrows.js';
import type { Param } from './params.js';
import { SystemError } from './system-error.js';
import { errorText } from '../util/error-text.js';
import { isThenable } from '../util/is-thenable.js';

/** @internal `Res(T)` / `ResMut(T)` / `Out(T)`, as a parameter reads in messages. */
export function describeParam(p: Param): string {
  return `${p.access === 'read' ? 'Res' : p.access === 'write' ? 'ResMut' : 'Out'}(${nameOf(p.token)})`;
}

/**
 * @internal The `SystemError` (`kind: 'ParamError'`) of parameter `index` of a run that
 * could not be fetched: `parameter error: <label> → parameter #<index> ResMut(Notes): <why>`.
 * `label` is how the run reads in messages (`system "x"`, `tool "refund" (call c1)`),
 * `systemName` what the error's `systemName` says.
 */
export function paramFailure(systemName: string, label: string, params: readonly Param[], index: number, err: unknown): SystemError {
  return new SystemError('ParamError', systemName, err, `parameter #${index} ${describeParam(params[index])}: ${thrownText(err)}`, label);
}

/**
 * @internal What a run's failure says about what was thrown: an error's message, or
 * `threw a non-Error value: <the value described>`. Never throws (an error whose
 * `message` getter throws reads as one that refuses inspection).
 */
export function thrownText(err: unknown): string {
  return err instanceof Error || types.isNativeError(err) ? errorText(err) : `threw a non-Error value: ${describeValue(err)}`;
}

/**
 * @internal The first step of a run under the `'wait'` rule: resolves every parameter
 * into `values` (the first missing one throws `fail(index, err)`), then takes every
 * borrow into `held` when all can be granted now. Returns `undefined` when they were
 * (and `values` is filled), else the requests to {@link waitFor}.
 */
export function takeNow(ctx: SystemContext, params: readonly Param[], values: unknown[], held: Held, fail: ParamFailure): BorrowRequest[] | undefined {
  const reqs = resolveAll(ctx, params, values, fail);
  if (!tryTake(reqs, held)) return reqs;
  fillArgs(ctx, params, reqs, values);
  return undefined;
}

/**
 * @internal Waits for the borrows {@link takeNow} could not take, held meanwhile by a
 * {@link Hold} labelled `label` in `ctx`'s group (the context's disposal stops the wait),
 * then calls `next(hold)` with `values` filled. Rejects with `fail(index, err)` after
 * `timeoutMs` or when re-resolving a parameter fails, with `ContextDisposedError` when the
 * context's disposal starts, and with `signal.reason` when `signal` aborts first (the
 * body of an aborted call never starts later). A rejection ends the hold.
 */
export function waitFor(
  ctx: SystemContext,
  params: readonly Param[],
  reqs: BorrowRequest[],
  values: unknown[],
  held: Held,
  writes: readonly boolean[],
  label: string,
  timeoutMs: number,
  fail: ParamFailure,
  signal: AbortSignal | undefined,
  next: (hold: Hold) => unknown,
): Promise<unknown> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const hold = new Hold(label, ctx, held, writes);
  const onAbort = signal === undefined ? undefined : (): void => hold.waiter?.fail(signal.reason);
  if (onAbort !== undefined) signal?.addEventListener('abort', onAbort, { once: true });
  const p = waitAll(ctx, params, reqs, values, hold, timeoutMs, fail).then(
    () => {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      return next(hold);
    },
    (err: unknown) => {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      hold.end();
      throw err;
    },
  );
  hold.track();
  return p;
}

/** @internal What a run does with its body's settled value: stores it, passes it on, … */
export type OnValue<S, K> = (ctx: SystemContext, subject: S, value: unknown, sink: K) => unknown;

/** @internal Turns a body's rejection into the error the run rejects with. */
export type OnError<S> = (ctx: SystemContext, subject: S, err: unknown) => unknown;

/**
 * @internal A body returned the thenable `r`: its borrows (`held`) stay taken until it
 * settles, by `hold` (a waiting run's own, already tracked) or by a new {@link Hold}
 * labelled `label`, which joins `ctx`'s group (the context's disposal awaits it and gives
 * its borrows up if it never settles) and the holder list (conflict messages name it).
 * Resolves to `onValue(ctx, subject, v, sink)`, rejects with `onError(ctx, subject, err)`.
 */
export function holdUntilSettled<S, K>(
  ctx: SystemContext,
  r: unknown,
  held: Held,
  writes: readonly boolean[],
  label: string,
  hold: Hold | undefined,
  subject: S,
  sink: K,
  onValue: OnValue<S, K>,
  onError: OnError<S>,
): Promise<unknown> {
  const h = hold ?? new Hold(label, ctx, held, writes);
  const p = Promise.resolve(r).then(
    (v) => {
      h.end();
      return onValue(ctx, subject, v, sink);
    },
    (err: unknown) => {
      h.end();
      throw onError(ctx, subject, err);
    },
  );
  if (hold === undefined) {
    h.link();
    h.track();
  }
  return p;
}

const passValue: OnValue<unknown, unknown> = (_ctx, _subject, v) => v;
const passError: OnError<unknown> = (_ctx, _subject, err) => err;

/**
 * @internal The result `r` of work whose outcome passes through unchanged (a `withMut` /
 * `withRes` callback, a tool system's body), its borrows `held` taken (by `hold` when it
 * waited): a non-thenable releases them now and resolves to `r`; a thenable keeps them
 * until it settles and resolves or rejects as it does.
 */
export function passResult(ctx: SystemContext, r: unknown, held: Held, writes: readonly boolean[], label: string, hold: Hold | undefined): Promise<unknown> {
  if (!isThenable(r)) {
    if (hold === undefined) release(held, writes);
    else hold.end();
    return Promise.resolve(r);
  }
  return holdUntilSettled(ctx, r, held, writes, label, hold, undefined, undefined, passValue, passError);
}

/** @internal Gives back the borrows of work that threw before it returned (taken by `hold` when it waited). */
export function releaseAll(held: Held, writes: readonly boolean[], hold: Hold | undefined): void {
  if (hold === undefined) release(held, writes);
  else hold.end();
}
