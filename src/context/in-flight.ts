/**
 * In-flight work on a context: what a context's disposal aborts
 * and then awaits before running its own cleanups.
 */

/**
 * @internal One piece of in-flight work tracked on a context with `ctx._track(work)`:
 * a tool execution (tracked on its calling context and on the context owning the tool's
 * registration) or a system run (tracked on the context it runs on).
 *
 * - `abort(reason)` is called synchronously the moment the disposal of the context (or
 *   of an ancestor) starts; also at once when the work is tracked on a context whose
 *   disposal already started. `reason()` returns the abort's `ContextDisposedError`
 *   (built on the first call, the same object after): call it only when something is
 *   there to abort, so an idle work costs no `Error` (no stack capture). It must not
 *   throw (a throw is collected into the disposal's errors).
 * - `settled` never rejects (wrap it); the disposal waits for it, bounded by
 *   `server.options.disposeTimeoutMs`.
 * - `giveUp()` is called once per context tracking the work when that context's
 *   disposal stops waiting (the work settled, or the bound passed), settled or not, and
 *   at once (after `abort`) when the work is tracked on a context that already stopped
 *   waiting. A work tracked on two contexts gets up to two calls: make it idempotent.
 */
export interface InFlight {
  /** For error messages, e.g. `tool "refund" (call c1)` or `system summarize`. */
  readonly label: string;
  /** Called synchronously when disposal of the context (or an ancestor) starts. */
  abort(reason: () => unknown): void;
  /**
   * `true` while nothing of the work is running (e.g. a call group between calls): a
   * disposal then neither waits for it nor arms its timeout. Optional; omitted means busy.
   */
  readonly idle?: boolean;
  /** Settles when the work is over. Never rejects. */
  readonly settled: Promise<unknown>;
  /** Called when disposal stops waiting for the work (it settled, or `disposeTimeoutMs` passed). */
  giveUp?(): void;
}
