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
  return snapshotJsonLike(value, undefined, what, root, ignoredHiddenKey);
}

/**
 * @internal {@link snapshotJson} against a `template`: a snapshot made earlier (deep-frozen).
 * Every part of `value` equal to the template's part at the same place (same keys in the
 * same order, same primitives) is answered with the template's part instead of a new copy,
 * so a value equal to the template returns the template itself: nothing allocated, nothing
 * frozen. The checks and the read-once rule are exactly those of {@link snapshotJson}.
 */
export function snapshotJsonLike(value: unknown, template: JsonValue | undefined, what: string, root: string, ignoredHiddenKey?: string): JsonValue {
  // The hot path (every call's arguments, every register's parameters) allocates nothing
  // but the copy: the ancestors are a shared stack indexed by depth (a fresh one when a
  // getter or proxy trap snapshots re-entrantly), and a refusal's path is built only when
  // one is thrown.
  const outer = ancestorsInUse;
  const ancestors = outer ? [] : sharedAncestors;
  ancestorsInUse = true;
  try {
    return visit(value, template, ancestors, ignoredHiddenKey, 0);
  } catch (err) {
    if (err instanceof Refusal) throw new NotLosslessJsonError(what, root + err.segments.reverse().join(''), err.reason);
    if (err instanceof NotLosslessJsonError) throw err;
    // a throwing getter or proxy trap, or a stack overflow
    throw new NotLosslessJsonError(what, root, `could not be read: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    ancestorsInUse = outer;
    // Drop the references (the values are the caller's). The slots this call set are a
    // prefix (depth d is set only below depths 0..d-1), and the ones after it were
    // cleared by earlier calls.
    if (!outer) for (let i = 0; i < ancestors.length && ancestors[i] !== undefined; i++) ancestors[i] = undefined as unknown as object;
  }
}

/** `sharedAncestors[i]` is the object at depth `i` on the path being visited. */
const sharedAncestors: object[] = [];
/** Whether a snapshot is using {@link sharedAncestors} (a re-entrant one takes its own). */
let ancestorsInUse = false;

/** A refusal on its way up: each level adds its path segment (`.key` or `[i]`). */
class Refusal {
  readonly segments: string[] = [];
  constructor(readonly reason: string) {}
}

function visit(v: unknown, t: JsonValue | undefined, ancestors: object[], hidden: string | undefined, depth: number): JsonValue {
  if (typeof v !== 'object') return primitive(v);
  if (v === null) return null;
  if (depth >= MAX_JSON_DEPTH) throw new Refusal(`is nested deeper than ${MAX_JSON_DEPTH} levels`);
  for (let i = 0; i < depth; i++) if (ancestors[i] === v) throw new Refusal('is a cycle (it contains itself)');
  ancestors[depth] = v;
  if (Array.isArray(v)) return visitArray(v, Array.isArray(t) ? (t as readonly JsonValue[]) : undefined, ancestors, hidden, depth);
  const proto = Object.getPrototypeOf(v) as object | null;
  if (proto !== Object.prototype && proto !== null) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
    throw new Refusal(`is a ${name} instance (only plain objects and arrays are JSON)`);
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  const n = keys.length;
  // Names and symbols apart: both are far cheaper than Reflect.ownKeys on V8.
  let names = Object.getOwnPropertyNames(obj);
  if (names.length !== n) {
    if (hidden !== undefined && names.includes(hidden) && !keys.includes(hidden)) names = names.filter((k) => k !== hidden);
    if (names.length !== n) {
      const odd = names.find((k) => !keys.includes(k));
      throw new Refusal(`has a non-enumerable property "${String(odd)}"`);
    }
  }
  const symbols = Object.getOwnPropertySymbols(obj);
  if (symbols.length > 0) throw new Refusal(`has a symbol key ${String(symbols[0])}`);
  // The template is reused whole while every key so far matched it (same key, same place);
  // a child is visited against the template's child of the same key wherever it is.
  const tobj = t !== null && typeof t === 'object' && !Array.isArray(t) ? (t as JsonObject) : undefined;
  let match = tobj !== undefined && sameKeys(tobj, keys);
  let out: Record<string, JsonValue> | undefined;
  for (let i = 0; i < n; i++) {
    const k = keys[i] as string;
    // with matching keys, the template has k; otherwise look it up
    const tc = match ? (tobj as JsonObject)[k] : tobj !== undefined && Object.hasOwn(tobj, k) ? tobj[k] : undefined;
    let child: JsonValue;
    try {
      child = visit(obj[k], tc, ancestors, hidden, depth + 1);
    } catch (err) {
      if (err instanceof Refusal) err.segments.push(`.${k}`);
      throw err;
    }
    if (out === undefined) {
      if (match && child === tc) continue;
      // the first difference: every key before it matched, so its value is the template's
      out = {};
      for (let j = 0; j < i; j++) setKey(out, keys[j] as string, (tobj as JsonObject)[keys[j] as string] as JsonValue);
      match = false;
    }
    setKey(out, k, child);
  }
  if (out === undefined) return match ? (tobj as JsonObject) : Object.freeze({});
  return Object.freeze(out);
}

/** A non-object value: returned when JSON carries it unchanged, else refused. */
function primitive(v: unknown): JsonValue {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (!Number.isFinite(v)) throw new Refusal(`is ${v} (JSON has no NaN or Infinity)`);
      if (Object.is(v, -0)) throw new Refusal('is -0 (JSON turns it into 0)');
      return v;
    case 'undefined':
      throw new Refusal('is undefined (JSON drops it)');
    case 'bigint':
      throw new Refusal('is a bigint');
    case 'symbol':
      throw new Refusal('is a symbol');
    default:
      throw new Refusal('is a function');
  }
}

/** Whether the (frozen, plain) template has exactly `keys`, in that order; allocates nothing. */
function sameKeys(tobj: JsonObject, keys: readonly string[]): boolean {
  let i = 0;
  for (const k in tobj) if (i >= keys.length || keys[i++] !== k) return false;
  return i === keys.length;
}

function setKey(out: Record<string, JsonValue>, k: string, child: JsonValue): void {
  if (k === '__proto__') Object.defineProperty(out, k, { value: child, enumerable: true, writable: true, configurable: true });
  else out[k] = child;
}

function visitArray(arr: unknown[], t: readonly JsonValue[] | undefined, ancestors: object[], hidden: string | undefined, depth: number): JsonValue {
  if (Object.getPrototypeOf(arr) !== Array.prototype) throw new Refusal('is an array subclass');
  const len = arr.length;
  const keys = Reflect.ownKeys(arr);
  // own keys of a dense plain array: the indices plus "length"
  if (keys.length !== len + 1) {
    for (let i = 0; i < len; i++) {
      if (!Object.hasOwn(arr, i)) throw new Refusal(`is a sparse array (index ${i} is a hole)`);
    }
    throw new Refusal('is an array with extra properties');
  }
  const tpl = t !== undefined && t.length === len ? t : undefined;
  let out: JsonValue[] | undefined;
  for (let i = 0; i < len; i++) {
    let child: JsonValue;
    try {
      child = visit(arr[i], tpl?.[i], ancestors, hidden, depth + 1);
    } catch (err) {
      if (err instanceof Refusal) err.segments.push(`[${i}]`);
      throw err;
    }
    if (out === undefined) {
      if (tpl !== undefined && child === tpl[i]) continue;
      out = new Array<JsonValue>(len);
      for (let j = 0; j < i; j++) out[j] = (tpl as readonly JsonValue[])[j] as JsonValue;
    }
    out[i] = child;
  }
  if (out === undefined) return tpl !== undefined ? tpl : Object.freeze([]);
  return Object.freeze(out);
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
