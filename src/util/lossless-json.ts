/**
 * Lossless JSON: values that survive `JSON.parse(JSON.stringify(v))` unchanged. Tool
 * parameters, arguments and results cross the model and log boundary, so they are
 * snapshotted through {@link snapshotJson}: each property is read exactly once, the
 * value is checked and a detached, deep-frozen plain copy is returned.
 */
import { branded } from './brand.js';
import { errorText } from './error-text.js';

/** A JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
/** A JSON object. */
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** Values marked by {@link markSnapshot}: deep-frozen lossless JSON, safe to take as they are. */
const knownSnapshots = new WeakSet<object>();

/**
 * @internal Marks `value`, a deep-frozen value made of lossless JSON only (what
 * {@link snapshotJson} returns, or a chat message snapshot), so that a later check of the
 * same object ({@link isKnownSnapshot}) may take it without copying it again.
 */
export function markSnapshot<T extends object>(value: T): T {
  knownSnapshots.add(value);
  return value;
}

/** @internal Whether `value` was marked by {@link markSnapshot}. */
export function isKnownSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && knownSnapshots.has(value);
}

/** A value is not losslessly JSON-serializable; `path` says where (e.g. `parameters.properties.q`). */
export class NotLosslessJsonError extends TypeError {
  /**
   * True when `value` is an instance of `NotLosslessJsonError` or of a subclass, also one made
   * by another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'NotLosslessJsonError');
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
  // a string, a boolean or null is its own snapshot (anything else that is not an object
  // is checked, and refused with its path, below)
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value;
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
  // but the copy: the ancestors and the path are shared stacks indexed by depth (fresh
  // ones when a getter or proxy trap snapshots re-entrantly), and a refusal's path is
  // built from them only when one is thrown.
  const outer = sharedInUse;
  const st = outer ? newStacks() : shared;
  sharedInUse = true;
  st.hidden = ignoredHiddenKey;
  try {
    return template === undefined ? copy(value, st, 0) : visit(value, template, st, 0);
  } catch (err) {
    if (err instanceof Refusal) throw new NotLosslessJsonError(what, root + pathText(st.path, err.depth), err.reason);
    if (err instanceof NotLosslessJsonError) throw err;
    // a throwing getter or proxy trap, or a stack overflow
    throw new NotLosslessJsonError(what, root, `could not be read: ${errorText(err)}`);
  } finally {
    sharedInUse = outer;
    // Drop the references (the values are the caller's). The slots this call set are a
    // prefix (depth d is set only below depths 0..d-1), and the ones after it were
    // cleared by earlier calls.
    const ancestors = st.ancestors;
    if (!outer) for (let i = 0; i < ancestors.length && ancestors[i] !== undefined; i++) ancestors[i] = undefined as unknown as object;
  }
}

/** The stacks of one snapshot: the objects on the path being visited, and the keys leading to them. */
interface Stacks {
  /** `ancestors[i]` is the object at depth `i`. */
  readonly ancestors: object[];
  /** `path[i]` is the key (or array index) from depth `i` to depth `i + 1`. */
  readonly path: (string | number)[];
  hidden: string | undefined;
}

function newStacks(): Stacks {
  return { ancestors: [], path: [], hidden: undefined };
}

const shared: Stacks = newStacks();
/** Whether a snapshot is using {@link shared} (a re-entrant one takes its own). */
let sharedInUse = false;

/** A refusal of the value at `depth` (its path is read from the stacks). */
class Refusal {
  constructor(
    readonly reason: string,
    readonly depth: number,
  ) {}
}

/** `.a.b[0]` for the first `depth` keys of `path`. */
function pathText(path: readonly (string | number)[], depth: number): string {
  let out = '';
  for (let i = 0; i < depth; i++) {
    const k = path[i] as string | number;
    out += typeof k === 'number' ? `[${k}]` : `.${k}`;
  }
  return out;
}

/** Enters the object `v` at `depth`: refused when nested too deep or a cycle, else put on the ancestors' stack. */
function enter(v: object, st: Stacks, depth: number): void {
  if (depth >= MAX_JSON_DEPTH) throw new Refusal(`is nested deeper than ${MAX_JSON_DEPTH} levels`, depth);
  const ancestors = st.ancestors;
  for (let i = 0; i < depth; i++) if (ancestors[i] === v) throw new Refusal('is a cycle (it contains itself)', depth);
  ancestors[depth] = v;
}

/**
 * The keys of the non-array object `obj` at `depth` that JSON carries, in order: refused
 * unless it is a plain object whose own keys are all enumerable strings (the `hidden` one
 * aside). Reads no property value.
 */
function plainKeys(obj: object, st: Stacks, depth: number): string[] {
  const proto = Object.getPrototypeOf(obj) as object | null;
  if (proto !== Object.prototype && proto !== null) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
    throw new Refusal(`is a ${name} instance (only plain objects and arrays are JSON)`, depth);
  }
  // Names and symbols apart: both are far cheaper than Reflect.ownKeys on V8.
  let keys = Object.getOwnPropertyNames(obj);
  // The usual object: its own string keys are exactly what for-in yields (every one
  // enumerable, nothing inherited), so they are its enumerable keys in order, without an
  // `Object.keys` copy (for-in allocates nothing). Anything else takes `enumerableKeys`.
  let seen = 0;
  for (const k in obj) {
    if (keys[seen] !== k) {
      seen = -1;
      break;
    }
    seen++;
  }
  if (seen !== keys.length) keys = enumerableKeys(obj, keys, st.hidden, depth);
  const symbols = Object.getOwnPropertySymbols(obj);
  if (symbols.length > 0) throw new Refusal(symbolKeyReason(symbols[0] as symbol), depth);
  return keys;
}

/** {@link visit} without a template (every call's arguments and results): a fresh deep-frozen copy. */
function copy(v: unknown, st: Stacks, depth: number): JsonValue {
  if (typeof v !== 'object') return primitive(v, depth);
  if (v === null) return null;
  enter(v, st, depth);
  if (Array.isArray(v)) return visitArray(v, undefined, st, depth);
  const obj = v as Record<string, unknown>;
  const keys = plainKeys(obj, st, depth);
  const n = keys.length;
  const out: Record<string, JsonValue> = {};
  const path = st.path;
  for (let i = 0; i < n; i++) {
    const k = keys[i] as string;
    path[depth] = k;
    const raw = obj[k];
    // a string (the usual leaf) is its own snapshot: no call
    setKey(out, k, typeof raw === 'string' ? raw : copy(raw, st, depth + 1));
  }
  return Object.freeze(out);
}

function visit(v: unknown, t: JsonValue | undefined, st: Stacks, depth: number): JsonValue {
  if (typeof v !== 'object') return primitive(v, depth);
  if (v === null) return null;
  enter(v, st, depth);
  if (Array.isArray(v)) return visitArray(v, Array.isArray(t) ? (t as readonly JsonValue[]) : undefined, st, depth);
  const obj = v as Record<string, unknown>;
  const keys = plainKeys(obj, st, depth);
  const n = keys.length;
  // The template is reused whole while every key so far matched it (same key, same place);
  // a child is visited against the template's child of the same key wherever it is.
  const tobj = t !== null && typeof t === 'object' && !Array.isArray(t) ? (t as JsonObject) : undefined;
  let match = tobj !== undefined && sameKeys(tobj, keys);
  let out: Record<string, JsonValue> | undefined;
  const path = st.path;
  for (let i = 0; i < n; i++) {
    const k = keys[i] as string;
    // with matching keys, the template has k; otherwise look it up
    const tc = match ? (tobj as JsonObject)[k] : tobj !== undefined && Object.hasOwn(tobj, k) ? tobj[k] : undefined;
    path[depth] = k;
    const raw = obj[k];
    // a string (the usual leaf) is its own snapshot: no call
    const child = typeof raw === 'string' ? raw : tc === undefined ? copy(raw, st, depth + 1) : visit(raw, tc, st, depth + 1);
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

/**
 * Why a symbol key is refused: JSON would drop it silently. TypeBox (`@sinclair/typebox`)
 * marks every schema object with `Symbol(TypeBox.Kind)`, so its schemas meet this first:
 * the reason then says how to pass one.
 */
function symbolKeyReason(key: symbol): string {
  const reason = `has a symbol key ${String(key)} (JSON drops symbol keys)`;
  if (key.description?.startsWith('TypeBox.') !== true) return reason;
  return `${reason}; it is a TypeBox schema: pass its JSON, JSON.parse(JSON.stringify(schema)), which is the same schema without TypeBox's markers`;
}

/**
 * The enumerable own string keys of `obj` when they are not simply all of `names` (its own
 * string keys) in for-in order: a non-enumerable key is refused, except the `hidden` one,
 * which is left out; an enumerable key inherited from a (polluted) `Object.prototype` is
 * not the object's own and is ignored.
 */
function enumerableKeys(obj: object, names: string[], hidden: string | undefined, depth: number): string[] {
  const keys = Object.keys(obj);
  const n = keys.length;
  if (names.length !== n) {
    if (hidden !== undefined && names.includes(hidden) && !keys.includes(hidden)) names = names.filter((k) => k !== hidden);
    if (names.length !== n) {
      const odd = names.find((k) => !keys.includes(k));
      throw new Refusal(`has a non-enumerable property "${String(odd)}"`, depth);
    }
  }
  return keys;
}

/** A non-object value at `depth`: returned when JSON carries it unchanged, else refused. */
function primitive(v: unknown, depth: number): JsonValue {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (!Number.isFinite(v)) throw new Refusal(`is ${v} (JSON has no NaN or Infinity)`, depth);
      if (Object.is(v, -0)) throw new Refusal('is -0 (JSON turns it into 0)', depth);
      return v;
    case 'undefined':
      throw new Refusal('is undefined (JSON drops it)', depth);
    case 'bigint':
      throw new Refusal('is a bigint', depth);
    case 'symbol':
      throw new Refusal('is a symbol', depth);
    default:
      throw new Refusal('is a function', depth);
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

function visitArray(arr: unknown[], t: readonly JsonValue[] | undefined, st: Stacks, depth: number): JsonValue {
  if (Object.getPrototypeOf(arr) !== Array.prototype) throw new Refusal('is an array subclass', depth);
  const len = arr.length;
  const keys = Reflect.ownKeys(arr);
  // own keys of a dense plain array: the indices plus "length"
  if (keys.length !== len + 1) {
    for (let i = 0; i < len; i++) {
      if (!Object.hasOwn(arr, i)) throw new Refusal(`is a sparse array (index ${i} is a hole)`, depth);
    }
    throw new Refusal('is an array with extra properties', depth);
  }
  const tpl = t !== undefined && t.length === len ? t : undefined;
  let out: JsonValue[] | undefined;
  const path = st.path;
  for (let i = 0; i < len; i++) {
    path[depth] = i;
    const raw = arr[i];
    const child = typeof raw === 'string' ? raw : tpl === undefined ? copy(raw, st, depth + 1) : visit(raw, tpl[i], st, depth + 1);
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
