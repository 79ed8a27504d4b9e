/**
 * The reserved event namespaces: names under `tools/`, `tool/`, `prompt/`,
 * `prompts/`, `agent/`, `agents/`, `session/` and `sessions/` (ignoring case, with `.` and
 * `:` read as `/`) hold exactly the built-in events, spelled exactly.
 */

/** @internal Every built-in event name, spelled exactly. */
export const BUILTIN_EVENTS: ReadonlySet<string> = new Set([
  'tools/pre-execute',
  'tools/execute',
  'tools/post-execute',
  'tools/result',
  'prompt/assemble',
  'agent/created',
  'agent/disposed',
  'session/created',
  'session/resumed',
  'session/turn-committed',
  'session/rolled-back',
  'session/lease-lost',
  'session/disposed',
]);

const RESERVED_PREFIXES = ['tools/', 'tool/', 'prompt/', 'prompts/', 'agent/', 'agents/', 'session/', 'sessions/'] as const;
/** The reserved prefixes without their separator. */
const RESERVED_HEADS: ReadonlySet<string> = new Set(RESERVED_PREFIXES.map((p) => p.slice(0, -1)));
/** The longest head (`sessions`): a separator further in can not end a reserved head. */
const LONGEST_HEAD = Math.max(...[...RESERVED_HEADS].map((h) => h.length));

/**
 * Whether `name` is under a reserved prefix: its text before the first `/`, `.` or `:`
 * is, ignoring case, one of the reserved heads. Allocation-free for almost every name
 * outside them (a first letter other than t, p, a, s answers at once), since `emit` of a
 * name nobody listens to runs it.
 */
function underReservedPrefix(name: string): boolean {
  // ASCII lower-case of the first character (non-letters never match below)
  const first = name.charCodeAt(0) | 0x20;
  if (first !== 0x74 && first !== 0x70 && first !== 0x61 && first !== 0x73) return false;
  const end = Math.min(name.length, LONGEST_HEAD + 1);
  for (let i = 1; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2f || c === 0x2e || c === 0x3a) return RESERVED_HEADS.has(name.slice(0, i).toLowerCase());
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
  if (BUILTIN_EVENTS.has(name) || !underReservedPrefix(name)) return undefined;
  const n = normalize(name);
  return new TypeError(
    `unknown event "${name}"; did you mean "${closest(n)}"? (${where}: the prefixes ${RESERVED_PREFIXES.join(', ')} are reserved for polestar's ` +
      `built-in events, spelled exactly; name your own events outside them and type them by adding them to EventMap.)`,
  );
}

/** The built-in event nearest to the normalized name `n` (edit distance, then catalog order). */
function closest(n: string): string {
  let best = '';
  let bestDistance = Infinity;
  for (const b of BUILTIN_EVENTS) {
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
