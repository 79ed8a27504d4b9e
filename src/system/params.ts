/**
 * Parameter descriptors: what a system asks the context for.
 *
 * `Res(T)` reads through the `Res` rule (own locals, ancestors, globals), `ResMut(T)`
 * takes this context's own local for writing, `Out(T)` reads an output of this context.
 * Each name is both a function (the descriptor) and a type (the parameter's type).
 */
import { assertMayBeMutated } from '../context/markers.js';
import { assertToken, nameOf, type Token } from '../context/token.js';
import type { OwnClass } from './own-class.js';

declare const paramValue: unique symbol;

/** How a parameter reaches its value: `Res` reads, `ResMut` writes, `Out` reads an output. */
export type ParamAccess = 'read' | 'write' | 'output';

/** Options of `Res(T, options)` and `Out(T, options)`. */
export interface ParamOptions {
  /** When true, a missing resource or output yields `undefined` instead of failing the run. */
  readonly optional?: boolean;
}

/**
 * A parameter descriptor made by {@link Res}, {@link ResMut} or {@link Out}. `V` is the
 * type the system function receives for it.
 */
export interface Param<V = unknown> {
  /** `read` for `Res`, `write` for `ResMut`, `output` for `Out`. */
  readonly access: ParamAccess;
  /** The token fetched. */
  readonly token: Token;
  /** Whether a miss yields `undefined` (never true for `ResMut`). */
  readonly optional: boolean;
  /** Type-level only: the value type. Never present at run time. */
  readonly [paramValue]?: V;
}

/** The value type a parameter descriptor yields. */
export type ParamValue<P> = P extends Param<infer V> ? V : never;

/** The argument tuple of a system function whose parameters are `P`. */
export type ParamValues<P extends readonly Param[]> = { -readonly [K in keyof P]: ParamValue<P[K]> };

function make<V>(access: ParamAccess, t: Token, optional: boolean): Param<V> {
  return Object.freeze({ access, token: t, optional }) as Param<V>;
}

function readOptions(options: unknown, call: string): boolean {
  if (options === undefined) return false;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}: options must be an object like { optional: true }, got ${String(options)}.`);
  }
  const o = (options as ParamOptions).optional;
  if (o !== undefined && typeof o !== 'boolean') throw new TypeError(`${call}: options.optional must be a boolean.`);
  return o === true;
}

/**
 * A read parameter: the value found by the `Res` rule (own locals, then each ancestor's,
 * then the globals). While the system runs it holds a read borrow on the entry.
 *
 * @example
 * ```ts
 * const greet = system([Res(AppConfig)], (config) => `hi from ${config.agentName}`);
 * ```
 */
export function Res<T>(token: Token<T>, options: { readonly optional: true }): Param<Res<T> | undefined>;
/** A required read parameter. */
export function Res<T>(token: Token<T>, options?: { readonly optional?: false }): Param<Res<T>>;
/** A read parameter, optional when `options.optional` is true. */
export function Res<T>(token: Token<T>, options?: ParamOptions): Param<Res<T> | undefined>;
export function Res(token: Token, options?: ParamOptions): Param {
  assertToken(token, 'Res(token)');
  return make('read', token, readOptions(options, `Res(${nameOf(token)}, options)`));
}

/**
 * The type of a `Res` parameter: a read-only view of `T` (`Readonly<T>`), except for
 * polestar's own classes (`Agent`, `SystemContext`, `Session`, `DurableSession`, the
 * registry views), which are handed over as `T` itself, so what `Res(Agent)` gives a
 * system can be passed on, e.g. to `openSession(agent)`.
 */
export type Res<T> = T extends OwnClass ? T : Readonly<T>;

/**
 * A write parameter: this context's own local of `token` (never walking up). While the
 * system runs it holds a write borrow on the entry. A class marked `@globalResource()`
 * is refused here with a TypeError.
 */
export function ResMut<T>(token: Token<T>): Param<T> {
  assertToken(token, 'ResMut(token)');
  if (arguments.length > 1) {
    throw new TypeError(`ResMut(${nameOf(token)}) takes no options: a ResMut parameter is never optional; use Res(${nameOf(token)}, { optional: true }) to read an optional value.`);
  }
  assertMayBeMutated(token, `ResMut(${nameOf(token)})`);
  return make('write', token, false);
}

/** The type of a `ResMut` parameter: `T` itself, mutable. */
export type ResMut<T> = T;

/**
 * An output parameter: the output stored under `token` in this context's `outputs`
 * (outputs are never inherited).
 */
export function Out<T>(token: Token<T>, options: { readonly optional: true }): Param<Out<T> | undefined>;
/** A required output parameter. */
export function Out<T>(token: Token<T>, options?: { readonly optional?: false }): Param<Out<T>>;
/** An output parameter, optional when `options.optional` is true. */
export function Out<T>(token: Token<T>, options?: ParamOptions): Param<Out<T> | undefined>;
export function Out(token: Token, options?: ParamOptions): Param {
  assertToken(token, 'Out(token)');
  return make('output', token, readOptions(options, `Out(${nameOf(token)}, options)`));
}

/** The type of an `Out` parameter: a read-only view of `T`, with the same exception as {@link Res}. */
export type Out<T> = T extends OwnClass ? T : Readonly<T>;

/** @internal True when `value` is a descriptor made by Res/ResMut/Out. */
export function isParam(value: unknown): value is Param {
  if (value === null || typeof value !== 'object') return false;
  const p = value as Param;
  return (p.access === 'read' || p.access === 'write' || p.access === 'output') && typeof p.optional === 'boolean' && 'token' in p;
}
