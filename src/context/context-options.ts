/**
 * Reading the option objects of `ctx.child(options)` and `ctx.onDispose(fn, options)`:
 * each field read once, a hostile getter or a wrong type refused with a message naming it.
 */
import { ParentFilter } from './parent-filter.js';
import type { CleanupOptions } from '../lifetime/finalizers.js';
import { describeValue, errorText } from './token.js';

/** Options of `ctx.child(options)`. */
export interface ChildOptions {
  /**
   * Gates every `Res` walk that crosses from the new context to this one.
   * Default: no filter.
   */
  readonly parentFilter?: ParentFilter;
}

/** @internal Reads `{ parentFilter }` once and validates it. */
export function readChildOptions(options: unknown, call: string): ParentFilter | undefined {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}: options must be an object such as { parentFilter }, got ${describeValue(options)}.`);
  }
  let f: unknown;
  try {
    f = (options as ChildOptions).parentFilter;
  } catch (err) {
    throw new TypeError(`${call}: reading options.parentFilter threw (${errorText(err)}).`, { cause: err });
  }
  if (f === undefined || f instanceof ParentFilter) return f;
  throw new TypeError(
    `${call}: parentFilter must be made by ParentFilter.allowOnly([...]) or ParentFilter.allowAllExcept([...]), got ${describeValue(f)}.`,
  );
}

/** @internal Reads `{ concurrent }` of `onDispose(fn, options)` once and validates it. */
export function readCleanupOptions(options: unknown): boolean {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`onDispose(fn, options): options must be an object such as { concurrent: true }, got ${describeValue(options)}.`);
  }
  let c: unknown;
  try {
    c = (options as CleanupOptions).concurrent;
  } catch (err) {
    throw new TypeError(`onDispose(fn, options): reading options.concurrent threw (${errorText(err)}).`, { cause: err });
  }
  if (c === undefined || typeof c === 'boolean') return c === true;
  throw new TypeError(`onDispose(fn, { concurrent }): concurrent must be a boolean, got ${describeValue(c)}.`);
}
