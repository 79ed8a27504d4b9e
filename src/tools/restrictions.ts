/**
 * Restrictions: what a scope's `Tools.restrict({ allow, deny })` masks of the global
 * layer, read from the caller's lists and applied when a scope's tools are resolved.
 */
import { describeValue } from '../context/token.js';

/** @internal One restriction of a scope. */
export interface RestrictionRecord {
  readonly allow: ReadonlySet<string> | undefined;
  readonly deny: ReadonlySet<string> | undefined;
}

/** @internal Whether global tool `name` passes every restriction of a scope (`undefined`: none). */
export function passes(name: string, restrictions: readonly RestrictionRecord[] | undefined): boolean {
  if (restrictions === undefined) return true;
  for (const r of restrictions) {
    if (r.allow !== undefined && !r.allow.has(name)) return false;
    if (r.deny !== undefined && r.deny.has(name)) return false;
  }
  return true;
}

/** @internal A copy of a `Tools.restrict()` name list (`undefined` when omitted); throws a TypeError for anything but an array of strings. */
export function copyNames(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new TypeError(`Tools.restrict(): ${field} must be an array of tool names, got ${describeValue(value)}.`);
  const out = Array.from(value as unknown[]);
  for (const n of out) {
    if (typeof n !== 'string') throw new TypeError(`Tools.restrict(): ${field} must contain tool names (strings), got ${describeValue(n)}.`);
  }
  return out as string[];
}
