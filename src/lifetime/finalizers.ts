/**
 * The finalizers of a lifetime: a LIFO stack of cleanups. Closing pops in reverse, awaits
 * each cleanup, and collects the errors instead of stopping at the first.
 */
import { settle, settlePending, startWith, thenRun } from './settle.js';

/** A cleanup: sync or async work run once when its owner is disposed. */
export type Cleanup = () => unknown;

/** Options of `ctx.onDispose(fn, options)`. */
export interface CleanupOptions {
  /**
   * When true, this cleanup may run at the same time as the concurrent cleanups
   * registered right before or after it: each maximal run of adjacent concurrent
   * cleanups (in last-registered-first order) is started together and settles before
   * the next cleanup starts. Default `false`: one at a time.
   */
  readonly concurrent?: boolean;
}

/** @internal One registered cleanup (see {@link Finalizers.push}). */
export interface Slot {
  fn: ((arg: never) => unknown) | undefined;
  /** Passed to `fn` when defined (so a hot caller needs no closure per cleanup). */
  arg: unknown;
  /** Position in the stack; updated when the stack is compacted. */
  index: number;
  /** Started together with its adjacent concurrent neighbours. */
  concurrent: boolean;
}

/**
 * A cleanup pushed by {@link Finalizers.push}. A class, not an object literal: V8 tracks an
 * allocation site per literal and, once most objects from one outlive a scavenge (the
 * cleanups of long-lived contexts: a server's resident agents), allocates every later
 * object from that site straight in the old generation, where each short-lived context's
 * cleanups would then be garbage. Class instances carry no allocation site.
 */
class CleanupSlot implements Slot {
  index = 0;
  constructor(
    public fn: ((arg: never) => unknown) | undefined,
    public arg: unknown,
    public concurrent: boolean,
  ) {}
}

/**
 * @internal The finalizers of one lifetime: a LIFO stack of cleanups. `add` and unregistering are O(1) (amortised: the
 * holes left by unregistered cleanups are compacted away once they outnumber the live
 * ones), and `drain` is O(n), so a long-lived context can register and unregister
 * cleanups forever without growing.
 */
export class Finalizers {
  #stack: (Slot | undefined)[] = [];
  #live = 0;
  #holes = 0;
  /** A drain is running (see `remove`). */
  #draining = false;

  /** Number of cleanups still registered. */
  get size(): number {
    return this.#live;
  }

  /** @internal Length of the underlying stack, holes included (for tests). */
  get _slots(): number {
    return this.#stack.length;
  }

  /** Pushes `fn`; the returned function unregisters it without running it. */
  add(fn: Cleanup, concurrent = false): () => void {
    const slot = this.push(fn, undefined, concurrent);
    return () => this.remove(slot);
  }

  /**
   * @internal Pushes `fn`, to be called as `fn(arg)` (or `fn()` when `arg` is
   * `undefined`); {@link remove} unregisters it. No closure per cleanup.
   */
  push<A>(fn: (arg: A) => unknown, arg: A | undefined, concurrent: boolean): Slot {
    return this.pushSlot(new CleanupSlot(fn as (arg: never) => unknown, arg, concurrent));
  }

  /** @internal Pushes a caller-made slot (an object that is also something else: no extra allocation). */
  pushSlot<S extends Slot>(slot: S): S {
    slot.index = this.#stack.length;
    this.#stack.push(slot);
    this.#live++;
    return slot;
  }

  /** @internal Unregisters a pushed cleanup without running it (idempotent). */
  remove(slot: Slot): void {
    if (slot.fn === undefined) return;
    slot.fn = undefined;
    slot.arg = undefined;
    this.#stack[slot.index] = undefined;
    this.#live--;
    this.#holes++;
    // Never while draining: the drain pops from the array it started with, and a cleanup
    // registered or unregistered meanwhile must land in (or leave a hole in) that array.
    if (!this.#draining && this.#holes > 32 && this.#holes > this.#live) this.#compact();
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
   * `errors`. Each maximal run of adjacent concurrent cleanups is started together
   * (still last registered first) and settles before the next cleanup starts.
   * Cleanups registered while draining run too.
   *
   * Synchronous while the cleanups are (most are: a registry entry leaving its layer):
   * returns `undefined` when everything ran, else a promise of the rest.
   */
  drain(errors: unknown[]): Promise<void> | undefined {
    const stack = this.#stack;
    this.#draining = true;
    while (stack.length > 0) {
      const slot = stack.pop();
      if (slot === undefined) {
        this.#holes--;
        continue;
      }
      const fn = slot.fn as (arg: unknown) => unknown;
      const arg = slot.arg;
      slot.fn = undefined;
      slot.arg = undefined;
      this.#live--;
      if (!slot.concurrent) {
        const pending = startWith(fn, arg, errors);
        if (pending !== undefined) return thenRun(settlePending(pending, errors), () => this.drain(errors));
        continue;
      }
      const batch: Promise<void>[] = [settle(arg === undefined ? (fn as Cleanup) : () => fn(arg), errors)];
      while (stack.length > 0) {
        const next = stack[stack.length - 1];
        if (next === undefined) {
          stack.pop();
          this.#holes--;
          continue;
        }
        if (!next.concurrent) break;
        stack.pop();
        const f = next.fn as (arg: unknown) => unknown;
        const a = next.arg;
        next.fn = undefined;
        next.arg = undefined;
        this.#live--;
        batch.push(settle(a === undefined ? (f as Cleanup) : () => f(a), errors));
      }
      return thenRun(Promise.all(batch), () => this.drain(errors));
    }
    this.#holes = 0;
    this.#draining = false;
    return undefined;
  }
}
