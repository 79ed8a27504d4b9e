/**
 * `toolSystem(params, fn, options?)`: a tool body whose
 * `Res` / `ResMut` / `Out` parameters are fetched from the *calling context* of each
 * call, with the borrows held while the body runs (taken at once, or waited for under
 * the `'wait'` rule).
 *
 * ```ts
 * tools.register({
 *   name: 'note', description: 'Keep a note', parameters: schema,
 *   execute: toolSystem([Res(ConversationHistory), ResMut(Scratchpad)],
 *     (history, scratch, args: { text: string }, execution) => { … }),
 * });
 * ```
 */
import type { SystemContext } from '../context/system-context.js';
import { SystemContext as SystemContextClass } from '../context/system-context.js';
import type { BorrowMode } from '../context/server-options.js';
import { describeValue } from '../context/token.js';
import type { ParamFailure } from '../system/acquire.js';
import { paramFailure, passResult, releaseAll, takeNow, waitFor } from '../system/borrow-runner.js';
import { release, type Held, type Hold } from '../system/borrows.js';
import type { Param, ParamValues } from '../system/params.js';
import { System } from '../system/system.js';
import type { ToolExecution } from './types.js';

/** Options of {@link toolSystem}. */
export interface ToolSystemOptions<S = unknown> {
  /**
   * The schema of the tool's arguments, used to type `args`: a JSON Schema written inline
   * (its `type`, `properties`, `required`, `items`, `enum`, `const`, `anyOf` / `oneOf`
   * are read at the type level) or a Standard Schema such as a zod 4 schema (its input
   * type). Kept on the returned function as `parameters`, so the registration can reuse
   * it; `toolSystem` itself never validates arguments (the tools pipeline does).
   */
  readonly parameters?: S;
  /** A name for messages (defaults to the function's name; a call through the tools pipeline is named after the tool and call). */
  readonly name?: string;
  /** `'fail'` or `'wait'`, as for systems; defaults to the server's `borrows` option. */
  readonly borrows?: BorrowMode;
  /** How long a waiting call waits for its borrows; defaults to the server's `borrowTimeoutMs`. */
  readonly borrowTimeoutMs?: number;
}

/**
 * What {@link toolSystem} returns: a tool body `(args, execution, ctx)` to use as a tool's
 * `execute`. Each call fetches the parameters from `ctx`, runs the function with them,
 * `args` and `execution`, and resolves to its result.
 */
export interface ToolSystem<Args = unknown, R = unknown, S = unknown> {
  /** Runs one call on the calling context `ctx`. Every failure rejects. */
  (args: Args, execution: ToolExecution, ctx: SystemContext): Promise<R>;
  /** The `parameters` option, the same object (`undefined` when not given). */
  readonly parameters: S;
  /** The parameter descriptors, in declaration order. */
  readonly params: readonly Param[];
}

// ------------------------------------------------------------------ args from a schema

/**
 * The argument type a schema describes: a Standard Schema's input type (a zod 4 schema),
 * or what an inline JSON Schema's `type` (a name or a list of names), `properties`,
 * `required`, `items`, `enum`, `const`, `anyOf` / `oneOf` say; `unknown` for anything
 * else (a schema typed as a plain `JsonSchema` object, `$ref`, `allOf`, ...).
 */
export type SchemaArgs<S> =
  S extends Readonly<Record<'~standard', infer Std>>
    ? Std extends Readonly<Partial<Record<'types', infer T>>>
      ? NonNullable<T> extends Readonly<Record<'input', infer I>>
        ? I
        : unknown
      : unknown
    : S extends Readonly<Record<'const', infer C>>
      ? C
      : S extends Readonly<Record<'enum', readonly (infer E)[]>>
        ? E
        : S extends Readonly<Record<'anyOf', readonly (infer U)[]>>
          ? SchemaArgs<U>
          : S extends Readonly<Record<'oneOf', readonly (infer U)[]>>
            ? SchemaArgs<U>
            : S extends Readonly<Record<'type', infer T>>
              ? (T extends readonly (infer U)[] ? U : T) extends infer N
                ? N extends 'string'
                  ? string
                  : N extends 'number' | 'integer'
                    ? number
                    : N extends 'boolean'
                      ? boolean
                      : N extends 'null'
                        ? null
                        : N extends 'array'
                          ? S extends Readonly<Record<'items', infer I>>
                            ? SchemaArgs<I>[]
                            : unknown[]
                          : N extends 'object'
                            ? S extends Readonly<Record<'properties', infer P>>
                              ? (S extends Readonly<Record<'required', readonly (infer R)[]>> ? R : never) extends infer Req
                                ? ({ -readonly [K in keyof P as K extends Req ? K : never]: SchemaArgs<P[K]> } & {
                                    -readonly [K in keyof P as K extends Req ? never : K]?: SchemaArgs<P[K]>;
                                  }) extends infer O
                                  ? { [K in keyof O]: O[K] }
                                  : never
                                : never
                              : Record<string, unknown>
                            : unknown
                : never
              : unknown;

// ------------------------------------------------------------------ toolSystem

/**
 * Declares a tool body whose parameters come from the calling context:
 * `fn` receives the values of `params` (fetched from `ctx` for the call, in order), then
 * the call's `args` and `execution`. With `{ parameters }` (an inline JSON Schema or a
 * Standard Schema), `args` has the schema's type.
 *
 * Borrows are held while `fn` (and the promise it returns) runs: a conflict fails at
 * once or, on a `'wait'` server or with `{ borrows: 'wait' }`, the call waits for them.
 * A parameter that can not be fetched rejects with a `SystemError` (`kind: 'ParamError'`)
 * naming the parameter, and `fn` does not run; the tools pipeline reports it as
 * `EXECUTION_ERROR`. A throw or rejection of `fn` is passed on unchanged.
 *
 * @example
 * ```ts
 * const note = toolSystem([Res(ConversationHistory), ResMut(Scratchpad)],
 *   (history, scratch, args, execution) => {
 *     scratch.notes.push(`${execution.callId}: ${args.text} (${history.length} messages)`);
 *     return 'noted';
 *   },
 *   { parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
 * ```
 */
export function toolSystem<const P extends readonly Param[], R, const S extends object>(
  params: P,
  fn: (...values: [...ParamValues<P>, SchemaArgs<S>, ToolExecution]) => R,
  options: ToolSystemOptions<S> & { readonly parameters: S },
): ToolSystem<SchemaArgs<S>, Awaited<R>, S>;
/** Without `parameters`: `args` is what `fn` annotates it as, else `unknown`. */
export function toolSystem<const P extends readonly Param[], R, Args = unknown>(
  params: P,
  fn: (...values: [...ParamValues<P>, Args, ToolExecution]) => R,
  options?: ToolSystemOptions<undefined>,
): ToolSystem<Args, Awaited<R>, undefined>;
/** `toolSystem<Args>(params, fn)` with no parameters: `fn(args, execution)`. */
export function toolSystem<Args, R = unknown>(params: readonly [], fn: (args: Args, execution: ToolExecution) => R, options?: ToolSystemOptions): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with one parameter (annotate it: `Res<T>`), then `args` and `execution`. */
export function toolSystem<Args, R = unknown>(params: readonly [Param], fn: (p0: any, args: Args, execution: ToolExecution) => R, options?: ToolSystemOptions): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with two parameters. */
export function toolSystem<Args, R = unknown>(params: readonly [Param, Param], fn: (p0: any, p1: any, args: Args, execution: ToolExecution) => R, options?: ToolSystemOptions): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with three parameters. */
export function toolSystem<Args, R = unknown>(
  params: readonly [Param, Param, Param],
  fn: (p0: any, p1: any, p2: any, args: Args, execution: ToolExecution) => R,
  options?: ToolSystemOptions,
): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with four parameters. */
export function toolSystem<Args, R = unknown>(
  params: readonly [Param, Param, Param, Param],
  fn: (p0: any, p1: any, p2: any, p3: any, args: Args, execution: ToolExecution) => R,
  options?: ToolSystemOptions,
): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with five parameters. */
export function toolSystem<Args, R = unknown>(
  params: readonly [Param, Param, Param, Param, Param],
  fn: (p0: any, p1: any, p2: any, p3: any, p4: any, args: Args, execution: ToolExecution) => R,
  options?: ToolSystemOptions,
): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with six parameters. */
export function toolSystem<Args, R = unknown>(
  params: readonly [Param, Param, Param, Param, Param, Param],
  fn: (p0: any, p1: any, p2: any, p3: any, p4: any, p5: any, args: Args, execution: ToolExecution) => R,
  options?: ToolSystemOptions,
): ToolSystem<Args, Awaited<R>>;
/** `toolSystem<Args>(params, fn)` with a parameter list whose length is not known to the type checker. */
export function toolSystem<Args, R = unknown>(params: readonly Param[], fn: (...values: any[]) => R, options?: ToolSystemOptions): ToolSystem<Args, Awaited<R>>;
export function toolSystem(params: readonly Param[], fn: (...values: any[]) => unknown, options?: ToolSystemOptions): ToolSystem {
  const where = 'toolSystem(params, fn)';
  if (!Array.isArray(params)) throw new TypeError(`${where}: params must be an array of Res(T) / ResMut(T) / Out(T), got ${describeValue(params)}.`);
  if (typeof fn !== 'function') throw new TypeError(`${where}: fn must be a function, got ${describeValue(fn)}.`);
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError(`${where}: options must be an object like { parameters, borrows }, got ${describeValue(options)}.`);
  }
  // Each option is read once. The System checks and compiles the parameters (and the
  // borrow options) exactly as system() does; its fn is never called by a context.
  const parameters = options?.parameters;
  const sys = new System(fn, params, { name: options?.name, borrows: options?.borrows, borrowTimeoutMs: options?.borrowTimeoutMs }, where);
  const execute = (args: unknown, execution: ToolExecution, ctx: SystemContext): Promise<unknown> => callToolSystem(sys, args, execution, ctx);
  Object.defineProperty(execute, 'name', { value: sys.name });
  Object.defineProperty(execute, 'parameters', { value: parameters, enumerable: true });
  Object.defineProperty(execute, 'params', { value: sys.params, enumerable: true });
  return Object.freeze(execute) as unknown as ToolSystem;
}

/** `tool "refund" (call c1)` when the execution says so, else `tool system "<name>"`. */
function labelOf(sys: System, execution: unknown): string {
  try {
    const name = (execution as ToolExecution | undefined)?.name;
    const callId = (execution as ToolExecution | undefined)?.callId;
    if (typeof name === 'string' && name !== '') return `tool "${name}"${typeof callId === 'string' && callId !== '' ? ` (call ${callId})` : ''}`;
  } catch {
    // a hostile execution object: fall back to the system's own name
  }
  return `tool system "${sys.name}"`;
}

function signalOf(execution: unknown): AbortSignal | undefined {
  try {
    const s = (execution as ToolExecution | undefined)?.signal;
    return s instanceof AbortSignal ? s : undefined;
  } catch {
    return undefined;
  }
}

/** One call of a tool system on its calling context. Never throws. */
function callToolSystem(sys: System, toolArgs: unknown, execution: ToolExecution, ctx: SystemContext): Promise<unknown> {
  const params = sys.params;
  const n = params.length;
  const held: Held = new Array(n);
  const values = new Array(n + 2);
  values[n] = toolArgs;
  values[n + 1] = execution;
  let label = '';
  const fail: ParamFailure = (i, err) => paramFailure(label, label, params, i, err);
  try {
    if (!(ctx instanceof SystemContextClass)) {
      throw new TypeError(`${labelOf(sys, execution)}: the third argument must be the calling SystemContext (execute(args, execution, ctx)), got ${describeValue(ctx)}.`);
    }
    if (ctx.isDisposed) ctx._live(`${labelOf(sys, execution)}`);
    label = labelOf(sys, execution);
    const mode = sys._borrows ?? ctx.server.options.borrows;
    if (mode === 'fail') {
      const fetchers = sys._fetchers;
      let i = 0;
      try {
        for (; i < n; i++) values[i] = fetchers[i](ctx, held);
      } catch (err) {
        release(held, sys._writes);
        throw fail(i, err);
      }
      return callBody(sys, ctx, label, values, held, undefined);
    }
    const reqs = takeNow(ctx, params, values, held, fail);
    if (reqs === undefined) return callBody(sys, ctx, label, values, held, undefined);
    const timeoutMs = sys._borrowTimeoutMs ?? ctx.server.options.borrowTimeoutMs;
    // The call's own abort (its timeout, the caller's signal) also ends the wait: the body
    // of an aborted call must never start later.
    return waitFor(ctx, params, reqs, values, held, sys._writes, label, timeoutMs, fail, signalOf(execution), (hold) => callBody(sys, ctx, label, values, held, hold));
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Runs the body with the borrows taken (by `hold` when it waited); releases them when it settles. Its failure is passed on unchanged. */
function callBody(sys: System, ctx: SystemContext, label: string, values: unknown[], held: Held, hold: Hold | undefined): Promise<unknown> {
  let r: unknown;
  try {
    r = sys.fn(...values);
  } catch (err) {
    releaseAll(held, sys._writes, hold);
    return Promise.reject(err);
  }
  return passResult(ctx, r, held, sys._writes, label, hold);
}
