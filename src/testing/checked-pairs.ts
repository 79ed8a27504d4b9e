/**
 * Type-level checks of the `[token, value]` and `[token, factory]` pairs the testing kit
 * takes: a pair whose value does not have its token's type is a compile error at the
 * pair, while the lists stay plain arrays at run time.
 */
import type { SystemContext } from '../context/system-context.js';
import type { Token } from '../context/token.js';

/**
 * One entry of a globals or outputs list, checked: a `[token, value]` pair becomes
 * `[token, T]` where `T` is the token's value type; anything else is left as it is.
 */
export type CheckedPair<E> = E extends readonly [infer K, unknown] ? ([K] extends [Token<infer T>] ? readonly [K, T] : E) : E;

/**
 * One entry of a locals list, checked: a `[token, factory]` pair becomes
 * `[token, (ctx) => T]` where `T` is the token's value type (the factory receives the new
 * context, and may ignore it); anything else is left as it is.
 */
export type CheckedFactoryPair<E> = E extends readonly [infer K, unknown] ? ([K] extends [Token<infer T>] ? readonly [K, (ctx: SystemContext) => T] : E) : E;

/** A globals or outputs list with every `[token, value]` pair checked against its token. */
export type CheckedPairs<G extends readonly unknown[]> = { readonly [I in keyof G]: CheckedPair<G[I]> };

/** A locals list with every `[token, factory]` pair checked against its token. */
export type CheckedFactoryPairs<L extends readonly unknown[]> = { readonly [I in keyof L]: CheckedFactoryPair<L[I]> };
