/**
 * Running one system on a context: fetch (taking borrows) → call → store the output →
 * release the borrows when the call settles.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, isToken, type Token } from '../context/token.js';
import { release, type Held } from './fetch.js';
import { SystemError } from './system-error.js';
import { asSystem, Unit, type System } from './system.js';

/** @internal `ctx.run(system)`: throws a TypeError synchronously for a non-system. */
export function runOn(ctx: SystemContext, value: unknown): Promise<unknown> {
  return runSystemOn(ctx, asSystem(value, 'ctx.run(system)'));
}

/** @internal Runs a known system on `ctx`; never throws synchronously. */
export function runSystemOn(ctx: SystemContext, sys: System): Promise<unknown> {
  let self = sys._this;
  if (sys._owner !== undefined) {
    try {
      self = ctx.resolve(sys._owner as new (...args: any[]) => unknown);
    } catch (err) {
      return Promise.reject(new SystemError('ParamError', sys.name, err, `could not build its receiver with ctx.resolve(${sys._owner.name}): ${messageOf(err)}`));
    }
  }
  const fetchers = sys._fetchers;
  const n = fetchers.length;
  const held: Held = n === 0 ? noHeld : new Array(n);
  const args = new Array(n);
  let i = 0;
  try {
    for (; i < n; i++) args[i] = fetchers[i](ctx, held);
  } catch (err) {
    release(held, sys._writes);
    return Promise.reject(new SystemError('ParamError', sys.name, err));
  }
  let r: unknown;
  try {
    r = sys.fn.apply(self, args);
  } catch (err) {
    release(held, sys._writes);
    return Promise.reject(new SystemError('ExecutionError', sys.name, err));
  }
  if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') {
    return Promise.resolve(r).then(
      (v) => {
        release(held, sys._writes);
        return store(ctx, sys, v);
      },
      (err: unknown) => {
        release(held, sys._writes);
        throw new SystemError('ExecutionError', sys.name, err);
      },
    );
  }
  release(held, sys._writes);
  try {
    return Promise.resolve(store(ctx, sys, r));
  } catch (err) {
    return Promise.reject(err);
  }
}

const noHeld: Held = [];

/** Stores `v` under the system's output key and returns it. */
function store(ctx: SystemContext, sys: System, v: unknown): unknown {
  let key: Token | undefined = sys.output;
  if (key === undefined) {
    if (v === undefined) key = Unit;
    else {
      const ctor = v === null ? undefined : (Object(v) as { constructor?: unknown }).constructor;
      if (!isToken(ctor)) {
        throw new SystemError(
          'ExecutionError',
          sys.name,
          undefined,
          `it returned ${describeValue(v)}, which has no class to store it under; declare the output token: system(params, fn, { output: MY_TOKEN }) or @system({ output: MY_TOKEN })`,
        );
      }
      key = ctor;
    }
  }
  try {
    ctx.outputs.insert(key, v);
  } catch (err) {
    throw new SystemError('ExecutionError', sys.name, err, `its output could not be stored: ${messageOf(err)}`);
  }
  return v;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : describeValue(err);
}
