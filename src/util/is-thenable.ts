/** @internal The one test for "is this a promise" used before awaiting a callback's result. */

/**
 * @internal Whether `v` looks like a promise: a non-null object or function with a callable
 * `then`. Reads `then` once; a hostile `then` getter's error propagates, so call it where a
 * throw is reported as the callback's failure.
 *
 * @example
 * ```ts
 * const r = listener(event);
 * if (isThenable(r)) await r;
 * ```
 */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as PromiseLike<unknown>).then === 'function';
}
