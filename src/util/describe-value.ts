/**
 * @internal How error messages show a value they were given: short, and never throwing.
 *
 * A value that can not be inspected (a revoked proxy, a proxy whose traps throw, a throwing
 * `name` or `constructor` getter) is described as such, so reporting bad input never fails
 * in turn.
 */

/**
 * @internal A short description of any value for error messages: `the string "…"`,
 * `the number 5`, `the symbol Symbol(s)`, `an object (Map)`, `the function f`, `undefined`.
 * Strings are cut at 40 characters. Never throws. The text is neutral: where a token or a
 * class is expected, `describeTokenCandidate` (in the context's token module) adds the hint
 * that explains why a symbol or a function does not qualify.
 *
 * @example
 * ```ts
 * throw new TypeError(`${where}: options must be an object, got ${describeValue(value)}.`);
 * ```
 */
export function describeValue(value: unknown): string {
  try {
    return describeUnsafe(value);
  } catch {
    return uninspectable(value);
  }
}

function uninspectable(value: unknown): string {
  return `${typeof value === 'function' ? 'a function' : 'an object'} that can not be inspected (a revoked proxy or one whose traps throw)`;
}

function quoted(s: string): string {
  return JSON.stringify(s.length > 40 ? s.slice(0, 40) + '…' : s);
}

function describeUnsafe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  switch (typeof value) {
    case 'string':
      return `the string ${quoted(value)}`;
    case 'symbol':
      return `the symbol ${String(value)}`;
    case 'function': {
      let n: unknown;
      try {
        n = (value as { name?: unknown }).name;
      } catch {
        return 'a function whose name can not be read (a proxy?)';
      }
      return `the function ${typeof n === 'string' && n ? n : '<anonymous>'}`;
    }
    case 'object': {
      let ctor: unknown;
      try {
        ctor = (value as object).constructor;
      } catch {
        return 'an object that refuses inspection (a proxy?)';
      }
      let n: unknown;
      try {
        n = typeof ctor === 'function' ? (ctor as { name?: unknown }).name : undefined;
      } catch {
        n = undefined;
      }
      return `an object (${typeof n === 'string' && n ? n : ctor === undefined ? 'no prototype' : 'unnamed class'})`;
    }
    default:
      return `the ${typeof value} ${String(value)}`;
  }
}
