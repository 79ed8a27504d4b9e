/**
 * validate(system, ctx): every parameter the context can not provide, at once.
 */
import type { SystemContext } from '../context/system-context.js';
import type { Token } from '../context/token.js';
import type { ParamAccess } from './params.js';
import { asSystem, type AnySystem, type SystemFn } from './system.js';

/** A parameter `validate` found missing. */
export interface MissingParam {
  /** The token that is missing. */
  readonly token: Token;
  /** `read`: not reachable through `Res`; `write`: not an own local; `output`: not in `ctx.outputs`. */
  readonly access: ParamAccess;
}

/**
 * Returns every required parameter of `system` that `ctx` can not provide, in
 * declaration order (empty when it could run). Optional parameters are never missing.
 * Borrows are not checked: they depend on what else is running.
 */
export function validate(system: AnySystem | SystemFn, ctx: SystemContext): MissingParam[] {
  const sys = asSystem(system, 'validate(system, ctx)');
  ctx._live('validate()');
  const missing: MissingParam[] = [];
  for (const p of sys.params) {
    if (p.optional) continue;
    const ok = p.access === 'read' ? ctx.has(p.token) : p.access === 'write' ? ctx.hasLocal(p.token) : ctx.outputs.has(p.token);
    if (!ok) missing.push({ token: p.token, access: p.access });
  }
  return missing;
}
