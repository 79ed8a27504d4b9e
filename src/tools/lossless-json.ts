/**
 * Lossless JSON: values that survive `JSON.parse(JSON.stringify(v))` unchanged. Tool
 * parameters, arguments and results cross the model and log boundary, so they are
 * snapshotted through {@link snapshotJson}: each property is read exactly once, the
 * value is checked and a detached, deep-frozen plain copy is returned.
 */

/** A JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
/** A JSON object. */
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** A value is not losslessly JSON-serializable; `path` says where (e.g. `parameters.properties.q`). */
export class NotLosslessJsonError extends TypeError {
  /** Always `'NotLosslessJsonError'`. */
  override readonly name = 'NotLosslessJsonError';
  /** Where the offending value sits. */
  readonly path: string;
  /** What is wrong with it. */
  readonly reason: string;

  /**
   * @param what - the prefix of the message (e.g. `tool parameters`).
   * @param path - where the offending value sits.
   * @param reason - what is wrong with it.
   */
  constructor(what: string, path: string, reason: string) {
    super(`${what} must be losslessly JSON-serializable: ${path} ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** Deepest nesting accepted (deeper values are refused instead of overflowing the stack). */
export const MAX_JSON_DEPTH = 256;

/**
 * Checks that `value` is lossless JSON and returns a detached deep-frozen copy, reading
 * every property exactly once (a getter that changes between reads can not make the
 * checked value differ from the stored one). Plain objects (prototype `Object.prototype`
 * or `null`) and dense plain arrays only; an own `__proto__` key is kept as an own data
 * property (as `JSON.parse` does), never as a prototype.
 *
 * @param value - the value to snapshot.
 * @param what - prefix of the error message, e.g. `tool parameters`.
 * @param root - name of the root in error paths, e.g. `parameters`.
 * @param ignoredHiddenKey - a key whose *non-enumerable* own property is left out of the
 *   copy instead of being refused (tool parameters pass `'~standard'`, which
 *   `z.toJSONSchema()` output carries).
 * @throws NotLosslessJsonError naming the path and the reason.
 */
export function snapshotJson(value: unknown, what: string, root: string, ignoredHiddenKey?: string): JsonValue {
  const ancestors = new Set<object>();
  const visit = (v: unknown, path: string, depth: number): JsonValue => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        if (!Number.isFinite(v)) throw new NotLosslessJsonError(what, path, `is ${v} (JSON has no NaN or Infinity)`);
        if (Object.is(v, -0)) throw new NotLosslessJsonError(what, path, 'is -0 (JSON turns it into 0)');
        return v;
      case 'undefined':
        throw new NotLosslessJsonError(what, path, 'is undefined (JSON drops it)');
      case 'bigint':
        throw new NotLosslessJsonError(what, path, 'is a bigint');
      case 'symbol':
        throw new NotLosslessJsonError(what, path, 'is a symbol');
      case 'function':
        throw new NotLosslessJsonError(what, path, 'is a function');
    }
    if (v === null) return null;
    const obj = v as object;
    if (depth >= MAX_JSON_DEPTH) throw new NotLosslessJsonError(what, path, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (ancestors.has(obj)) throw new NotLosslessJsonError(what, path, 'is a cycle (it contains itself)');
    ancestors.add(obj);
    try {
      if (Array.isArray(obj)) return visitArray(obj, path, depth);
      const proto = Object.getPrototypeOf(obj) as object | null;
      if (proto !== Object.prototype && proto !== null) {
        const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
        throw new NotLosslessJsonError(what, path, `is a ${name} instance (only plain objects and arrays are JSON)`);
      }
      const keys = Object.keys(obj);
      let own = Reflect.ownKeys(obj);
      if (ignoredHiddenKey !== undefined && own.length !== keys.length && own.includes(ignoredHiddenKey) && !keys.includes(ignoredHiddenKey)) {
        own = own.filter((k) => k !== ignoredHiddenKey);
      }
      if (own.length !== keys.length) {
        const odd = own.find((k) => typeof k === 'symbol' || !keys.includes(k));
        throw new NotLosslessJsonError(
          what,
          path,
          typeof odd === 'symbol' ? `has a symbol key ${String(odd)}` : `has a non-enumerable property "${String(odd)}"`,
        );
      }
      const out: Record<string, JsonValue> = {};
      for (const k of keys) {
        const child = visit((obj as Record<string, unknown>)[k], `${path}.${k}`, depth + 1);
        if (k === '__proto__') Object.defineProperty(out, k, { value: child, enumerable: true, writable: true, configurable: true });
        else out[k] = child;
      }
      return Object.freeze(out);
    } finally {
      ancestors.delete(obj);
    }
  };
  const visitArray = (arr: unknown[], path: string, depth: number): JsonValue => {
    if (Object.getPrototypeOf(arr) !== Array.prototype) throw new NotLosslessJsonError(what, path, 'is an array subclass');
    const len = arr.length;
    const keys = Reflect.ownKeys(arr);
    // own keys of a dense plain array: the indices plus "length"
    if (keys.length !== len + 1) {
      for (let i = 0; i < len; i++) {
        if (!Object.hasOwn(arr, i)) throw new NotLosslessJsonError(what, path, `is a sparse array (index ${i} is a hole)`);
      }
      throw new NotLosslessJsonError(what, path, 'is an array with extra properties');
    }
    const out: JsonValue[] = new Array<JsonValue>(len);
    for (let i = 0; i < len; i++) out[i] = visit(arr[i], `${path}[${i}]`, depth + 1);
    return Object.freeze(out);
  };
  try {
    return visit(value, root, 0);
  } catch (err) {
    if (err instanceof NotLosslessJsonError) throw err;
    // a throwing getter or proxy trap, or a stack overflow
    throw new NotLosslessJsonError(what, root, `could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** @internal A detached, mutable deep copy of a JSON value (for handing out to callers). */
export function thawJson<T extends JsonValue>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x: JsonValue) => thawJson(x)) as unknown as T;
  const out: Record<string, JsonValue> = {};
  for (const k of Object.keys(v)) {
    const child = thawJson((v as JsonObject)[k]);
    if (k === '__proto__') Object.defineProperty(out, k, { value: child, enumerable: true, writable: true, configurable: true });
    else out[k] = child;
  }
  return out as T;
}
