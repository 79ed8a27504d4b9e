/**
 * `ctx.withMut(token, fn, { timeoutMs? })` and `ctx.withRes(token, fn, { timeoutMs? })`:
 * a borrow for code outside systems. They always wait, like a `'wait'`
 * run, and hold the borrow while the callback (and the promise it returns) runs.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, nameOf, type Token } from '../context/token.js';
import { passResult, releaseAll, takeNow, waitFor } from './borrow-runner.js';
import { checkTimeout, release, type Held, type Hold } from './borrows.js';
import { Res, ResMut, type Param } from './params.js';

/** Options of `ctx.withMut` / `ctx.withRes`. */
export interface BorrowWaitOptions {
  /**
   * How long to wait for the borrow before rejecting with `BorrowConflict`, in
   * milliseconds. Defaults to the server's `borrowTimeoutMs` (30,000 by default).
   */
  readonly timeoutMs?: number;
}

const passThrough = (_i: number, err: unknown): unknown => err;
// Not frozen (never written): a frozen array here would make `release`'s element loads
// polymorphic, slowing every run (docs/performance.md, "Why the code looks like this").
const WRITE: readonly boolean[] = [true];
const READ: readonly boolean[] = [false];

/**
 * @internal `ctx.withMut` (`write`) / `ctx.withRes`: never throws; every failure rejects.
 * The callback runs synchronously when the borrow is free at once (nothing queued
 * ahead), else once it is granted. Its result (awaited) is what the promise resolves to;
 * its throw or rejection is what the promise rejects with, unchanged.
 */
export function withBorrow(ctx: SystemContext, token: Token, fn: (value: any) => unknown, options: BorrowWaitOptions | undefined, write: boolean): Promise<unknown> {
  const call = write ? 'withMut' : 'withRes';
  const writes = write ? WRITE : READ;
  const values: unknown[] = [undefined];
  const held: Held = [undefined];
  try {
    ctx._live(`${call}()`);
    const params: readonly Param[] = [write ? ResMut(token) : Res(token)];
    if (typeof fn !== 'function') throw new TypeError(`ctx.${call}(${nameOf(token)}, fn): fn must be a function (value) => result, got ${describeValue(fn)}.`);
    let t: number | undefined;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') {
        throw new TypeError(`ctx.${call}(${nameOf(token)}, fn, options): options must be an object like { timeoutMs: 5_000 }, got ${describeValue(options)}.`);
      }
      t = checkTimeout(options.timeoutMs, `ctx.${call}(${nameOf(token)}, fn, { timeoutMs })`);
    }
    const timeoutMs = t ?? ctx.server.options.borrowTimeoutMs;
    const label = `${call}(${nameOf(token)}) callback`;
    const reqs = takeNow(ctx, params, values, held, passThrough);
    if (reqs === undefined) return callBack(ctx, fn, values[0], held, writes, label, undefined);
    return waitFor(ctx, params, reqs, values, held, writes, label, timeoutMs, passThrough, undefined, (hold) => callBack(ctx, fn, values[0], held, writes, label, hold));
  } catch (err) {
    release(held, writes);
    return Promise.reject(err);
  }
}

/** Runs the callback with the borrow held (by `hold` when it waited); releases it when the callback (or its promise) settles. */
function callBack(ctx: SystemContext, fn: (value: unknown) => unknown, value: unknown, held: Held, writes: readonly boolean[], label: string, hold: Hold | undefined): Promise<unknown> {
  let r: unknown;
  try {
    r = fn(value);
  } catch (err) {
    releaseAll(held, writes, hold);
    return Promise.reject(err);
  }
  return passResult(ctx, r, held, writes, label, hold);
}
