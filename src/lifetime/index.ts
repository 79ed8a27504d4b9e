/**
 * @internal The lifetime kernel: how polestar ties anything to the life of something else.
 * Contexts embed a {@link Lifetime}; scopes, agents, durable sessions and tool calls are
 * tied to one with the words below, and with nothing else.
 *
 * - `addFinalizer(fn, { concurrent })`: run `fn` when the lifetime closes, last added
 *   first (a context's `onDispose` is this, with its input checked). `ownedBy(owner, undo)`
 *   builds on it: an undo that runs once, at the owner's close or when its disposer is
 *   called. Hot paths push a caller-made slot instead (`_addFinalizerSlot`), so a
 *   registration needs no closure.
 * - `fork()`: a child lifetime, closed by its parent's close (a finalizer of it, closed
 *   before the parent's own finalizers, newest first); a context's `child()` is this.
 * - `track(work)`: in-flight work, aborted the moment the close starts, awaited (bounded
 *   by the close timeout) before the finalizers run, then given up.
 * - `group(slot)`: one tracked work group per lifetime for a whole module (the borrow
 *   holders of running systems, a context's tool calls): allocate a slot once with
 *   `groupSlot(label, make)`; members join the group without tracking calls of their own.
 * - `signal`: an `AbortSignal` aborted the moment the close of the lifetime or of an
 *   ancestor starts.
 * - `close()`: memoized before anything runs. The whole subtree is marked closing before
 *   any abort listener runs; descendants close first, newest first; a descendant's errors
 *   reach its ancestor's one `AggregateError`.
 * - Two hooks for what must happen first: `_onAbortPass(fn)` runs when the abort pass
 *   reaches the lifetime, before its signal is aborted (a scope key stops being live);
 *   `_prelude` is the first step of its close, run before its children close (an agent
 *   leaves its registry and announces its end; a durable session wraps it to announce its
 *   own end first).
 *
 * Two ties belong to contexts rather than to the kernel: a local whose value is
 * disposable is owned by the contexts holding it, and the last holder's close disposes
 * it (the server counts the holders); and `_onInsert` lets a durable session see every
 * `insert` while a resumed agent sets up.
 */
export { DEFAULT_CLOSE_TIMEOUT_MS, embedLifetime, Lifetime, type LifetimeState } from './lifetime.js';
export { groupSlot, type GroupSlot } from './groups.js';
export type { InFlight } from './work.js';
export type { Cleanup, CleanupOptions } from './finalizers.js';
