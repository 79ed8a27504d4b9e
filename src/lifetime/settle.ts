/**
 * Sync-first settling: run a step, and await only what it returned as a thenable,
 * recording failures instead of throwing.
 */
import { isThenable } from '../util/is-thenable.js';

/** A step to run: sync or async work (a finalizer's cleanup, a prelude). */
type Step = () => unknown;

/**
 * @internal Awaits `step` (which never rejects), then runs `next`, synchronous as far as it
 * goes, and awaits what it left: how a sync-first disposal continues after its first await.
 */
export async function thenRun(step: Promise<unknown>, next: () => Promise<void> | undefined): Promise<void> {
  await step;
  const rest = next();
  if (rest !== undefined) await rest;
}

/** @internal Runs `fn`, awaiting its result, and records a failure instead of throwing. */
export async function settle(fn: Step, errors: unknown[]): Promise<void> {
  const pending = start(fn, errors);
  if (pending !== undefined) await settlePending(pending, errors);
}

/** @internal Runs `fn`; a thrown error is recorded. Returns its thenable result to await, if any. */
export function start(fn: Step, errors: unknown[]): PromiseLike<unknown> | undefined {
  return startWith(fn, undefined, errors);
}

/** @internal {@link start} of `fn(arg)`, or of `fn()` when `arg` is `undefined`. */
export function startWith<A>(fn: (arg: A) => unknown, arg: A | undefined, errors: unknown[]): PromiseLike<unknown> | undefined {
  try {
    const r = arg === undefined ? (fn as () => unknown)() : fn(arg);
    if (isThenable(r)) return r;
  } catch (err) {
    collect(err, errors);
  }
  return undefined;
}

/** @internal Awaits what {@link start} returned, recording a rejection. */
export async function settlePending(p: PromiseLike<unknown>, errors: unknown[]): Promise<void> {
  try {
    await p;
  } catch (err) {
    collect(err, errors);
  }
}

/** @internal Records `err`, flattening a polestar disposal's AggregateError. Never throws. */
export function collect(err: unknown, errors: unknown[]): void {
  let flat: unknown[] | undefined;
  try {
    if (err instanceof AggregateError && (err as { polestarDisposal?: boolean }).polestarDisposal) flat = err.errors;
  } catch {
    flat = undefined;
  }
  if (flat !== undefined) errors.push(...flat);
  else errors.push(err);
}
