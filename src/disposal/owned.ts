/**
 * Owning an undo on a context: the one way registries tie a registration's lifetime to
 * the context it was made through.
 */
import type { Cleanup } from '../lifetime/finalizers.js';

/** Anything that can own cleanups (a `SystemContext`). */
export interface Owner {
  onDispose(fn: Cleanup): () => void;
}

/**
 * @internal Makes `owner` run `undo` when it is disposed and returns an idempotent
 * disposer that runs `undo` now and drops it from the owner; `undo` runs at most once
 * whichever happens first (a disposer called after the owner's disposal does nothing). When the owner refuses (it
 * is disposed), `undo` runs at once and the error is rethrown, so nothing is left behind.
 */
export function ownedBy(owner: Owner, undo: () => void): () => void {
  // `undo` runs at most once, whichever comes first: the disposer or the owner's disposal.
  let done = false;
  const once = (): void => {
    if (done) return;
    done = true;
    undo();
  };
  let unown: (() => void) | undefined;
  try {
    unown = owner.onDispose(once);
  } catch (err) {
    once();
    throw err;
  }
  return () => {
    if (done) return;
    unown?.();
    unown = undefined;
    once();
  };
}
