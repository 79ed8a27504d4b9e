/** @internal Reading one field of caller-given input, naming the field when its getter throws. */
import { errorText } from './error-text.js';

/**
 * @internal Reads `obj[key]` once. When the read throws (a throwing getter, a proxy trap),
 * throws a `TypeError` that names `where` and the field, with the thrown value as its
 * `cause`:
 *
 * - `${where}: reading ${owner}.${key} threw: ${text}` (without `owner`: `reading ${key}`),
 * - or, given a `fix`, `${where}: reading ${owner}.${key} threw (${text}); ${fix}`.
 *
 * The field's name is only put together for the error, so a read that succeeds costs a
 * property read.
 *
 * @param obj - the object to read (a caller's options, a call record).
 * @param key - the field to read.
 * @param where - the call the message names, e.g. `new Server(options)`.
 * @param owner - what holds the field in the caller's words, e.g. `options`.
 * @param fix - what the caller should pass instead, e.g. `pass a plain object.`
 *
 * @example
 * ```ts
 * const logger = readField(options, 'logger', 'new Server({ logger })', 'options', 'pass a plain object.');
 * ```
 */
export function readField(obj: object, key: string, where: string, owner?: string, fix?: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    throw fieldError(err, key, where, owner, fix);
  }
}

function fieldError(err: unknown, key: string, where: string, owner: string | undefined, fix: string | undefined): TypeError {
  const field = owner === undefined ? key : `${owner}.${key}`;
  const text = errorText(err);
  const message = fix === undefined ? `${where}: reading ${field} threw: ${text}` : `${where}: reading ${field} threw (${text}); ${fix}`;
  return new TypeError(message, { cause: err });
}
