/**
 * Where converters keep what polestar does not model: `message.meta[<provider key>]`, a
 * JSON object written by a provider's `from…` and read back only by the same provider's
 * `to…` (other keys of `meta`, and other providers' keys, are left alone).
 */
import type { ChatMessage } from '../../conversation/chat-message.js';
import type { JsonObject, JsonValue } from '../../util/lossless-json.js';

/** @internal The `meta` keys the converters own. */
export type ProviderKey = 'openaiChat' | 'openaiResponses' | 'anthropic' | 'aiSdk';

/** @internal A plain object, as read from JSON. */
export type Obj = Record<string, unknown>;

/** @internal Whether `v` is a non-null, non-array object. */
export function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** @internal The provider's residual of a message, `{}` when it has none. */
export function residualOf(message: ChatMessage, key: ProviderKey): Obj {
  const meta = message.meta;
  if (!isObj(meta)) return {};
  const r = (meta as JsonObject)[key];
  return isObj(r) ? r : {};
}

/** @internal `meta` for a message made by `from…`: only when there is a residual. */
export function metaWith(key: ProviderKey, residual: Obj): { meta?: JsonValue } {
  return Object.keys(residual).length === 0 ? {} : { meta: { [key]: withoutUndefined(residual) as JsonValue } };
}

/**
 * @internal A copy of plain data without its `undefined` object properties (as
 * `JSON.stringify` would write it); anything else is left for the JSON check to judge.
 */
export function withoutUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutUndefined);
  if (!isObj(v) || Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x === undefined) continue;
    if (k === '__proto__') Object.defineProperty(out, k, { value: withoutUndefined(x), enumerable: true, writable: true, configurable: true });
    else out[k] = withoutUndefined(x);
  }
  return out;
}

/**
 * @internal The own enumerable properties of `obj` other than `consumed`, leaving out
 * those whose value is `undefined` (JSON has none).
 */
export function extrasOf(obj: Obj, consumed: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of Object.keys(obj)) {
    if (consumed.includes(k)) continue;
    const v = obj[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * @internal `base` (leaving out its `undefined` properties) plus those `extras` it does not
 * name: an extra never replaces nor revives a property polestar wrote or left out.
 */
export function withExtras<T extends object>(base: T, extras: unknown): T {
  const out: Obj = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
  if (isObj(extras)) for (const [k, v] of Object.entries(extras)) if (!(k in base)) out[k] = v;
  return out as T;
}

/** @internal Deep equality of plain JSON-like data (`undefined` properties count as absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Obj)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Obj)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Obj)[k], (b as Obj)[k]));
}

/** @internal Reads `obj[key]` as a non-empty string, or `undefined`. */
export function str(obj: Obj, key: string): string | undefined {
  const v = obj[key];
  return typeof v === 'string' ? v : undefined;
}
