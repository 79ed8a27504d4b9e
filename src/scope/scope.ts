/**
 * Registration scopes: a child context tagged with a key. Registries read the tag with
 * `scopeOf` to choose the layer a registration belongs to.
 */
import { readChildOptions, SystemContext } from '../context/system-context.js';
import type { ParentFilter } from '../context/parent-filter.js';
import { describeValue } from '../context/token.js';
import type { Lifetime } from '../lifetime/lifetime.js';

/** A registration scope made by {@link createScope}. */
export interface Scope<K extends object = object> {
  /** The scope's key (compared by identity). */
  readonly key: K;
  /** The scope's context: a child of the context it was made from, tagged with `key`. */
  readonly ctx: SystemContext;
  /**
   * Disposes the scope context. Memoized: repeated and racing calls share one promise
   * that settles only when every async cleanup of the scope has settled, also when
   * `rawDispose()` was called first.
   */
  dispose(): Promise<void>;
  /** The scope context's own single-shot disposer. */
  readonly rawDispose: () => Promise<void>;
}

/** Options of {@link createScope}. */
export interface ScopeOptions {
  /** Gates every `Res` walk that crosses from the scope context to `ctx`. Default: no filter. */
  readonly parentFilter?: ParentFilter;
}

/**
 * Makes a registration scope under `ctx`: a child context (so `Res` still walks to
 * `ctx`, as `options.parentFilter` allows), owned by `ctx` (disposing `ctx` disposes the
 * scope) and tagged with `key`. Registrations made through `scope.ctx` belong to the
 * layer of `key`.
 *
 * A key is *live* from `createScope` until its scope's disposal starts: `createScope`
 * with a key that is already live throws a TypeError (after that, the key may be used
 * again).
 *
 * @param ctx - the owner context.
 * @param key - a non-null object or function, compared by identity.
 * @param options - `parentFilter`.
 */
export function createScope<K extends object>(ctx: SystemContext, key: K, options?: ScopeOptions): Scope<K> {
  const scoped = scopeContext(ctx, key, options);
  let raw: Promise<void> | undefined;
  const rawDispose = (): Promise<void> => {
    if (raw === undefined) raw = scoped.dispose();
    return raw;
  };
  return {
    key,
    ctx: scoped,
    rawDispose,
    dispose: () => scoped.dispose(),
  };
}

/** @internal {@link createScope}'s context alone (for callers that need no `Scope` object: an agent). */
export function scopeContext(ctx: SystemContext, key: object, options?: ScopeOptions): SystemContext {
  if (!(ctx instanceof SystemContext)) {
    throw new TypeError(`createScope(ctx, key): ctx must be a SystemContext, got ${describeValue(ctx)}.`);
  }
  if (key === null || (typeof key !== 'object' && typeof key !== 'function')) {
    throw new TypeError(`createScope(ctx, key): key must be a non-null object or function, got ${describeValue(key)}.`);
  }
  ctx._live('createScope()');
  const filter = options === undefined ? undefined : readChildOptions(options, 'createScope(ctx, key, options)');
  const server = ctx.server;
  const live = server._scopeCtx(key);
  if (live !== undefined) {
    throw new TypeError(
      `createScope(ctx, key): the key ${describeValue(key)} is already live: the scope of the ${live.describe()} uses it ` +
        `and its disposal has not started. Use a new key object per scope, or dispose that scope first.`,
    );
  }
  const scoped = ctx._adopt(new SystemContext(server, ctx, key, filter));
  scoped._onAbortPass(scopeEnded);
  server._scopeBegan(key, scoped);
  return scoped;
}

/** A scope's key stops being live the moment its context's disposal starts. */
function scopeEnded(lt: Lifetime): void {
  const scoped = lt as SystemContext;
  scoped.server._scopeEnded(scoped._scopeKey as object, scoped);
}

/**
 * The nearest scope key on `ctx` or its ancestors; `undefined` for none. Works on
 * disposed contexts too.
 */
export function scopeOf(ctx: SystemContext): object | undefined {
  if (!(ctx instanceof SystemContext)) {
    throw new TypeError(`scopeOf(ctx): ctx must be a SystemContext, got ${describeValue(ctx)}.`);
  }
  return ctx._scopeKey;
}
