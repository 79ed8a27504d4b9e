/**
 * Parameter fetchers: built once when a system is defined, called on every run.
 *
 * A fetcher reads one parameter's value from a context and records the entry it
 * borrowed in `held[i]` so the run can release it (the `'fail'` rule: a
 * conflicting borrow fails at once). A resolver does the first half of a waiting run:
 * it finds the entry a parameter needs without taking or checking borrows.
 */
import type { ResourceEntry } from '../context/resource-entry.js';
import type { SystemContext } from '../context/system-context.js';
import { failConflict, type Held } from './borrows.js';
import type { Param } from './params.js';

export type { Held } from './borrows.js';

/** @internal Fetches one parameter, recording a borrow in `held`. */
export type Fetcher = (ctx: SystemContext, held: Held) => unknown;

/** @internal Builds the fetcher of parameter `i`. */
export function makeFetcher(p: Param, i: number): Fetcher {
  const t = p.token;
  switch (p.access) {
    case 'read':
      // Res: the nearest entry decides. A write-borrowed nearest entry is a conflict,
      // never skipped in favour of an ancestor's value.
      return p.optional
        ? (ctx, held) => {
            const e = ctx._findEntry(t);
            if (e === undefined) return ctx.tryGet(t);
            if (e.writing) throw failConflict(t, ctx, e, false);
            e.reads++;
            held[i] = e;
            return e.view === undefined ? e.value : ctx._valueOf(e, t);
          }
        : (ctx, held) => {
            const e = ctx._findEntry(t);
            if (e === undefined) return ctx.get(t);
            if (e.writing) throw failConflict(t, ctx, e, false);
            e.reads++;
            held[i] = e;
            return e.view === undefined ? e.value : ctx._valueOf(e, t);
          };
    case 'write':
      // ResMut: own locals only; any borrow on the entry is a conflict (ctx.getMut
      // builds the not-found error with its hint).
      return (ctx, held) => {
        const e = ctx._local(t);
        if (e === undefined) return ctx.getMut(t);
        if (e.writing || e.reads > 0) throw failConflict(t, ctx, e, true);
        e.writing = true;
        held[i] = e;
        return e.value;
      };
    case 'output':
      return p.optional ? (ctx) => ctx.outputs.tryGet(t) : (ctx) => ctx.outputs.get(t);
  }
}

/**
 * @internal What a waiting run needs of one parameter: the entry to borrow, or (for a
 * container-made global, an output, an optional miss) the value itself.
 */
export type Resolved = { readonly entry: ResourceEntry; readonly value?: undefined } | { readonly entry: undefined; readonly value: unknown };

/**
 * @internal The entry parameter `p` resolves to on `ctx`, found by the same rules as a
 * fetch but ignoring borrows; a missing parameter throws as a fetch would.
 */
export function resolveParam(p: Param, ctx: SystemContext): Resolved {
  const t = p.token;
  switch (p.access) {
    case 'read': {
      const e = ctx._findEntry(t);
      if (e !== undefined) return { entry: e };
      return { entry: undefined, value: p.optional ? ctx.tryGet(t) : ctx.get(t) };
    }
    case 'write': {
      const e = ctx._local(t);
      if (e !== undefined) return { entry: e };
      return { entry: undefined, value: ctx.getMut(t) }; // throws the not-found error with its hint
    }
    case 'output':
      return { entry: undefined, value: p.optional ? ctx.outputs.tryGet(t) : ctx.outputs.get(t) };
  }
}

/** @internal Whether `e` is still what parameter `p` resolves to on `ctx` (nothing was inserted, removed or shadowed meanwhile). */
export function stillResolves(p: Param, ctx: SystemContext, e: ResourceEntry): boolean {
  return (p.access === 'write' ? ctx._local(p.token) : ctx._findEntry(p.token)) === e;
}

/** @internal The value of a borrowed entry as parameter `p` sees it on `ctx`. */
export function valueOf(p: Param, ctx: SystemContext, e: ResourceEntry): unknown {
  return e.view === undefined ? e.value : ctx._valueOf(e, p.token);
}
