/**
 * `@globalResource()` / `@localResource()`: optional class markers that fix the role a
 * class may play. Unmarked classes and `token()`s may be used in either role.
 */
import { nameOf, type Token } from './token.js';

/** The role fixed by a marker. */
export type ResourceRole = 'global' | 'local';

const roles = new WeakMap<object, ResourceRole>();
/**
 * @internal Whether any class was ever marked `@globalResource()`: until one is, no token
 * can be global-marked, so hot paths (`ctx.insert`) skip the marker lookup.
 */
export let anyGlobalMarked = false;
/** Memo of {@link roleOf} per class (`null` = unmarked); reset whenever a class is marked. */
let resolved = new WeakMap<object, ResourceRole | null>();

/**
 * Marks a class as a global resource: it can only be inserted with
 * `server.insertGlobal`, and `ResMut` / `getMut` of it are refused.
 */
export function globalResource(): <C extends abstract new (...args: any[]) => unknown>(target: C) => void {
  return (target) => {
    roles.set(target, 'global');
    anyGlobalMarked = true;
    resolved = new WeakMap();
  };
}

/**
 * Marks a class as a local resource: it can be inserted into contexts and registered
 * with `server.registerLocal`, but never inserted as a global.
 */
export function localResource(): <C extends abstract new (...args: any[]) => unknown>(target: C) => void {
  return (target) => {
    roles.set(target, 'local');
    resolved = new WeakMap();
  };
}

/** The marker of a token, walking up the class hierarchy; `undefined` when unmarked. */
export function roleOf(t: Token): ResourceRole | undefined {
  if (typeof t !== 'function') return undefined;
  const memo = resolved.get(t);
  if (memo !== undefined) return memo ?? undefined;
  let found: ResourceRole | null = null;
  for (let c: unknown = t; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
    const r = roles.get(c);
    if (r) {
      found = r;
      break;
    }
  }
  resolved.set(t, found);
  return found ?? undefined;
}

/** @internal Refuses a global-marked class where a local is being set. */
export function assertMayBeLocal(t: Token, call: string): void {
  if (roleOf(t) === 'global') {
    const n = nameOf(t);
    throw new TypeError(
      `${call}: ${n} is marked @globalResource() and can not be a context local. ` +
        `Insert it with server.insertGlobal(${n}, value) and read it with Res(${n}) / ctx.get(${n}).`,
    );
  }
}

/** @internal Refuses a local-marked class where a global is being set. */
export function assertMayBeGlobal(t: Token, call: string): void {
  if (roleOf(t) === 'local') {
    const n = nameOf(t);
    throw new TypeError(
      `${call}: ${n} is marked @localResource() and can not be a global. ` +
        `Use server.registerLocal(${n}) for a per-context instance, or ctx.insert(value).`,
    );
  }
}

/** @internal Refuses mutable access to a global-marked class. */
export function assertMayBeMutated(t: Token, call: string): void {
  if (roleOf(t) === 'global') {
    const n = nameOf(t);
    throw new TypeError(
      `${call}: ${n} is marked @globalResource(); globals are read-only through contexts. ` +
        `Use Res(${n}) / @res(${n}) / ctx.get(${n}) to read it.`,
    );
  }
}
