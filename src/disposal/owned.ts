/**
 * Owning an undo on a context: the one way registries tie a registration's lifetime to
 * the context it was made through.
 */
import type { Cleanup } from './ownership.js';

/** Anything that can own cleanups (a `SystemContext`). */
export interface Owner {
  onDispose(fn: Cleanup): () => void;
}

/**
 * @internal Makes `owner` run `undo` when it is disposed and returns an idempotent
 * disposer that runs `undo` now and drops it from the owner. When the owner refuses (it
 * is disposed), `undo` runs at once and the error is rethrown, so nothing is left behind.
 */
export function ownedBy(owner: Owner, undo: () => void): () => void {
  let unown: (() => void) | undefined;
  try {
    unown = owner.onDispose(undo);
  } catch (err) {
    undo();
    throw err;
  }
  return () => {
    unown?.();
    unown = undefined;
    undo();
  };
}
