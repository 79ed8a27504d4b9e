/**
 * The one ownership primitive: a LIFO stack of cleanups.
 *
 * Contexts, scopes, registries and agents all push their undo work on the stack of the
 * context that owns it; disposing pops in reverse, awaits each cleanup, and collects the
 * errors instead of stopping at the first.
 */

/** A cleanup: sync or async work run once when its owner is disposed. */
export type Cleanup = () => unknown;

interface Slot {
  fn: Cleanup | undefined;
}

/** @internal A LIFO stack of cleanups whose entries can be unregistered in O(1). */
export class Ownership {
  #slots = new Set<Slot>();

  /** Number of cleanups still registered. */
  get size(): number {
    return this.#slots.size;
  }

  /** Pushes `fn`; the returned function unregisters it without running it. */
  add(fn: Cleanup): () => void {
    const slot: Slot = { fn };
    this.#slots.add(slot);
    return () => {
      slot.fn = undefined;
      this.#slots.delete(slot);
    };
  }

  /**
   * Runs every cleanup, last registered first, awaiting each; pushes failures to
   * `errors`. Cleanups registered while draining run too.
   */
  async drain(errors: unknown[]): Promise<void> {
    while (this.#slots.size > 0) {
      let last: Slot | undefined;
      for (const s of this.#slots) last = s;
      const slot = last as Slot;
      this.#slots.delete(slot);
      const fn = slot.fn;
      slot.fn = undefined;
      if (fn) await settle(fn, errors);
    }
  }
}

/** @internal Runs `fn`, awaiting its result, and records a failure instead of throwing. */
export async function settle(fn: Cleanup, errors: unknown[]): Promise<void> {
  try {
    const r = fn();
    if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') await r;
  } catch (err) {
    if (err instanceof AggregateError && (err as { polestarDisposal?: boolean }).polestarDisposal) errors.push(...err.errors);
    else errors.push(err);
  }
}

/** True when `value` implements `Symbol.asyncDispose` or `Symbol.dispose`. */
export function isDisposable(value: unknown): value is AsyncDisposable | Disposable {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  return (
    typeof (value as AsyncDisposable)[Symbol.asyncDispose] === 'function' ||
    typeof (value as Disposable)[Symbol.dispose] === 'function'
  );
}

/** @internal Disposes a value through `Symbol.asyncDispose`, else `Symbol.dispose`. */
export function disposeValue(value: AsyncDisposable | Disposable): unknown {
  const a = (value as AsyncDisposable)[Symbol.asyncDispose];
  if (typeof a === 'function') return a.call(value);
  return (value as Disposable)[Symbol.dispose]();
}

/**
 * @internal Throws one AggregateError for the collected errors, if any.
 * The error is tagged so that an owner collecting a child's failure flattens it.
 */
export function throwCollected(errors: unknown[], what: string): void {
  if (errors.length === 0) return;
  const err = new AggregateError(errors, `${errors.length} error(s) while disposing ${what}: ${errors
    .map((e) => (e instanceof Error ? e.message : String(e)))
    .join('; ')}`);
  Object.defineProperty(err, 'polestarDisposal', { value: true });
  throw err;
}
