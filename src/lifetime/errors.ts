/**
 * The errors a close builds: the abort reason, the timeout of an in-flight work, and the
 * one `AggregateError` of everything collected. (Their classes are the context's.)
 */
import { ContextDisposedError, DisposeTimeoutError } from '../context/errors.js';
import { errorText } from '../util/error-text.js';

/**
 * @internal The abort reason of a lifetime whose close started: the `ContextDisposedError`
 * given to its signal and to its in-flight work.
 */
export function closeReason(where: string): ContextDisposedError {
  return new ContextDisposedError('signal', where, `the disposal of the ${where} started: work running on it or below it was aborted.`);
}

/** @internal The error of a work still running when the close of `where` stopped waiting after `timeoutMs`. */
export function closeTimeoutError(label: string, where: string, timeoutMs: number): DisposeTimeoutError {
  return new DisposeTimeoutError(label, where, timeoutMs);
}

/** @internal The error of a call made on a lifetime whose close started. */
export function closedError(what: string, where: string): ContextDisposedError {
  return new ContextDisposedError(what, where);
}

/**
 * @internal One AggregateError for the collected errors, tagged so that an owner
 * collecting a child's failure flattens it.
 */
export function collected(errors: unknown[], what: string): AggregateError {
  const err = new AggregateError(errors, `${errors.length} error(s) while disposing ${what}: ${errors.map(errorText).join('; ')}`);
  Object.defineProperty(err, 'polestarDisposal', { value: true });
  return err;
}

/** @internal Throws {@link collected} for the collected errors, if any. */
export function throwCollected(errors: unknown[], what: string): void {
  if (errors.length > 0) throw collected(errors, what);
}
