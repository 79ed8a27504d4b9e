/**
 * Tokens: the keys under which resources, outputs and services are stored.
 *
 * A token is either a class (the resource's own constructor) or a unique symbol made by
 * {@link token}, branded with the value type so that lookups are typed.
 */

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

const madeTokens = new Set<symbol>();

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
  madeTokens.add(sym);
  return sym;
}

/** True when `value` can be used as a token: a class, or a symbol made by {@link token}. */
export function isToken(value: unknown): value is Token {
  if (typeof value === 'function') return value.prototype !== undefined;
  return typeof value === 'symbol' && madeTokens.has(value);
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
  return t.name || '<anonymous class>';
}

/** @internal Throws a TypeError naming `where` unless `value` is a token. */
export function assertToken(value: unknown, where: string): asserts value is Token {
  if (!isToken(value)) {
    throw new TypeError(
      `${where}: expected a token (a class, or a symbol made by token<T>(name)), got ${describeValue(value)}.`,
    );
  }
}

/**
 * @internal A short description of any value for error messages. Never throws: a value
 * that can not be inspected (a revoked proxy, a proxy whose traps throw, a throwing
 * `name` getter) is described as such, so reporting bad input never fails in turn.
 */
export function describeValue(value: unknown): string {
  try {
    return describeUnsafe(value);
  } catch {
    return `${typeof value === 'function' ? 'a function' : 'an object'} that can not be inspected (a revoked proxy or one whose traps throw)`;
  }
}

function describeUnsafe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
    case 'symbol':
      return `${String(value)} (a symbol not made by token())`;
    case 'function':
      return `the function ${value.name || '<anonymous>'} (arrow functions and methods are not classes)`;
    case 'object': {
      const ctor = (value as object).constructor as { name?: string } | undefined;
      return `an object (${ctor?.name ?? 'no prototype'})`;
    }
    default:
      return `the ${typeof value} ${String(value)}`;
  }
}

/**
 * @internal The token of a value inserted without an explicit token: its class
 * (`value.constructor`). Refuses values that have no class of their own (primitives,
 * `null`, plain objects, prototype-less objects) and classes or functions passed in place
 * of an instance, with a TypeError that says how to pass a token.
 */
export function tokenOfValue(value: unknown, call: string, explicit: string): Token {
  if (value !== null && typeof value === 'object') {
    const ctor = (value as object).constructor;
    if (typeof ctor === 'function' && ctor !== Object && ctor.prototype !== undefined) return ctor as Token;
    const what = ctor === Object ? 'a plain object' : describeValue(value);
    throw new TypeError(
      `${call}: ${what} has no class of its own to use as its token; ` +
        `pass one explicitly: ${explicit} with const MY_TOKEN = token<T>('MY_TOKEN').`,
    );
  }
  if (typeof value === 'function') {
    throw new TypeError(
      `${call}: got ${value.prototype !== undefined ? `the class ${value.name || '<anonymous>'} itself` : describeValue(value)}, not an instance; ` +
        `pass an instance (new ${value.name || 'MyClass'}()) or an explicit token: ${explicit}.`,
    );
  }
  throw new TypeError(
    `${call}: ${describeValue(value)} has no class to use as its token; ` +
      `pass one explicitly: ${explicit} with const MY_TOKEN = token<T>('MY_TOKEN').`,
  );
}
