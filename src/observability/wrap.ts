/**
 * @internal The body wrapper: one module-level slot an instrumentation (the OpenTelemetry
 * bridge) fills to run a turn's function and a tool's body inside something of its own
 * (an active span context), so that what they do is nested under the span it made.
 */

/**
 * @internal A body wrapper: called as `wrap(kind, context, body)` around
 * - `'turn'`: a turn's function (`fn(turnCtx, session)` of `session.turn(fn)`, or of a
 *   durable `turn(fn)`; for a durable turn, only once `begin` resolved, so `context.turn`
 *   and `context.attempt` are set);
 * - `'tool'`: a tool's body (`tool.execute(args, execution, ctx)`, or the call function a
 *   `tools/execute` listener made), only for a call that reached its body;
 *
 * `context` is the very object the `polestar:turn` / `polestar:tool` channel published at
 * `start` for this call (so the wrapper finds what it made then, e.g. in a `WeakMap`). The
 * wrapper must call `body()` exactly once, synchronously, and return what it returned (a
 * value or a promise, untouched); it must never throw. It is called only for a call whose
 * channel had subscribers when the call started.
 */
export type BodyWrapper = (kind: 'turn' | 'tool', context: object, body: () => unknown) => unknown;

/**
 * @internal The wrapper in place, `undefined` when none (read on the hot path: one
 * `undefined` check). A live binding: read it as `bodyWrapper`, never copy it.
 */
export let bodyWrapper: BodyWrapper | undefined;

/**
 * @internal Installs `fn` as the body wrapper (`undefined` removes it) and returns the
 * one it replaced, so a second instrumentation can chain to it and put it back. There is
 * one slot per process (per copy of polestar loaded).
 */
export function setBodyWrapper(fn: BodyWrapper | undefined): BodyWrapper | undefined {
  if (fn !== undefined && typeof fn !== 'function') {
    throw new TypeError(`setBodyWrapper(fn): fn must be a function (kind, context, body) => body(), or undefined to remove it; got ${typeof fn}.`);
  }
  const previous = bodyWrapper;
  bodyWrapper = fn;
  return previous;
}
