/**
 * A context's own locals beyond lookups: disposing the values it is the last holder of
 * (newest first; never a global, never an object `server.container` made, never one
 * another live context still holds, never one polestar already disposed), the rest of
 * its close, and the reads of its local store that no lookup needs.
 */
import type { ResourceEntry } from './resource-entry.js';
import type { SystemContext } from './system-context.js';
import type { Token } from './token.js';
import { disposeValue } from '../disposal/disposable.js';
import { throwCollected } from '../lifetime/errors.js';
import { settle, settlePending, start, thenRun } from '../lifetime/settle.js';

/**
 * @internal Disposes the disposable locals `ctx` is the last holder of, newest first.
 * Synchronous while their disposals are: returns `undefined` when all ran, else a
 * promise of the rest. Failures go to `errors`.
 */
export function disposeLocals(ctx: SystemContext, errors: unknown[]): Promise<void> | undefined {
  if (!ctx._mayOwn) return undefined;
  const entries = localEntries(ctx);
  return disposeLocalsFrom(ctx, entries, entries.length - 1, errors);
}

/**
 * @internal The rest of a context's close, after its finalizers: its locals (see
 * {@link disposeLocals}), then its inversify container. `undefined` when nothing was
 * left to await.
 */
export function closeContextRest(ctx: SystemContext, errors: unknown[]): Promise<void> | undefined {
  const locals = disposeLocals(ctx, errors);
  if (locals !== undefined || ctx._container !== undefined) return disposeContainer(ctx, locals, errors);
  return undefined;
}

async function disposeContainer(ctx: SystemContext, locals: Promise<void> | undefined, errors: unknown[]): Promise<void> {
  if (locals !== undefined) await locals;
  const cont = ctx._container;
  ctx._container = undefined;
  if (cont !== undefined) await settle(() => cont.unbindAllAsync(), errors);
}

/** @internal The own locals' entries of `ctx`, oldest first (a new array). */
export function localEntries(ctx: SystemContext): ResourceEntry[] {
  const out: ResourceEntry[] = ctx._e1 === undefined ? [] : [ctx._e1];
  if (ctx._locals !== undefined) for (const e of ctx._locals.values()) out.push(e);
  return out;
}

/** @internal How many own locals `ctx` holds. */
export function localCount(ctx: SystemContext): number {
  return (ctx._t1 === undefined ? 0 : 1) + (ctx._locals?.size ?? 0);
}

/** @internal Drops the own local of `t` from `ctx` (its slot or its map), disposing nothing. */
export function deleteLocal(ctx: SystemContext, t: Token): void {
  if (ctx._t1 === t) ctx._t1 = ctx._e1 = undefined;
  else ctx._locals?.delete(t);
}

function disposeLocalsFrom(ctx: SystemContext, entries: readonly ResourceEntry[], from: number, errors: unknown[]): Promise<void> | undefined {
  const server = ctx.server;
  for (let i = from; i >= 0; i--) {
    const e = entries[i] as ResourceEntry;
    if (!e.counted) continue;
    e.counted = false;
    const v = e.value as object;
    if (server._unhold(v) > 0 || server._isServerValue(v) || !server._claimDisposal(v)) continue;
    // A local whose disposal disposes the context holding it (an agent's handle held in
    // its own subtree) returns that context's memoized close: awaiting it would wait for itself.
    const pending = start(() => notOwnClose(ctx, disposeValue(v)), errors);
    if (pending !== undefined) return thenRun(settlePending(pending, errors), () => disposeLocalsFrom(ctx, entries, i - 1, errors));
  }
  return undefined;
}

function notOwnClose(ctx: SystemContext, r: unknown): unknown {
  return ctx._isCloseOfLine(r) ? undefined : r;
}

/**
 * @internal Removes the locals of `tokens` from `ctx` (newest first) and disposes each
 * value it was the last holder of (the rollback of `server._makeLocals`). Rejects with
 * the collected errors.
 */
export async function dropLocals(ctx: SystemContext, tokens: readonly Token[]): Promise<void> {
  const errors: unknown[] = [];
  const server = ctx.server;
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i] as Token;
    const e = ctx._local(t);
    if (e === undefined) continue;
    deleteLocal(ctx, t);
    if (!e.counted) continue;
    e.counted = false;
    const v = e.value as object;
    if (server._unhold(v) > 0 || server._isServerValue(v) || !server._claimDisposal(v)) continue;
    await settle(() => disposeValue(v), errors);
  }
  throwCollected(errors, `the locals made for the ${ctx.describe()}`);
}
