/**
 * System: a function plus the parameters it fetches from a context.
 *
 * Declared with `system(params, fn, options)` or with `@system()` on a method whose
 * parameters carry `@res` / `@resMut` / `@out`. Both produce the same `System`.
 */
import { assertToken, describeValue, isToken, nameOf, token, type Class, type Token } from '../context/token.js';
import { methodParamsOf, siteName } from './decorators.js';
import type { BorrowMode } from '../context/server-options.js';
import type { ResourceEntry } from '../context/resource-entry.js';
import { checkTimeout } from './borrows.js';
import { makeFetcher, type Fetcher } from './fetch.js';
import { isParam, type Param, type ParamValues } from './params.js';

declare const outputType: unique symbol;

/**
 * The token a system's output is stored under when it returns `undefined` and has no
 * `output` option. It still counts as the last output (`takeLast`).
 */
export const Unit = token<undefined>('Unit');

/** Options of `system(params, fn, options)` and `@system(options)`. */
export interface SystemOptions {
  /** The system's name (defaults to the function's name). */
  readonly name?: string;
  /** The token its output is stored under (defaults to the returned value's class). */
  readonly output?: Token;
  /**
   * What a run does when a borrow it needs is held: `'fail'` fails at once
   * with `BorrowConflict`, `'wait'` resolves every parameter, then waits until all
   * its borrows can be granted together (FIFO per entry, up to `borrowTimeoutMs`).
   * Defaults to the server's `borrows` option (itself `'fail'` by default).
   */
  readonly borrows?: BorrowMode;
  /**
   * How long a waiting run waits for its borrows before failing with `BorrowConflict`,
   * in milliseconds. Defaults to the server's `borrowTimeoutMs` (30,000 by default).
   */
  readonly borrowTimeoutMs?: number;
}

/** The tokens a system touches, by access kind. */
export interface SystemAccess {
  /** Tokens read through `Res`. */
  readonly reads: readonly Token[];
  /** Tokens written through `ResMut`. */
  readonly writes: readonly Token[];
  /** Tokens read from the context's outputs through `Out`. */
  readonly outputs: readonly Token[];
}

/**
 * A declared system: `fn` with its parameter descriptors. Run it with `ctx.run(system)`
 * or as a step of `ctx.execute([...])`. `O` is the (awaited) output type.
 */
export class System<O = unknown> {
  /** The system's name, used in errors. */
  readonly name: string;
  /** Its parameter descriptors, in declaration order. */
  readonly params: readonly Param[];
  /** The `output` option, or `undefined` (the returned value's class is used). */
  readonly output: Token | undefined;
  /** The tokens it reads, writes and takes from outputs. */
  readonly access: SystemAccess;
  /** The function called with the fetched parameters. */
  readonly fn: (...args: any[]) => unknown;
  /** @internal Fetchers built once at definition. */
  readonly _fetchers: readonly Fetcher[];
  /** @internal Per parameter: whether it holds a write borrow. */
  readonly _writes: readonly boolean[];
  /** @internal For an instance method: the class `ctx.resolve` builds the receiver from. */
  readonly _owner: Class | undefined;
  /** @internal For a static method: the class used as `this`. */
  readonly _this: unknown;
  /** @internal The `borrows` option; `undefined` follows the server. */
  readonly _borrows: BorrowMode | undefined;
  /** @internal The `borrowTimeoutMs` option; `undefined` follows the server. */
  readonly _borrowTimeoutMs: number | undefined;
  /** @internal How the system reads in conflict messages: `system "name"`. */
  readonly _label: string;
  /** @internal A borrow array the next run may reuse (given back by a synchronous run). */
  readonly _spare: { held: (ResourceEntry | undefined)[] | undefined };
  /** Type-level only: the output type. */
  declare readonly [outputType]?: O;

  /** @internal Use {@link system}. */
  constructor(fn: (...args: any[]) => unknown, params: readonly Param[], options: SystemOptions | undefined, where: string, owner?: Class, self?: unknown) {
    // Each option is read once: what was checked is what is kept.
    const o = readOptions(options, where);
    const name = o.name ?? (fn.name || '<anonymous system>');
    if (typeof name !== 'string' || name.length === 0) throw new TypeError(`${where}: options.name must be a non-empty string.`);
    checkParams(params, `${where} (system '${name}')`);
    this.name = name;
    this.params = Object.freeze([...params]);
    this.output = o.output;
    const reads: Token[] = [];
    const writes: Token[] = [];
    const outputs: Token[] = [];
    for (const p of params) (p.access === 'read' ? reads : p.access === 'write' ? writes : outputs).push(p.token);
    this.access = Object.freeze({ reads: Object.freeze(reads), writes: Object.freeze(writes), outputs: Object.freeze(outputs) });
    this.fn = fn;
    // The two arrays every run reads are left unfrozen (typed readonly, never written):
    // V8 reads a frozen array's elements on a slower path (docs/performance.md).
    // `Object.freeze(this)` below still stops them being replaced.
    this._fetchers = params.map(makeFetcher);
    this._writes = params.map((p) => p.access === 'write');
    this._owner = owner;
    this._this = self;
    this._borrows = o.borrows;
    this._borrowTimeoutMs = o.borrowTimeoutMs;
    this._label = `system "${name}"`;
    this._spare = { held: undefined };
    Object.freeze(this);
  }
}

/** Any system, whatever its output type. */
export type AnySystem<O = unknown> = System<O>;

/** A function that may be a decorated system method (checked at run time). */
export type SystemFn<R = unknown> = (...args: any[]) => R;

/** A method decorator made by `@system()`. */
export type SystemDecorator = (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor) => void;

const byFn = new WeakMap<object, System>();

function checkParams(params: readonly Param[], where: string): void {
  const reads = new Set<Token>();
  const writes = new Set<Token>();
  params.forEach((p, i) => {
    if (!isParam(p)) {
      throw new TypeError(`${where}: parameter #${i} is ${describeValue(p)}, not a descriptor; use Res(T), ResMut(T) or Out(T).`);
    }
    const n = nameOf(p.token);
    if (p.access === 'write') {
      if (writes.has(p.token)) throw new TypeError(`${where}: ResMut(${n}) is declared twice; one system can hold one write borrow of ${n}.`);
      if (reads.has(p.token)) throw new TypeError(`${where}: declares both Res(${n}) and ResMut(${n}); drop the Res(${n}), the ResMut parameter can read it too.`);
      writes.add(p.token);
    } else if (p.access === 'read') {
      if (writes.has(p.token)) throw new TypeError(`${where}: declares both Res(${n}) and ResMut(${n}); drop the Res(${n}), the ResMut parameter can read it too.`);
      reads.add(p.token);
    }
  });
}

/**
 * Declares a system: `fn` is called with the values of `params`, fetched from the
 * context it runs on, in order. Each parameter's type is inferred from its descriptor.
 *
 * @example
 * ```ts
 * const summarize = system([Res(AppConfig), Res(ConversationHistory)],
 *   async (config, history) => `${config.agentName}: ${history.messages.length} messages`,
 *   { name: 'summarize', output: Summary });
 * ```
 */
export function system<const P extends readonly Param[], R>(params: P, fn: (...args: ParamValues<P>) => R, options?: SystemOptions): System<Awaited<R>>;
/**
 * `@system(options?)`: declares a static method, or an instance method of an
 * `@injectable()` class, as a system. Every parameter needs `@res`, `@resMut` or `@out`.
 * `ctx.run(Class.method)` runs it; for an instance method `ctx.run(Class.prototype.method)`
 * builds the receiver with `ctx.resolve(Class)`.
 */
export function system(options?: SystemOptions): SystemDecorator;
export function system(a?: unknown, b?: unknown, c?: unknown): System | SystemDecorator {
  if (Array.isArray(a)) {
    if (typeof b !== 'function') throw new TypeError(`system(params, fn, options?): fn must be a function, got ${describeValue(b)}.`);
    checkOptions(c, 'system(params, fn, options)');
    return new System(b as (...args: any[]) => unknown, a as Param[], c as SystemOptions | undefined, 'system(params, fn)');
  }
  checkOptions(a, '@system(options)');
  const options = a as SystemOptions | undefined;
  return (target, key, descriptor) => {
    const fn = descriptor?.value as unknown;
    const where = `@system() on ${siteName(target, key)}`;
    if (typeof fn !== 'function') throw new TypeError(`${where}: @system() goes on a method, not on an accessor or a field.`);
    const recorded = methodParamsOf(target, key) ?? [];
    const types = Reflect.getMetadata('design:paramtypes', target, key) as unknown[] | undefined;
    const count = Math.max(types?.length ?? 0, (fn as (...args: unknown[]) => unknown).length, recorded.length);
    const params: Param[] = [];
    for (let i = 0; i < count; i++) {
      const p = recorded[i];
      if (p === undefined) {
        throw new TypeError(
          `${where}: parameter #${i} has no @res / @resMut / @out decorator; every parameter of a system is fetched from the context. ` +
            `Decorate it, e.g. @res(MyClass) value: Res<MyClass>.`,
        );
      }
      params.push(p);
    }
    const isStatic = typeof target === 'function';
    const owner = isStatic ? undefined : ((target as { constructor: Class }).constructor);
    const s = new System(fn as (...args: any[]) => unknown, params, options, where, owner, isStatic ? target : undefined);
    byFn.set(fn, s);
  };
}

function checkOptions(o: unknown, where: string): void {
  if (o === undefined) return;
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    throw new TypeError(`${where}: options must be an object like { name, output, borrows }, got ${describeValue(o)}.`);
  }
}

/** Reads and checks every option once. */
function readOptions(options: SystemOptions | undefined, where: string): SystemOptions {
  if (options === undefined) return {};
  const { name, output, borrows, borrowTimeoutMs } = options;
  if (output !== undefined && !isToken(output)) assertToken(output, `${where}: options.output`);
  if (borrows !== undefined && borrows !== 'fail' && borrows !== 'wait') {
    throw new TypeError(`${where}: options.borrows must be 'fail' or 'wait', got ${describeValue(borrows)}.`);
  }
  checkTimeout(borrowTimeoutMs, `${where}: options.borrowTimeoutMs`);
  return { name, output, borrows, borrowTimeoutMs };
}

/** The `System` declared by `@system()` on `fn`; `undefined` when `fn` is not one. */
export function systemOf<O = unknown>(fn: SystemFn<O> | System<O>): System<Awaited<O>> | undefined {
  if (fn instanceof System) return fn as System<Awaited<O>>;
  return typeof fn === 'function' ? (byFn.get(fn) as System<Awaited<O>> | undefined) : undefined;
}

/** @internal The system behind `value`, or a TypeError that says how to declare one. */
export function asSystem(value: unknown, where: string): System {
  if (value instanceof System) return value;
  if (typeof value === 'function') {
    const s = byFn.get(value);
    if (s !== undefined) return s;
    throw new TypeError(
      `${where}: the function ${value.name || '<anonymous>'} is not a system. Declare one with ` +
        `system([Res(A), ResMut(B)], (a, b) => ..., { name }) or put @system() on a static method (or on a method of an @injectable() class) ` +
        `whose parameters are decorated with @res / @resMut / @out.`,
    );
  }
  throw new TypeError(`${where}: expected a system (made by system(...) or a @system() method), got ${describeValue(value)}.`);
}
