/**
 * Running one system on a context: fetch (taking borrows) → call → store the output →
 * release the borrows when the call settles. The steps it shares with `withMut` /
 * `withRes` and tool systems are the borrow runner's (`borrow-runner.ts`).
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, isToken, type Token } from '../context/token.js';
import type { ParamFailure } from './acquire.js';
import { holdUntilSettled, paramFailure, releaseAll, takeNow, thrownText, waitFor } from './borrow-runner.js';
import { release, type Held, type Hold } from './borrows.js';
import { SystemError } from './system-error.js';
import { asSystem, System, Unit } from './system.js';
import { errorText } from '../util/error-text.js';
import { isThenable } from '../util/is-thenable.js';

/**
 * @internal `ctx.run(system)`. Every failure rejects: a disposed context
 * (`ContextDisposedError`), a non-system (`TypeError`), a parameter or body failure
 * (`SystemError`).
 */
export function runOn(ctx: SystemContext, value: unknown): Promise<unknown> {
  try {
    ctx._live('run()');
    const r = runSystemStep(ctx, value instanceof System ? value : asSystem(value, 'ctx.run(system)'));
    return r instanceof Promise ? r : fulfilled(r);
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * A promise of `v`, as `Promise.resolve(v)` makes it (for a run's output, which is no
 * `Promise`). An async function's return is the cheaper way to make one in V8
 * (docs/performance.md, "Why the code looks like this").
 */
async function fulfilled(v: unknown): Promise<unknown> {
  return v;
}

/**
 * @internal Where `ctx.execute` learns what a system stored: the token and value of the
 * output, set when it is stored.
 */
export interface OutputSink {
  stored: boolean;
  token: Token | undefined;
  value: unknown;
}

/**
 * @internal Runs a known system on `ctx` without adding a promise layer of its own:
 * when the body returns a non-thenable, the output is stored and returned directly
 * (never a `Promise`, since a thenable result is awaited first); when it returns a
 * thenable, a `Promise` of the output is returned. A failure before the body's promise
 * (receiver, fetch, a synchronous throw, storing a synchronous output) throws the
 * `SystemError` synchronously. Borrows are released in every case.
 */
export function runSystemStep(ctx: SystemContext, sys: System, sink?: OutputSink): unknown {
  let self = sys._this;
  if (sys._owner !== undefined) {
    try {
      self = ctx.resolve(sys._owner as new (...args: any[]) => unknown);
    } catch (err) {
      throw new SystemError('ParamError', sys.name, err, `could not build its receiver with ctx.resolve(${sys._owner.name}): ${errorText(err)}`, sys._label);
    }
  }
  const mode = sys._borrows;
  if (mode === 'wait' || (mode === undefined && ctx.server.options.borrows === 'wait')) return runWaiting(ctx, sys, self, sink);
  // The hot path. Up to four parameters are fetched into locals and passed with `call`
  // (no argument array, no `apply`); the borrow array is reused by the next run of the
  // same system once a synchronous run gave it back. `i` counts the parameters fetched,
  // for the message of the one that fails.
  const f = sys._fetchers;
  const n = f.length;
  const spare = sys._spare;
  let held = spare.held;
  if (held === undefined) held = new Array(n);
  else spare.held = undefined;
  let a0: unknown, a1: unknown, a2: unknown, a3: unknown;
  let rest: unknown[] | undefined;
  let i = 0;
  try {
    if (n > 0) {
      a0 = f[0](ctx, held);
      if (n > 1) {
        i = 1;
        a1 = f[1](ctx, held);
        if (n > 2) {
          i = 2;
          a2 = f[2](ctx, held);
          if (n > 3) {
            i = 3;
            a3 = f[3](ctx, held);
            if (n > 4) {
              rest = [a0, a1, a2, a3];
              for (i = 4; i < n; i++) rest.push(f[i](ctx, held));
            }
          }
        }
      }
    }
  } catch (err) {
    release(held, sys._writes);
    spare.held = held;
    throw paramFailure(sys.name, sys._label, sys.params, i, err);
  }
  let r: unknown;
  const fn = sys.fn;
  try {
    switch (n) {
      case 0:
        r = fn.call(self);
        break;
      case 1:
        r = fn.call(self, a0);
        break;
      case 2:
        r = fn.call(self, a0, a1);
        break;
      case 3:
        r = fn.call(self, a0, a1, a2);
        break;
      case 4:
        r = fn.call(self, a0, a1, a2, a3);
        break;
      default:
        r = fn.apply(self, rest as unknown[]);
    }
  } catch (err) {
    release(held, sys._writes);
    spare.held = held;
    throw bodyError(ctx, sys, err);
  }
  if (isThenable(r)) {
    return holdUntilSettled(ctx, r, held, sys._writes, sys._label, undefined, sys, sink, store, bodyError);
  }
  release(held, sys._writes);
  spare.held = held;
  const key = sys.output;
  if (key !== undefined && sink === undefined && ctx._state === 0) {
    // the usual run: a declared output on a live context (storing it can not fail)
    ctx._outputs()._store(key, r);
    return r;
  }
  return store(ctx, sys, r, sink);
}

/** Calls the body of a waiting run, its borrows `held` taken (by `hold` when it waited), then stores the output. */
function callWaited(ctx: SystemContext, sys: System, self: unknown, args: unknown[], held: Held, hold: Hold | undefined, sink: OutputSink | undefined): unknown {
  let r: unknown;
  try {
    r = sys.fn.apply(self, args);
  } catch (err) {
    releaseAll(held, sys._writes, hold);
    throw bodyError(ctx, sys, err);
  }
  if (isThenable(r)) {
    return holdUntilSettled(ctx, r, held, sys._writes, sys._label, hold, sys, sink, store, bodyError);
  }
  releaseAll(held, sys._writes, hold);
  return store(ctx, sys, r, sink);
}

/**
 * A run under the `'wait'` rule: every parameter is resolved first (a missing
 * one fails as a plain run's would), then every borrow is taken at once, at once when they can all be
 * granted, else after waiting for them (FIFO per entry, holding none meanwhile).
 */
function runWaiting(ctx: SystemContext, sys: System, self: unknown, sink: OutputSink | undefined): unknown {
  const params = sys.params;
  const n = params.length;
  const held: Held = new Array(n);
  const args = new Array(n);
  const fail: ParamFailure = (i, err) => paramFailure(sys.name, sys._label, params, i, err);
  const reqs = takeNow(ctx, params, args, held, fail);
  if (reqs === undefined) return callWaited(ctx, sys, self, args, held, undefined, sink); // granted at once
  const timeoutMs = sys._borrowTimeoutMs ?? ctx.server.options.borrowTimeoutMs;
  return waitFor(ctx, params, reqs, args, held, sys._writes, sys._label, timeoutMs, fail, undefined, (hold) => callWaited(ctx, sys, self, args, held, hold, sink));
}

/** The `ExecutionError` for a throw or rejection of the body: its message names the context it ran on. */
function bodyError(ctx: SystemContext, sys: System, err: unknown): SystemError {
  return new SystemError('ExecutionError', sys.name, err, `${thrownText(err)} (thrown by its body, running on the ${ctx.describe()})`);
}

/** Stores `v` under the system's output key and returns it. */
function store(ctx: SystemContext, sys: System, v: unknown, sink: OutputSink | undefined): unknown {
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
    ctx.outputs._store(key, v);
  } catch (err) {
    throw new SystemError('ExecutionError', sys.name, err, `its output could not be stored: ${errorText(err)}`);
  }
  if (sink !== undefined) {
    sink.stored = true;
    sink.token = key;
    sink.value = v;
  }
  return v;
}
