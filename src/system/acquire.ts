/**
 * Waiting acquisition: resolve every parameter first, then take every borrow
 * at once, waiting (FIFO per entry, up to a timeout) when they can not all be granted.
 * The waiting half of the borrow runner (`borrow-runner.ts`).
 */
import { ContextDisposedError } from '../context/errors.js';
import type { SystemContext } from '../context/system-context.js';
import { tryTake, Waiter, type BorrowRequest, type Hold } from './borrows.js';
import { resolveParam, stillResolves, valueOf } from './fetch.js';
import type { Param } from './params.js';

/** @internal Turns the failure of parameter `index` into the error to throw. */
export type ParamFailure = (index: number, err: unknown) => unknown;

/**
 * @internal Resolves every parameter of `params` on `ctx` in declaration order: a value
 * that needs no borrow goes straight into `args`, every entry to borrow becomes a
 * request. The first missing parameter throws `fail(index, err)`.
 */
export function resolveAll(ctx: SystemContext, params: readonly Param[], args: unknown[], fail: ParamFailure): BorrowRequest[] {
  const reqs: BorrowRequest[] = [];
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    let r: ReturnType<typeof resolveParam>;
    try {
      r = resolveParam(p, ctx);
    } catch (err) {
      throw fail(i, err);
    }
    if (r.entry === undefined) args[i] = r.value;
    else reqs.push({ entry: r.entry, write: p.access === 'write', token: p.token, index: i });
  }
  return reqs;
}

/** @internal Fills `args` with the values of the borrowed entries. */
export function fillArgs(ctx: SystemContext, params: readonly Param[], reqs: readonly BorrowRequest[], args: unknown[]): void {
  for (const r of reqs) args[r.index] = valueOf(params[r.index], ctx, r.entry);
}

/**
 * @internal Waits until every borrow of `reqs` is granted into `hold.held` and fills
 * `args`. `hold` must be tracked on `ctx` by the caller right after this returns (its
 * `abort` stops the wait). Rejects with `fail(index, err)` after `timeoutMs` (`err` the
 * `BorrowConflict` of the borrow still held) or when re-resolving a parameter fails (what
 * a parameter resolves to may change while it waits: an insert, a remove, a shadowing
 * local; then it resolves again and waits again, within the same deadline), and with
 * `ContextDisposedError` when the context's disposal starts.
 */
export async function waitAll(ctx: SystemContext, params: readonly Param[], reqs: BorrowRequest[], args: unknown[], hold: Hold, timeoutMs: number, fail: ParamFailure): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let left = timeoutMs;
  for (;;) {
    const w = new Waiter(reqs, hold, left, fail);
    w.start();
    await w.promise;
    if (ctx._disposalStarted()) {
      hold.retreat();
      throw new ContextDisposedError(`${hold.label} (granted its borrows)`, ctx.describe());
    }
    if (reqs.every((r) => stillResolves(params[r.index], ctx, r.entry))) break;
    // An entry was replaced, removed or shadowed while it waited: resolve again.
    hold.retreat();
    reqs = resolveAll(ctx, params, args, fail);
    if (tryTake(reqs, hold.held)) {
      hold.link();
      break;
    }
    left = Math.max(0, deadline - performance.now());
  }
  fillArgs(ctx, params, reqs, args);
}
