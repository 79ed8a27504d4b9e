/**
 * ParentFilter: which tokens a context's `Res`
 * walks may read from its parent and the ancestors above it.
 */
import { assertToken, describeValue, errorText, nameOf, type Token } from './token.js';

/** Which rule a {@link ParentFilter} applies. */
export type ParentFilterKind = 'allowOnly' | 'allowAllExcept';

/**
 * Gates every `Res` walk that crosses from the filtered context to its parent, including
 * walks that start below it (its sessions and turns). The filtered context's own locals,
 * those of its descendants, and the globals are always reachable: a blocked token falls
 * through to the globals. Pass it as `ctx.child({ parentFilter })`,
 * `createScope(ctx, key, { parentFilter })` or `agents.create({ …, parentFilter })`.
 *
 * @example
 * ```ts
 * // the subagent sees its parent's Llm, nothing else the parent holds
 * const sub = agentCtx.child({ parentFilter: ParentFilter.allowOnly([Llm]) });
 * ```
 */
export class ParentFilter {
  /** `allowOnly`: only {@link ParentFilter.tokens} pass; `allowAllExcept`: every token but them passes. */
  readonly kind: ParentFilterKind;
  /** The tokens the rule names, in the order given (duplicates dropped). */
  readonly tokens: readonly Token[];
  readonly #set: ReadonlySet<Token>;

  private constructor(kind: ParentFilterKind, tokens: readonly Token[]) {
    this.kind = kind;
    this.tokens = Object.freeze(tokens);
    this.#set = new Set(tokens);
    Object.freeze(this);
  }

  /** A filter that lets only `tokens` through to the parent (everything else stops at the filtered context). */
  static allowOnly(tokens: Iterable<Token>): ParentFilter {
    return new ParentFilter('allowOnly', readTokens(tokens, 'ParentFilter.allowOnly(tokens)'));
  }

  /** A filter that lets every token through to the parent except `tokens`. */
  static allowAllExcept(tokens: Iterable<Token>): ParentFilter {
    return new ParentFilter('allowAllExcept', readTokens(tokens, 'ParentFilter.allowAllExcept(tokens)'));
  }

  /** Whether a `Res` walk may read `token` from above the filtered context. */
  allows(token: Token): boolean {
    return this.#set.has(token) === (this.kind === 'allowOnly');
  }

  /** How the filter reads in messages, e.g. `ParentFilter.allowOnly([Llm, API_KEY])`. */
  toString(): string {
    return `ParentFilter.${this.kind}([${this.tokens.map(nameOf).join(', ')}])`;
  }

  /** @internal How to let `t` through this filter, for `ResourceOutOfScope` messages. */
  _fix(t: Token): string {
    const n = nameOf(t);
    return this.kind === 'allowOnly'
      ? `add ${n} to the filter's tokens (ParentFilter.allowOnly([..., ${n}]))`
      : `remove ${n} from ParentFilter.allowAllExcept([...])`;
  }
}

function readTokens(tokens: unknown, call: string): Token[] {
  const notIterable = (): TypeError =>
    new TypeError(`${call}: tokens must be an array (or any iterable) of tokens, got ${describeValue(tokens)}.`);
  if (tokens === null || typeof tokens !== 'object') throw notIterable();
  let list: unknown[];
  try {
    if (typeof (tokens as Iterable<unknown>)[Symbol.iterator] !== 'function') throw notIterable();
    list = [...(tokens as Iterable<unknown>)];
  } catch (err) {
    if (err instanceof TypeError && err.message.startsWith(call)) throw err;
    throw new TypeError(`${call}: iterating the tokens threw (${errorText(err)}); pass an array of tokens.`, { cause: err });
  }
  const out: Token[] = [];
  for (let i = 0; i < list.length; i++) {
    const t = list[i];
    assertToken(t, `${call} at index ${i}`);
    if (!out.includes(t)) out.push(t);
  }
  return out;
}
