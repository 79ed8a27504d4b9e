/**
 * The reserved event namespaces. Each built-in feature reserves its own prefixes (the tools
 * feature `tools/` and `tool/`, the prompts feature `prompt/` and `prompts/`, and so on)
 * with {@link reserveEventNames} when its module loads: names under a reserved prefix
 * (ignoring case, with `.` and `:` read as `/`) hold exactly the feature's built-in events,
 * spelled exactly. This module knows no feature.
 */

/** @internal Every built-in event name, spelled exactly, in the order the features reserved them. */
export const BUILTIN_EVENTS: ReadonlySet<string> = new Set<string>();
/** The built-in names, writable here only. */
const builtins = BUILTIN_EVENTS as Set<string>;

/** The reserved prefixes (`tools/`, …), in the order the features reserved them. */
const reservedPrefixes: string[] = [];
/** The reserved prefixes without their separator. */
const reservedHeads = new Set<string>();
/** The longest reserved head (`sessions`): a separator further in can not end a reserved head. */
let longestHead = 0;
/** Bit `c - 'a'` is set when a reserved head starts with the letter `c`. */
let firstLetters = 0;

/** A reserved prefix: a lower-case ASCII head (letters, digits, `-`, `_`; a letter first) and `/`. */
const PREFIX = /^[a-z][a-z0-9_-]*\/$/;

/**
 * @internal Reserves a feature's event namespace: every name under one of `prefixes` must
 * be one of `names`, spelled exactly; any other is refused with the closest reserved name
 * suggested. A feature calls it once, when its module loads (calling it again with the same
 * prefixes and names changes nothing).
 *
 * @param prefixes - the feature's prefixes, each a lower-case head and `/` (`'tools/'`).
 * @param names - the feature's built-in events, each under one of `prefixes`.
 * @throws TypeError for a malformed prefix or a name under none of `prefixes`.
 */
export function reserveEventNames(prefixes: readonly string[], names: readonly string[]): void {
  for (const p of prefixes) {
    if (typeof p !== 'string' || !PREFIX.test(p)) {
      throw new TypeError(`reserveEventNames(): the prefix ${JSON.stringify(p)} is malformed; pass a lower-case head and a slash, such as "tools/".`);
    }
  }
  for (const n of names) {
    if (typeof n !== 'string' || !prefixes.some((p) => n.startsWith(p) && n.length > p.length)) {
      throw new TypeError(`reserveEventNames(): the event ${JSON.stringify(n)} is under none of the prefixes ${prefixes.join(', ')}; reserve the prefix it is under with it.`);
    }
  }
  for (const p of prefixes) {
    if (reservedPrefixes.includes(p)) continue;
    reservedPrefixes.push(p);
    const head = p.slice(0, -1);
    reservedHeads.add(head);
    longestHead = Math.max(longestHead, head.length);
    firstLetters |= 1 << (head.charCodeAt(0) - 0x61);
  }
  for (const n of names) builtins.add(n);
}

/**
 * Whether `name` is under a reserved prefix: its text before the first `/`, `.` or `:`
 * is, ignoring case, one of the reserved heads. Allocation-free for almost every name
 * outside them (a first letter no reserved head starts with answers at once), since `emit`
 * of a name nobody listens to runs it.
 */
function underReservedPrefix(name: string): boolean {
  // ASCII lower-case of the first character (non-letters never match below)
  const first = (name.charCodeAt(0) | 0x20) - 0x61;
  if (first < 0 || first > 25 || ((firstLetters >>> first) & 1) === 0) return false;
  const end = Math.min(name.length, longestHead + 1);
  for (let i = 1; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2f || c === 0x2e || c === 0x3a) return reservedHeads.has(name.slice(0, i).toLowerCase());
  }
  return false;
}

/** `name` lower-cased with `.` and `:` read as `/` (for the suggestion only). */
function normalize(name: string): string {
  return name.toLowerCase().replace(/[.:]/g, '/');
}

/**
 * @internal The refusal for `name`, or `undefined` when it may be used: a built-in name, or
 * any name outside the reserved prefixes. `where` names the call for the message.
 */
export function reservedNameError(name: string, where: string): TypeError | undefined {
  if (builtins.has(name) || !underReservedPrefix(name)) return undefined;
  const n = normalize(name);
  return new TypeError(
    `unknown event "${name}"; did you mean "${closest(n)}"? (${where}: the prefixes ${reservedPrefixes.join(', ')} are reserved for polestar's ` +
      `built-in events, spelled exactly; name your own events outside them and type them by adding them to EventMap.)`,
  );
}

/** The built-in event nearest to the normalized name `n` (edit distance, then reservation order). */
function closest(n: string): string {
  let best = '';
  let bestDistance = Infinity;
  for (const b of builtins) {
    const d = distance(n, b);
    if (d < bestDistance) {
      best = b;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance (two rows). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1));
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}
