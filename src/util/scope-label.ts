/**
 * @internal How a scope key reads in messages, in its two forms: the bare name a
 * registry's message puts after the word `scope`, and the label a context's description
 * shows. Neither throws.
 */

const REFUSES = '<a key that refuses inspection>';

/**
 * @internal The bare name of a scope key: its string `id`, else its non-empty string
 * `name`, else its class name (`object` when it has none), e.g. `researcher`. Never
 * throws: a key that refuses inspection reads `<a key that refuses inspection>`.
 *
 * @example
 * ```ts
 * `tool "${name}" of scope ${scopeLabel(scope)}`; // tool "search" of scope researcher
 * ```
 */
export function scopeLabel(key: object): string {
  try {
    const id = (key as { id?: unknown }).id;
    if (typeof id === 'string') return id;
    const n = (key as { name?: unknown }).name;
    if (typeof n === 'string' && n) return n;
    return (key.constructor as { name?: string } | undefined)?.name ?? 'object';
  } catch {
    return REFUSES;
  }
}

/**
 * @internal How a scope key reads in a context's description: its own `toString()` when
 * its class defines one (an `Agent` reads `agent "researcher"`), else
 * `scope <`{@link scopeLabel}`>`. Never throws.
 *
 * @example
 * ```ts
 * `context at depth 2 (${describeScope(key)})`; // context at depth 2 (scope researcher)
 * ```
 */
export function describeScope(key: object): string {
  try {
    const own = (key as { toString?: unknown }).toString;
    if (typeof own === 'function' && own !== Object.prototype.toString && own !== Function.prototype.toString) {
      try {
        return String(key);
      } catch {
        // fall through to the structural label
      }
    }
  } catch {
    return `scope ${REFUSES}`;
  }
  return `scope ${scopeLabel(key)}`;
}
