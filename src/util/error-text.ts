/** @internal The text of a caught error, for messages that quote a cause. */
import { types } from 'node:util';
import { describeValue } from './describe-value.js';

/**
 * @internal The message of a caught value, for a message that quotes it: an `Error`'s
 * `message` (also one made in another realm, such as a `vm` context or a test runner's
 * sandbox, where `instanceof Error` is false), a thrown string as it is, anything else
 * described by {@link describeValue}.
 * Never throws: an error whose `message` getter or `toString` throws, or a proxy whose traps
 * throw, gives `an error that refuses inspection`.
 *
 * @example
 * ```ts
 * throw new TypeError(`${where}: the factory threw (${errorText(err)}).`, { cause: err });
 * ```
 */
export function errorText(err: unknown): string {
  try {
    if (err instanceof Error || types.isNativeError(err)) return String(err.message);
    return typeof err === 'string' ? err : describeValue(err);
  } catch {
    return 'an error that refuses inspection';
  }
}
