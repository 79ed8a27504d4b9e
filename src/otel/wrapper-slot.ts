// The one body-wrapper slot polestar calls around a turn's function and a tool's body,
// shared by every enabled instrumentation: the first to enable installs a wrapper that
// runs the body under each one's span (nested, in enable order); the last to disable
// removes it and puts back whatever wrapper was there before (chained to meanwhile), so
// polestar is back to what it was.
import { setBodyWrapper, type BodyWrapper } from '../observability/wrap.js';

/** What polestar wraps: a turn's function or a tool's body. */
export type WrappedKind = 'turn' | 'tool';

/** An instrumentation that can run a body with its span of `message` active. */
export interface SpanRunner {
  runInSpan(kind: WrappedKind, message: object, body: () => unknown): unknown;
}

const runners: SpanRunner[] = [];
/** The wrapper that was in the slot before ours (another copy's, say): called inside ours. */
let previous: BodyWrapper | undefined;

function wrapper(kind: WrappedKind, message: object, body: () => unknown): unknown {
  const outer = previous;
  let run = outer === undefined ? body : () => outer(kind, message, body);
  const [only] = runners;
  if (runners.length === 1 && only !== undefined) return only.runInSpan(kind, message, run);
  for (const runner of runners.slice().reverse()) {
    const inner = run;
    run = () => runner.runInSpan(kind, message, inner);
  }
  return run();
}

/** Adds `runner` (installing the wrapper when it is the first). */
export function installWrapper(runner: SpanRunner): void {
  if (runners.includes(runner)) return;
  runners.push(runner);
  if (runners.length === 1) previous = setBodyWrapper(wrapper);
}

/** Removes `runner` (and the wrapper with the last one). */
export function uninstallWrapper(runner: SpanRunner): void {
  const at = runners.indexOf(runner);
  if (at < 0) return;
  runners.splice(at, 1);
  if (runners.length === 0) {
    setBodyWrapper(previous);
    previous = undefined;
  }
}
