/**
 * Owner-final protection: after the `prompt/assemble` waterfall, each protected name is
 * restored to its canonical definition and presence.
 */
import { readField } from '../util/read-field.js';

interface Named {
  name: string;
}

/** The `name` of a listener's entry; an entry whose name can not be read has none, so it is kept as an unprotected one. */
function nameOf(x: unknown): unknown {
  if (x === null || typeof x !== 'object') return undefined;
  try {
    return readField(x, 'name', 'prompt/assemble');
  } catch {
    return undefined;
  }
}

/**
 * @internal Removes every entry of `list` whose name is protected, then reinserts each
 * protected canonical entry (in canonical order) immediately before the first later
 * unprotected canonical entry that survived in the list, or at the end when none did.
 * A protected name absent from the canonical assembly ends up absent. Unprotected
 * entries keep the order and definitions the listeners gave them.
 */
export function restoreProtected<T extends Named>(list: readonly unknown[], canonical: readonly T[], protectedNames: ReadonlySet<string>, copy: (entry: T) => T): unknown[] {
  if (protectedNames.size === 0) return [...list];
  const out = list.filter((x) => {
    const n = nameOf(x);
    return typeof n !== 'string' || !protectedNames.has(n);
  });
  for (let i = 0; i < canonical.length; i++) {
    const c = canonical[i];
    if (!protectedNames.has(c.name)) continue;
    let at = -1;
    for (let j = i + 1; j < canonical.length && at < 0; j++) {
      const next = canonical[j].name;
      if (protectedNames.has(next)) continue;
      at = out.findIndex((x) => nameOf(x) === next);
    }
    if (at >= 0) out.splice(at, 0, copy(c));
    else out.push(copy(c));
  }
  return out;
}
