/**
 * A context's outputs: the results of the systems run on it. Never inherited.
 */
import { ParamError } from './errors.js';
import { assertToken, type Token } from './token.js';

/** The most recently inserted output, as returned by {@link Outputs.takeLast}. */
export interface TakenOutput {
  /** The output's token. */
  readonly token: Token;
  /** The output's value. */
  readonly value: unknown;
}

/**
 * The outputs of one context: a map from token to the last value stored under it.
 * Outputs are never inherited: a child context starts with none and never sees its
 * parent's.
 */
export class Outputs {
  #map: Map<Token, unknown> | undefined;
  #last: Token | undefined;
  readonly #check: (what: string) => void;

  /** @internal */
  constructor(check: (what: string) => void) {
    this.#check = check;
  }

  /** Stores `value` under `token`, returning the previous output of that token. */
  insert<T>(token: Token<T>, value: NoInfer<T>): T | undefined {
    this.#check('outputs.insert');
    assertToken(token, 'outputs.insert(token, value)');
    const map = (this.#map ??= new Map());
    const prev = map.get(token) as T | undefined;
    // The most recent output is already last in insertion order: overwrite in place.
    if (this.#last !== token) map.delete(token);
    map.set(token, value);
    this.#last = token;
    return prev;
  }

  /**
   * @internal Stores a system's output under a token already validated (at the system's
   * definition, or as the returned value's class): `insert` without its checks. The
   * caller reached this through the `outputs` getter, which checked liveness.
   */
  _store(token: Token, value: unknown): void {
    const map = (this.#map ??= new Map());
    if (this.#last !== token) map.delete(token);
    map.set(token, value);
    this.#last = token;
  }

  /** The output stored under `token`; throws `ParamError` `OutputNotFound` when missing. */
  get<T>(token: Token<T>): T {
    this.#check('outputs.get');
    const map = this.#map;
    if (map !== undefined && map.has(token)) return map.get(token) as T;
    assertToken(token, 'outputs.get(token)');
    throw new ParamError(
      'OutputNotFound',
      token,
      'no system run on this context has produced it yet; outputs are never inherited from a parent context',
    );
  }

  /** The output stored under `token`, or `undefined`. */
  tryGet<T>(token: Token<T>): T | undefined {
    this.#check('outputs.tryGet');
    const map = this.#map;
    if (map !== undefined && map.has(token)) return map.get(token) as T;
    assertToken(token, 'outputs.tryGet(token)');
    return undefined;
  }

  /** Whether an output is stored under `token`. */
  has(token: Token): boolean {
    this.#check('outputs.has');
    if (this.#map?.has(token)) return true;
    assertToken(token, 'outputs.has(token)');
    return false;
  }

  /** Removes the output stored under `token`, returning it. */
  remove<T>(token: Token<T>): T | undefined {
    this.#check('outputs.remove');
    const map = this.#map;
    if (map === undefined || !map.has(token)) {
      assertToken(token, 'outputs.remove(token)');
      return undefined;
    }
    const v = map.get(token) as T;
    map.delete(token);
    if (this.#last === token) this.#last = undefined;
    return v;
  }

  /** Number of stored outputs. */
  get size(): number {
    this.#check('outputs.size');
    return this.#map?.size ?? 0;
  }

  /** Removes every output. */
  clear(): void {
    this.#check('outputs.clear');
    this.#map?.clear();
    this.#last = undefined;
  }

  /**
   * Removes and returns the most recently inserted output; `undefined` when empty,
   * after `clear()`, or when it was already taken (a second call returns `undefined`
   * even if other outputs remain).
   */
  takeLast(): TakenOutput | undefined {
    this.#check('outputs.takeLast');
    const t = this.#last;
    if (t === undefined || this.#map === undefined || !this.#map.has(t)) return undefined;
    const value = this.#map.get(t);
    this.#map.delete(t);
    this.#last = undefined;
    return { token: t, value };
  }

  /** Iterates `[token, value]` pairs in insertion order. */
  entries(): IterableIterator<[Token, unknown]> {
    this.#check('outputs.entries');
    return (this.#map ?? new Map<Token, unknown>()).entries();
  }
}
