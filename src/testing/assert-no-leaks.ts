/**
 * assertNoLeaks: fails when a context, scope or scoped registration made through a
 * server is still alive.
 */
import type { Server } from '../context/server.js';
import type { SystemContext } from '../context/system-context.js';
import { errorText } from '../util/error-text.js';
import { branded } from '../util/brand.js';

/** Thrown by {@link assertNoLeaks}; `leaks` lists what is still alive. */
export class LeakError extends Error {
  /**
   * True when `value` is an instance of `LeakError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'LeakError');
  /** Always `'LeakError'`; the live items are in {@link LeakError.leaks}. */
  override readonly name = 'LeakError';
  /** One description per live context, scope or registration. */
  readonly leaks: readonly string[];

  /** @param leaks - descriptions of what is still alive. */
  constructor(leaks: readonly string[]) {
    super(
      `assertNoLeaks: ${leaks.length} live item(s) made through this server:\n` +
        leaks.map((l) => `  - ${l}`).join('\n') +
        `\nDispose them (await ctx.dispose(), await scope.dispose(), call the disposer a registration returned) or dispose the server.`,
    );
    this.leaks = Object.freeze([...leaks]);
  }
}

function walk(ctx: SystemContext, out: string[], path: string): void {
  const scoped = ctx.parent !== undefined && ctx._scopeKey !== undefined && ctx._scopeKey !== ctx.parent._scopeKey;
  out.push(`${scoped ? 'scope' : ctx.parent === undefined ? 'root context' : 'context'} ${path}: ${ctx.describe()}`);
  let i = 0;
  for (const c of ctx._openChildren()) walk(c, out, `${path}.${i++}`);
}

/**
 * Throws a {@link LeakError} listing every live context (with its descendants and
 * scopes) made through `server`, and every live scoped registration reported by the
 * registries' leak probes. Returns normally when nothing leaked.
 */
export function assertNoLeaks(server: Server): void {
  const leaks: string[] = [];
  let i = 0;
  for (const root of server._roots) walk(root, leaks, `#${i++}`);
  for (const probe of server._leakProbes) {
    let found: string[];
    try {
      found = probe();
    } catch (err) {
      found = [`a leak probe threw: ${errorText(err)}`];
    }
    leaks.push(...found);
  }
  if (leaks.length > 0) throw new LeakError(leaks);
}
