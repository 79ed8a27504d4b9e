/**
 * ContextView: the shape every registry view shares. `ctx.get(Tools)` (and `Prompts`,
 * `Events`, `Agents`) returns a view made once for `ctx` over one shared registry, so a
 * registration made through it knows its owner (`context`) and its layer (`scope`)
 * without a scope parameter.
 */
import type { SystemContext } from '../context/system-context.js';
import type { ownClass } from '../system/own-class.js';

/** A view of a shared registry bound to one context (see `server.insertGlobalView`). */
export abstract class ContextView<R> {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** @internal The registry shared by every view of the server. */
  protected readonly registry: R;
  readonly #ctx: SystemContext;

  /** @internal Views are made by the server; use `ctx.get(Token)`. */
  constructor(registry: R, ctx: SystemContext) {
    this.registry = registry;
    this.#ctx = ctx;
  }

  /** The context this view is bound to: the owner of what it registers. */
  get context(): SystemContext {
    return this.#ctx;
  }

  /** The scope of this view: `scopeOf` of its context (`undefined` = the global layer). */
  get scope(): object | undefined {
    return this.#ctx._scopeKey;
  }
}
