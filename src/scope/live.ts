/**
 * The rule for an explicit `scope` argument, shared by every registry that takes
 * one (`Tools` reads and `execute`, `Prompts.assemble`): the key must be the view's own
 * scope or a *live* scope key (made by `createScope`, disposal not started). Anything
 * else — a forged `{}`, the key of a disposed agent — is refused instead of being read as
 * the bare global layer.
 */
import type { SystemContext } from '../context/system-context.js';
import { scopeLabel } from '../util/scope-label.js';

/**
 * @internal Whether a view bound to `ctx` may read the explicit scope key `scope`: it is
 * the view's own scope (whatever that scope's liveness: the view's own rules apply), or
 * it is live on the view's server (`server._scopeCtx`, which forgets a key the moment its
 * scope's disposal starts).
 */
export function isReadableScope(ctx: SystemContext, scope: object): boolean {
  return scope === ctx._scopeKey || ctx.server._scopeCtx(scope) !== undefined;
}

/**
 * @internal Throws the `TypeError` of a read given a `scope` that
 * {@link isReadableScope} refuses.
 *
 * @param ctx - the context of the view the read was called through.
 * @param scope - the explicit scope key.
 * @param where - the call, for the message (`Tools.get(name, scope)`).
 * @param fix - what to do instead, ending the message.
 */
export function assertReadableScope(ctx: SystemContext, scope: object, where: string, fix: string): void {
  if (isReadableScope(ctx, scope)) return;
  throw new TypeError(
    `${where}: scope ${scopeLabel(scope)} is neither this view's own scope nor a live scope key ` +
      `(made by createScope and not being disposed; an agent's key stops being live when its disposal starts); ${fix}.`,
  );
}
