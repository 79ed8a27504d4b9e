/**
 * Whether a value is disposable, and disposing it.
 */

/**
 * True when `value` implements `Symbol.asyncDispose` or `Symbol.dispose`. Never throws:
 * a value whose lookup throws (a revoked proxy, a strict mock) is reported as not
 * disposable.
 */
export function isDisposable(value: unknown): value is AsyncDisposable | Disposable {
  try {
    return probeDisposable(value);
  } catch {
    return false;
  }
}

/**
 * @internal Whether `value` implements `Symbol.asyncDispose` or `Symbol.dispose`;
 * rethrows whatever the lookup throws (a revoked proxy, a strict mock), so the caller can
 * refuse the value before storing it.
 */
export function probeDisposable(value: unknown): value is AsyncDisposable | Disposable {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  return (
    typeof (value as AsyncDisposable)[Symbol.asyncDispose] === 'function' ||
    typeof (value as Disposable)[Symbol.dispose] === 'function'
  );
}

/**
 * @internal Disposes a value through `Symbol.asyncDispose`, else `Symbol.dispose`; a
 * value that no longer has either is left alone. Throws (or rejects) with whatever the
 * lookup or the disposer throws: callers run it through {@link settle}.
 */
export function disposeValue(value: unknown): unknown {
  const a = (value as AsyncDisposable)[Symbol.asyncDispose];
  if (typeof a === 'function') return a.call(value);
  const d = (value as Disposable)[Symbol.dispose];
  if (typeof d === 'function') return d.call(value);
  return undefined;
}
