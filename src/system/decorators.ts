/**
 * Parameter decorators `@res`, `@resMut`, `@out`: the decorator form of `Res`, `ResMut`
 * and `Out`, for `@system()` methods and for constructors of classes built with
 * `ctx.resolve(Class)`.
 *
 * The token may be omitted when `emitDecoratorMetadata` records the parameter's class.
 */
import { inject, optional as inversifyOptional } from 'inversify';
import { assertMayBeMutated } from '../context/markers.js';
import { isToken, nameOf, type Token } from '../context/token.js';
import { derivedId } from '../container/service-ids.js';
import { Out, Res, ResMut, type Param, type ParamOptions } from './params.js';

/** A parameter decorator made by `@res`, `@resMut` or `@out`. */
export type ParamDecorator = (target: object, propertyKey: string | symbol | undefined, parameterIndex: number) => void;

const methodParams = new WeakMap<object, Map<string | symbol, Param[]>>();

/** @internal The descriptors recorded by parameter decorators on a method. */
export function methodParamsOf(target: object, key: string | symbol): Param[] | undefined {
  return methodParams.get(target)?.get(key);
}

/** Types emitDecoratorMetadata records for things that are not usable tokens. */
const unusable = new Set<unknown>([Object, String, Number, Boolean, Symbol, BigInt, Array, Function, Promise, undefined]);

/** @internal `Class.method` or `Class constructor` for messages. */
export function siteName(target: object, key: string | symbol | undefined): string {
  if (key === undefined) return `the constructor of ${(target as { name?: string }).name || '<anonymous class>'}`;
  const cls = typeof target === 'function' ? target : (target as { constructor?: { name?: string } }).constructor;
  const sep = typeof target === 'function' ? '.' : '.prototype.';
  return `${cls?.name || '<anonymous class>'}${sep}${String(key)}`;
}

function inferToken(deco: string, target: object, key: string | symbol | undefined, index: number): Token {
  const types = (key === undefined
    ? Reflect.getMetadata('design:paramtypes', target)
    : Reflect.getMetadata('design:paramtypes', target, key)) as unknown[] | undefined;
  const t = types?.[index];
  if (t === Res || t === ResMut || t === Out) {
    const alias = (t as { name: string }).name;
    throw new TypeError(
      `@${deco}() on parameter #${index} of ${siteName(target, key)}: the parameter is typed ${alias}<T>, and emitDecoratorMetadata can not see the T inside it. ` +
        `Pass the token explicitly: @${deco}(MyClass) value: ${alias}<MyClass>, or annotate the parameter with the class itself (value: MyClass).`,
    );
  }
  if (unusable.has(t) || !isToken(t)) {
    const seen = types === undefined ? 'no type (emitDecoratorMetadata is off, or the code was not compiled by tsc)' : (t as { name?: string } | undefined)?.name ?? String(t);
    throw new TypeError(
      `@${deco}() on parameter #${index} of ${siteName(target, key)}: the token can not be inferred; emitDecoratorMetadata recorded ${seen}. ` +
        `Interfaces, type aliases (such as Res<T>), unions and primitives erase to Object/String/Number. ` +
        `Pass the token explicitly: @${deco}(MyClass) or @${deco}(MY_TOKEN) with const MY_TOKEN = token<T>('MY_TOKEN').`,
    );
  }
  return t;
}

function record(deco: string, make: (t: Token) => Param, explicit: Token | undefined, hasToken: boolean): ParamDecorator {
  return (target, key, index) => {
    const t = hasToken ? (explicit as Token) : inferToken(deco, target, key, index);
    let p: Param;
    try {
      p = make(t);
    } catch (err) {
      if (err instanceof TypeError) throw new TypeError(`@${deco}() on parameter #${index} of ${siteName(target, key)}: ${err.message}`);
      throw err;
    }
    if (key === undefined) {
      recordConstructorParam(target, index, p);
      return;
    }
    let byKey = methodParams.get(target);
    if (byKey === undefined) methodParams.set(target, (byKey = new Map()));
    let list = byKey.get(key);
    if (list === undefined) byKey.set(key, (list = []));
    list[index] = p;
  };
}

/**
 * A constructor parameter becomes inversify injection metadata: a required `@res(T)`
 * is `@inject(T)`; the other kinds use a derived service id only a context binds.
 */
function recordConstructorParam(target: object, index: number, p: Param): void {
  let id: Token | symbol;
  if (p.access === 'read') id = p.optional ? derivedId('optionalRes', p.token) : p.token;
  else if (p.access === 'write') id = derivedId('resMut', p.token);
  else id = derivedId(p.optional ? 'optionalOut' : 'out', p.token);
  inject(id as never)(target, undefined, index);
  if (p.optional) inversifyOptional()(target, undefined, index);
}

/**
 * `@res(T?, { optional? })`: a `Res` parameter of a `@system()` method or of an
 * injectable constructor. Without a token, the parameter's class recorded by
 * `emitDecoratorMetadata` is used (an interface or primitive type is a TypeError).
 */
export function res(token?: Token, options?: ParamOptions): ParamDecorator;
/** `@res({ optional: true })`: an optional `Res` parameter whose token is inferred. */
export function res(options: ParamOptions): ParamDecorator;
export function res(a?: Token | ParamOptions, b?: ParamOptions): ParamDecorator {
  const [token, options] = split(a, b);
  const has = token !== undefined;
  if (has && !isToken(token)) Res(token); // throws the TypeError naming what was passed
  return record('res', (t) => Res(t, options), token, has);
}

/**
 * `@resMut(T?)`: a `ResMut` parameter (this context's own local, borrowed for writing).
 * A `@globalResource()` class is refused with a TypeError at definition.
 */
export function resMut(token?: Token): ParamDecorator {
  const has = token !== undefined;
  if (has) {
    if (!isToken(token)) ResMut(token);
    assertMayBeMutated(token, `@resMut(${nameOf(token)})`);
  }
  return record('resMut', (t) => ResMut(t), token, has);
}

/** `@out(T?, { optional? })`: an `Out` parameter (an output of this context). */
export function out(token?: Token, options?: ParamOptions): ParamDecorator;
/** `@out({ optional: true })`: an optional `Out` parameter whose token is inferred. */
export function out(options: ParamOptions): ParamDecorator;
export function out(a?: Token | ParamOptions, b?: ParamOptions): ParamDecorator {
  const [token, options] = split(a, b);
  const has = token !== undefined;
  if (has && !isToken(token)) Out(token);
  return record('out', (t) => Out(t, options), token, has);
}

/** `(options)` alone means an inferred token with options. */
function split(a: Token | ParamOptions | undefined, b: ParamOptions | undefined): [Token | undefined, ParamOptions | undefined] {
  if (a !== null && typeof a === 'object' && b === undefined) return [undefined, a];
  return [a as Token | undefined, b];
}
