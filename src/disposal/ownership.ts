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
  /** Position in the stack; updated when the stack is compacted. */
  index: number;
}

/**
 * @internal A LIFO stack of cleanups. `add` and unregistering are O(1) (amortised: the
 * holes left by unregistered cleanups are compacted away once they outnumber the live
 * ones), and `drain` is O(n), so a long-lived context can register and unregister
 * cleanups forever without growing.
 */
export class Ownership {
  #stack: (Slot | undefined)[] = [];
  #live = 0;
  #holes = 0;

  /** Number of cleanups still registered. */
  get size(): number {
    return this.#live;
  }

  /** @internal Length of the underlying stack, holes included (for tests). */
  get _slots(): number {
    return this.#stack.length;
  }

  /** Pushes `fn`; the returned function unregisters it without running it. */
  add(fn: Cleanup): () => void {
    const slot: Slot = { fn, index: this.#stack.length };
    this.#stack.push(slot);
    this.#live++;
    return () => {
      if (slot.fn === undefined) return;
      slot.fn = undefined;
      this.#stack[slot.index] = undefined;
      this.#live--;
      this.#holes++;
      if (this.#holes > 32 && this.#holes > this.#live) this.#compact();
    };
  }

  #compact(): void {
    const stack: Slot[] = [];
    for (const slot of this.#stack) {
      if (slot === undefined) continue;
      slot.index = stack.length;
      stack.push(slot);
    }
    this.#stack = stack;
    this.#holes = 0;
  }

  /**
   * Runs every cleanup, last registered first, awaiting each; pushes failures to
   * `errors`. Cleanups registered while draining run too.
   */
  async drain(errors: unknown[]): Promise<void> {
    while (this.#stack.length > 0) {
      const slot = this.#stack.pop();
      if (slot === undefined) {
        this.#holes--;
        continue;
      }
      const fn = slot.fn as Cleanup;
      slot.fn = undefined;
      this.#live--;
      await settle(fn, errors);
    }
    this.#holes = 0;
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
