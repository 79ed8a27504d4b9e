/**
 * `ctx.withMut(token, fn, { timeoutMs? })` and `ctx.withRes(token, fn, { timeoutMs? })`:
 * a borrow for code outside systems. They always wait, like a `'wait'`
 * run, and hold the borrow while the callback (and the promise it returns) runs.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, nameOf, type Token } from '../context/token.js';
import { fillArgs, resolveAll, waitAll } from './acquire.js';
import { checkTimeout, Hold, release, tryTake, type Held } from './borrows.js';
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
// Not frozen (never written): `release` reads these flags as it reads a system's, and
// a frozen array there would make its element loads polymorphic and slower for every run.
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
  let params: readonly Param[];
  let timeoutMs: number;
  const args: unknown[] = [undefined];
  const held: Held = [undefined];
  let hold: Hold;
  try {
    ctx._live(`${call}()`);
    params = [write ? ResMut(token) : Res(token)];
    if (typeof fn !== 'function') throw new TypeError(`ctx.${call}(${nameOf(token)}, fn): fn must be a function (value) => result, got ${describeValue(fn)}.`);
    let t: number | undefined;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') {
        throw new TypeError(`ctx.${call}(${nameOf(token)}, fn, options): options must be an object like { timeoutMs: 5_000 }, got ${describeValue(options)}.`);
      }
      t = checkTimeout(options.timeoutMs, `ctx.${call}(${nameOf(token)}, fn, { timeoutMs })`);
    }
    timeoutMs = t ?? ctx.server.options.borrowTimeoutMs;
    const reqs = resolveAll(ctx, params, args, passThrough);
    const writes = write ? WRITE : READ;
    hold = new Hold(`${call}(${nameOf(token)}) callback`, ctx, held, writes);
    if (tryTake(reqs, held)) {
      fillArgs(ctx, params, reqs, args);
      return runHeld(hold, fn, args[0], true);
    }
    const p = waitAll(ctx, params, reqs, args, hold, timeoutMs, (err) => err, passThrough).then(
      () => runHeld(hold, fn, args[0], false),
      (err: unknown) => {
        hold.end();
        throw err;
      },
    );
    hold.track();
    return p;
  } catch (err) {
    release(held, write ? WRITE : READ);
    return Promise.reject(err);
  }
}

/** Runs the callback with the borrow held; releases it when the callback (or its promise) settles. */
function runHeld(hold: Hold, fn: (value: unknown) => unknown, value: unknown, track: boolean): Promise<unknown> {
  let r: unknown;
  try {
    r = fn(value);
  } catch (err) {
    hold.end();
    return Promise.reject(err);
  }
  if (r === null || (typeof r !== 'object' && typeof r !== 'function') || typeof (r as PromiseLike<unknown>).then !== 'function') {
    hold.end();
    return Promise.resolve(r);
  }
  const p = Promise.resolve(r).then(
    (v) => {
      hold.end();
      return v;
    },
    (err: unknown) => {
      hold.end();
      throw err;
    },
  );
  if (track) {
    hold.link();
    hold.track();
  }
  return p;
}
