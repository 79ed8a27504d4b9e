/**
 * Tokens: the keys under which resources, outputs and services are stored.
 *
 * A token is either a class (the resource's own constructor) or a unique symbol made by
 * {@link token}, branded with the value type so that lookups are typed.
 */

import { describeValue } from '../util/describe-value.js';
import { errorText } from '../util/error-text.js';

/** @internal Re-exported from `util/` for the modules that import them from here. */
export { describeValue, errorText };

/** Any class, abstract or not, whose instances are `T`. */
export type Class<T = unknown> = abstract new (...args: any[]) => T;

declare const tokenBrand: unique symbol;

/**
 * A unique symbol made by {@link token}, carrying the type `T` of the value it names.
 * It is a plain `symbol` at run time, so it also works as an inversify service
 * identifier (`@inject(API_KEY)`).
 */
export type TokenSymbol<T> = symbol & {
  /** Type-level only (never present at run time): carries `T` so `ctx.get(token)` is typed. */
  readonly [tokenBrand]?: T;
};

/** A resource key: a class or a {@link TokenSymbol}. */
export type Token<T = unknown> = Class<T> | TokenSymbol<T>;

/** The value type named by a token. */
export type TokenValue<K> = K extends Class<infer T> ? T : K extends TokenSymbol<infer T> ? T : never;

/**
 * The symbols made by {@link token}. A `WeakSet`: symbols made by `Symbol(name)` are
 * valid weak keys (Node 20+), so a token nobody references any more can be collected.
 */
const madeTokens = new WeakSet<object>();

/**
 * Makes a new token for an interface or a primitive.
 *
 * @example
 * ```ts
 * const API_KEY = token<string>('API_KEY');
 * server.insertGlobal(API_KEY, 'secret');
 * ctx.get(API_KEY); // string
 * ```
 * @param name - the name used in error messages and by {@link tokenName}.
 */
export function token<T>(name: string): TokenSymbol<T> {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`token(name) needs a non-empty string name, got ${describeValue(name)}.`);
  }
  const sym = Symbol(name) as TokenSymbol<T>;
  madeTokens.add(sym as unknown as object);
  return sym;
}

/** True when `value` can be used as a token: a class, or a symbol made by {@link token}. */
export function isToken(value: unknown): value is Token {
  if (typeof value === 'symbol') return madeTokens.has(value as unknown as object);
  if (typeof value !== 'function') return false;
  try {
    return value.prototype !== undefined;
  } catch {
    // A hostile proxy whose `prototype` read throws is not a usable token.
    return false;
  }
}

/**
 * @internal {@link describeValue} for a value given where a class is expected: a function
 * that is not a class (an arrow function, a method, a bound function) reads as
 * `the function f (arrow functions and methods are not classes)`. Never throws.
 */
export function describeClassCandidate(value: unknown): string {
  const text = describeValue(value);
  // A function whose name could not be read is described as such; the hint is for the others.
  return typeof value === 'function' && text.startsWith('the function ') ? `${text} (arrow functions and methods are not classes)` : text;
}

/**
 * @internal {@link describeValue} for a value given where a token is expected: a symbol that
 * {@link token} did not make reads as `Symbol(x) (a symbol not made by token())`, and a
 * function that is not a class as in {@link describeClassCandidate}. Never throws.
 */
export function describeTokenCandidate(value: unknown): string {
  if (typeof value === 'symbol' && !madeTokens.has(value as unknown as object)) return `${String(value)} (a symbol not made by token())`;
  return describeClassCandidate(value);
}

/**
 * The display name of a token: the class name, or the name given to {@link token}.
 * Throws a TypeError for anything that is not a token.
 */
export function tokenName(t: Token): string {
  assertToken(t, 'tokenName(token)');
  return nameOf(t);
}

/** @internal The name of a value already known to be a token. */
export function nameOf(t: Token): string {
  if (typeof t === 'symbol') return t.description ?? 'token';
  try {
    const n: unknown = t.name;
    return typeof n === 'string' && n ? n : '<anonymous class>';
  } catch {
    return '<a class whose name can not be read>';
  }
}

/** @internal Throws a TypeError naming `where` unless `value` is a token. */
export function assertToken(value: unknown, where: string): asserts value is Token {
  if (!isToken(value)) {
    throw new TypeError(
      `${where}: expected a token (a class, or a symbol made by token<T>(name)), got ${describeTokenCandidate(value)}.`,
    );
  }
}

/**
 * @internal The token of a value inserted without an explicit token: its class
 * (`value.constructor`). Refuses values that have no class of their own (primitives,
 * `null`, plain objects, prototype-less objects) and classes or functions passed in place
 * of an instance, with a TypeError that says how to pass a token.
 */
export function tokenOfValue(value: unknown, callOf: string | (() => string), explicit: string): Token {
  // The call's description is only built for an error.
  const call = (): string => (typeof callOf === 'string' ? callOf : callOf());
  if (value !== null && typeof value === 'object') {
    let ctor: unknown;
    try {
      ctor = (value as object).constructor;
    } catch (err) {
      throw new TypeError(
        `${call()}: reading the class (constructor) of ${describeValue(value)} threw (${errorText(err)}); ` +
          `pass a token explicitly: ${explicit} with const MY_TOKEN = token<T>('MY_TOKEN').`,
        { cause: err },
      );
    }
    if (isToken(ctor) && ctor !== Object) return ctor;
    const what = ctor === Object ? 'a plain object' : describeValue(value);
    throw new TypeError(
      `${call()}: ${what} has no class of its own to use as its token; ` +
        `pass one explicitly: ${explicit} with const MY_TOKEN = token<T>('MY_TOKEN').`,
    );
  }
  if (typeof value === 'function') {
    const name = describeClassCandidate(value);
    throw new TypeError(
      `${call()}: got ${isToken(value) ? `the class ${nameOf(value)} itself` : name}, not an instance; ` +
        `pass an instance (new ${isToken(value) ? nameOf(value) : 'MyClass'}()) or an explicit token: ${explicit}.`,
    );
  }
  throw new TypeError(
    `${call()}: ${describeTokenCandidate(value)} has no class to use as its token; ` +
      `pass one explicitly: ${explicit} with const MY_TOKEN = token<T>('MY_TOKEN').`,
  );
}
