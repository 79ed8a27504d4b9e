/**
 * The guard phase of a call: the `tools/pre-execute` waterfall (allow / deny / ask), the
 * `Approval` an `ask` consults, then the guards (global, then the scope's). Its answer is
 * a denial reason or nothing.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { isThenable } from '../events/bus.js';
import { Approval } from './approval.js';
import type { CallState } from './execution.js';
import type { ToolRegistry } from './registry.js';
import type { ToolExecution } from './types.js';
import { errorText } from '../util/error-text.js';
import { readFieldOrUndefined } from '../util/read-field.js';

/** @internal Whether `tools/pre-execute` listeners or guards apply to a call in `scope`. */
export function hasPolicy(reg: ToolRegistry, scope: object | undefined): boolean {
  const guards = reg.guards;
  return reg.bus.hasListeners('tools/pre-execute', scope) || guards.global.length > 0 || (scope !== undefined && guards.has(scope));
}

/** @internal The pre-execute waterfall, approval and guards; returns a denial reason or `undefined` (also when aborted meanwhile). */
export async function authorize(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: ToolExecution): Promise<string | undefined> {
  const scope = execution.scope;
  if (reg.bus.hasListeners('tools/pre-execute', scope)) {
    let decision: unknown;
    try {
      decision = await reg.bus.waterfall(scope, 'tools/pre-execute', Object.freeze({ kind: 'allow' }), [execution, ctx]);
    } catch (err) {
      return `a tools/pre-execute listener failed: ${errorText(err)}`;
    }
    if (state.aborted) return undefined;
    const kind = readKind(decision);
    if (kind === 'deny') return readReason(decision) ?? 'denied by a tools/pre-execute listener';
    if (kind === 'ask') {
      const reason = readReason(decision);
      const denied = await ask(ctx, state, execution, reason);
      if (denied !== undefined || state.aborted) return denied;
    } else if (kind !== 'allow') {
      return `malformed tools/pre-execute decision: ${describeValue(decision)}`;
    }
  }
  const guards = reg.guards;
  const globals = guards.global;
  const scoped = scope === undefined ? undefined : guards.of(scope);
  for (const list of [globals, scoped]) {
    if (list === undefined) continue;
    for (const g of list) {
      if (state.aborted) return undefined;
      let r: unknown;
      try {
        r = g.fn(execution, ctx);
        if (isThenable(r)) r = await r;
      } catch (err) {
        return `a guard failed: ${errorText(err)}`;
      }
      if (r === undefined) continue;
      if (typeof r === 'string' && r.length > 0) return r;
      return `a guard returned ${describeValue(r)} (a guard returns a denial string or undefined)`;
    }
  }
  return undefined;
}

/**
 * The `Approval` that decides a call in `scope`: `Res(Approval)` from the
 * scope's own context, or the global one for the global layer; never the calling view's.
 */
function approvalFor(ctx: SystemContext, scope: object | undefined): { approval: unknown } | string {
  const server = ctx.server;
  if (scope === undefined) return { approval: server.hasGlobal(Approval) ? server.getGlobal(Approval) : undefined };
  const owner = server._scopeCtx(scope);
  if (owner === undefined) return "the scope's context is being disposed";
  return { approval: owner.tryGet(Approval) };
}

/** Asks the scope's `Approval` about a call a `tools/pre-execute` listener asked about; a denial reason, or `undefined` when approved (or aborted meanwhile). */
async function ask(ctx: SystemContext, state: CallState, execution: ToolExecution, reason: string | undefined): Promise<string | undefined> {
  const why = reason === undefined ? '' : `: ${reason}`;
  let approval: unknown;
  try {
    const found = approvalFor(ctx, execution.scope);
    if (typeof found === 'string') return `approval required${why}, but ${found}`;
    approval = found.approval;
  } catch (err) {
    return `approval required${why}, but the Approval could not be resolved: ${errorText(err)}`;
  }
  if (approval === undefined) return `approval required${why}, but no Approval is installed`;
  let approve: unknown;
  try {
    approve = (approval as { approve?: unknown }).approve;
  } catch (err) {
    return `approval required${why}, but reading the Approval's approve() threw: ${errorText(err)}`;
  }
  if (typeof approve !== 'function') return `approval required${why}, but the installed Approval has no approve() method`;
  if (state.aborted) return undefined;
  let granted: unknown;
  try {
    granted = approve.call(approval, execution, reason, ctx);
    if (isThenable(granted)) granted = await granted;
  } catch (err) {
    return `approval required${why}, but approve() failed: ${errorText(err)}`;
  }
  return granted === true ? undefined : `not approved${why}`;
}

/** @internal The `kind` of a listener's decision, `undefined` when it is no object or reading it throws. */
export function readKind(decision: unknown): unknown {
  return decision !== null && typeof decision === 'object' ? readFieldOrUndefined(decision, 'kind') : undefined;
}

/** @internal The non-empty `reason` of a listener's decision, else `undefined`. */
export function readReason(decision: unknown): string | undefined {
  const r = readFieldOrUndefined(decision, 'reason');
  return typeof r === 'string' && r.length > 0 ? r : undefined;
}
