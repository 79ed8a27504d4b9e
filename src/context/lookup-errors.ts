/**
 * The errors of a context lookup that missed or conflicted, each naming the token, the
 * context and the fix. Built on the failing path only.
 */
import { ParamError } from './errors.js';
import { assertMayBeMutated } from './markers.js';
import { providerOf } from './provider-hints.js';
import type { ResourceEntry } from './resource-entry.js';
import type { Server } from './server.js';
import type { SystemContext } from './system-context.js';
import { assertToken, describeValue, errorText, nameOf, type Token } from './token.js';

/**
 * The error for a `Res` miss from `ctx`: `ResourceOutOfScope` when a parent filter on
 * the walk blocked the token and an ancestor above that filter holds it, else
 * `ResourceNotFound`.
 */
export function missingError(ctx: SystemContext, t: Token): ParamError {
  for (let c: SystemContext | undefined = ctx; c !== undefined; c = c.parent) {
    const f = c._filter;
    if (f === undefined || f.allows(t)) continue;
    for (let a = c.parent; a !== undefined; a = a.parent) {
      if (a._local(t) !== undefined) {
        const here = c === ctx ? `this ${ctx.describe()}` : `the ${c.describe()} above this ${ctx.describe()}`;
        return new ParamError(
          'ResourceOutOfScope',
          t,
          `the ${a.describe()} holds it, but the parent filter ${String(f)} on ${here} blocks it (and no global has it); ` +
            `to let it through, ${f._fix(t)}, or insert it into a context below the filter or as a global`,
        );
      }
    }
    break;
  }
  return new ParamError('ResourceNotFound', t, notFoundHint(t, ctx));
}

export function safeName(t: unknown): string {
  return typeof t === 'function' || typeof t === 'symbol' ? nameOf(t as Token) : describeValue(t);
}

export function readConflict(t: Token, ctx: SystemContext): ParamError {
  return new ParamError(
    'BorrowConflict',
    t,
    `a running system holds ResMut<${nameOf(t)}> seen from this ${ctx.describe()}; Res can not read it until that system settles`,
  );
}

export function writeConflict(t: Token, ctx: SystemContext, e: ResourceEntry): ParamError {
  const held = e.writing ? `a running system holds ResMut<${nameOf(t)}>` : `${e.reads} running system(s) hold Res<${nameOf(t)}>`;
  return new ParamError('BorrowConflict', t, `${held} on this ${ctx.describe()}; ResMut needs it unborrowed`);
}

/** The marker rule, checked on a miss only: a global-marked class is never a local. */
export function mutMarkerCheck(t: Token, call: string): void {
  assertMayBeMutated(t, `${call}(${nameOf(t)})`);
}

/** The error for a `ResMut` miss: a bad token or the marker rule throw first, else where the token was found. */
export function mutMissError(t: Token, ctx: SystemContext, call: string): ParamError {
  assertToken(t, `${call}(token)`);
  mutMarkerCheck(t, call);
  return new ParamError('ResourceNotFound', t, mutHint(t, ctx));
}

/** The error of `insert` refusing a value whose `Symbol.asyncDispose` / `Symbol.dispose` lookup threw (nothing was stored). */
export function disposeLookupError(call: string, t: Token, ctx: SystemContext, value: unknown, err: unknown): TypeError {
  return new TypeError(
    `${call}(${nameOf(t)}) on a ${ctx.describe()}: looking up Symbol.asyncDispose / Symbol.dispose on ${describeValue(value)} ` +
      `threw (${errorText(err)}), so polestar can not tell whether the context must dispose it; nothing was stored. ` +
      `Insert an object you control that wraps it.`,
    { cause: err },
  );
}

export function mutHint(t: Token, ctx: SystemContext): string {
  let c = ctx.parent;
  while (c !== undefined) {
    if (c._local(t) !== undefined) {
      return `found in an ancestor ${c.describe()}, but ResMut never walks up: it only sees the locals of this ${ctx.describe()}; ` +
        `insert one here with ctx.insert(...), read it with Res / ctx.get, or run the system on the context that owns it`;
    }
    c = c.parent;
  }
  if (ctx.server._globals.has(t) || ctx.server._containerHas(t)) {
    return `found as a global, but ResMut never walks up to globals: globals are read-only through contexts; ` +
      `read it with Res / ctx.get, or insert a local copy into this ${ctx.describe()}`;
  }
  return `not in the locals of this ${ctx.describe()}; ResMut never walks up. Insert it with ctx.insert(...) first`;
}

function notFoundHint(t: Token, ctx: SystemContext): string {
  return `looked in the locals of this ${ctx.describe()}, its ${ctx.depth} ancestor(s) and the globals; ` +
    (subclassGlobalHint(t, ctx.server) ?? providerOf(t) ?? `insert it with ctx.insert(...), server.insertGlobal(...), server.registerLocal(...), or bind it in server.container`);
}

/**
 * Built on a miss only: when `t` is a class and a global is stored under a subclass of it
 * (a value global is stored under its own class: `globals: [new FakeLibrary()]` is
 * `FakeLibrary`'s, not `ToolLibrary`'s), says so and how to store it under `t`.
 */
function subclassGlobalHint(t: Token, server: Server): string | undefined {
  if (typeof t !== 'function') return undefined;
  let base: unknown;
  try {
    base = t.prototype;
  } catch {
    return undefined;
  }
  if (typeof base !== 'object' || base === null) return undefined;
  const found: string[] = [];
  for (const key of server._globals.keys()) {
    if (typeof key !== 'function' || key === t) continue;
    let proto: unknown;
    try {
      proto = key.prototype;
    } catch {
      continue;
    }
    if (typeof proto === 'object' && proto !== null && Object.prototype.isPrototypeOf.call(base, proto)) found.push(nameOf(key));
  }
  if (found.length === 0) return undefined;
  const name = nameOf(t);
  const which = found.length === 1 ? `a global ${found[0]} (extends ${name}) is registered` : `globals ${found.join(', ')} (each extends ${name}) are registered`;
  return `${which}: pass [${name}, value] to provide it as ${name} (a value global is stored under its own class), ` +
    `e.g. globals: [[${name}, new ${found[0]}()]] or server.insertGlobal(${name}, value)`;
}
