/**
 * @internal The explicit-scope check: how a registry read that takes a `scope` argument
 * (`Tools` reads and `execute`, `Prompts.assemble`) reads it. The key must be the view's
 * own scope or a *live* scope key (made by `createScope`, disposal not started); anything
 * else (a forged `{}`, the key of a disposed agent, a context) is refused instead of being
 * read as the bare global layer.
 */
import { SystemContext } from '../context/system-context.js';
import { assertReadableScope, isReadableScope } from '../scope/live.js';
import { describeValue } from '../util/describe-value.js';

export { assertReadableScope, isReadableScope };

/**
 * @internal The scope a read through a view bound to `ctx` is for, given the caller's
 * `scope` argument: the view's own scope when it is omitted, else `scope` itself once it
 * was checked to be the view's own scope or a live scope key.
 *
 * @param ctx - the context of the view the read was called through.
 * @param scope - the caller's argument, unchecked.
 * @param where - the call, for the messages (`Prompts.assemble({ scope })`).
 * @param fix - what to do instead of passing a scope key that is not live, ending that message.
 * @param keyShape - how the message names a scope key's type (`an object`).
 * @throws TypeError naming `where` for a value that is no scope key (a context: `pass
 *   scopeOf(ctx)`) or a key that is neither the view's own nor live.
 */
export function explicitScope(ctx: SystemContext, scope: unknown, where: string, fix: string, keyShape = 'an object'): object | undefined {
  if (scope === undefined) return ctx._scopeKey;
  if (scope === ctx._scopeKey) return scope as object;
  if (scope === null || (typeof scope !== 'object' && typeof scope !== 'function') || scope instanceof SystemContext) {
    throw new TypeError(`${where}: scope must be a scope key (${keyShape}) or omitted, got ${describeValue(scope)}; for a context pass scopeOf(ctx).`);
  }
  assertReadableScope(ctx, scope, where, fix);
  return scope;
}
