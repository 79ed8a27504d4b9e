/**
 * How a token that a plugin installs is provided, for `resource not found` messages: a
 * missing `Tools` is fixed by adding the `ToolsPlugin`, not by `ctx.insert(...)`.
 */
import type { Token } from './token.js';

const providers = new Map<Token, string>();

/** @internal Records how `t` is provided, e.g. `it is installed by ToolsPlugin: ...`. */
export function setProvider(t: Token, how: string): void {
  providers.set(t, how);
}

/** @internal How `t` is provided, or `undefined` for an ordinary resource. */
export function providerOf(t: Token): string | undefined {
  return providers.get(t);
}
