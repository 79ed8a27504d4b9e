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

/**
 * @internal Reads `obj[key]` once, like {@link readField}, for messages that quote the
 * field: when the read throws, throws `${where}: reading "${key}" threw: ${text}` (a
 * `TypeError` with the thrown value as its `cause`).
 *
 * @param obj - the object to read (a caller's options or definition).
 * @param key - the field to read.
 * @param where - the call the message names, e.g. `new ToolsPlugin(options)`.
 *
 * @example
 * ```ts
 * const deny = readQuotedField(restriction, 'deny', 'Tools.restrict');
 * ```
 */
export function readQuotedField(obj: object, key: string, where: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    throw quotedFieldError(err, key, where);
  }
}

/**
 * @internal The error {@link readQuotedField} throws, for a caller that reads several
 * fields in one `try` and names the one that threw.
 *
 * @param err - what the read threw (kept as the `cause`).
 * @param key - the field whose read threw.
 * @param where - the call the message names, e.g. `Tools.register`.
 */
export function quotedFieldError(err: unknown, key: string, where: string): TypeError {
  return new TypeError(`${where}: reading "${key}" threw: ${errorText(err)}`, { cause: err });
}

/**
 * @internal Reads `obj[key]` once, for input whose unreadable field simply counts as absent
 * (a listener's decision): `undefined` when `obj` is not an object or the read throws.
 *
 * @param obj - the value to read (anything).
 * @param key - the field to read.
 */
export function readFieldOrUndefined(obj: unknown, key: string): unknown {
  if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function')) return undefined;
  try {
    return (obj as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}
