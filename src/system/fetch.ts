/**
 * Parameter fetchers: built once when a system is defined, called on every run.
 *
 * A fetcher reads one parameter's value from a context and records the entry it
 * borrowed in `held[i]` so the run can release it. Borrow state lives on the
 * `ResourceEntry` (`reads`, `writing`).
 */
import type { ResourceEntry } from '../context/resource-entry.js';
import type { SystemContext } from '../context/system-context.js';
import type { Param } from './params.js';

/** @internal Borrowed entries of one run, indexed by parameter. */
export type Held = (ResourceEntry | undefined)[];

/** @internal Fetches one parameter, recording a borrow in `held`. */
export type Fetcher = (ctx: SystemContext, held: Held) => unknown;

/** @internal Builds the fetcher of parameter `i`. */
export function makeFetcher(p: Param, i: number): Fetcher {
  const t = p.token;
  switch (p.access) {
    case 'read':
      // Res: the nearest entry decides. A write-borrowed nearest entry is a conflict,
      // never skipped in favour of an ancestor's value (ctx.get throws it).
      return p.optional
        ? (ctx, held) => {
            const e = ctx._findEntry(t);
            if (e === undefined || e.writing) return ctx.tryGet(t);
            e.reads++;
            held[i] = e;
            return e.view === undefined ? e.value : ctx._valueOf(e, t);
          }
        : (ctx, held) => {
            const e = ctx._findEntry(t);
            if (e === undefined || e.writing) return ctx.get(t);
            e.reads++;
            held[i] = e;
            return e.view === undefined ? e.value : ctx._valueOf(e, t);
          };
    case 'write':
      // ResMut: own locals only; any borrow on the entry is a conflict (ctx.getMut
      // throws it, and builds the not-found error with its hint).
      return (ctx, held) => {
        const e = ctx._locals?.get(t);
        if (e === undefined || e.writing || e.reads > 0) return ctx.getMut(t);
        e.writing = true;
        held[i] = e;
        return e.value;
      };
    case 'output':
      return p.optional ? (ctx) => ctx.outputs.tryGet(t) : (ctx) => ctx.outputs.get(t);
  }
}

/** @internal Releases every borrow recorded in `held`. */
export function release(held: Held, writes: readonly boolean[]): void {
  for (let i = 0; i < held.length; i++) {
    const e = held[i];
    if (e === undefined) continue;
    if (writes[i]) e.writing = false;
    else e.reads--;
    held[i] = undefined;
  }
}
