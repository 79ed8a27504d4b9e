/**
 * Running one system on a context: fetch (taking borrows) → call → store the output →
 * release the borrows when the call settles.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, isToken, type Token } from '../context/token.js';
import { fillArgs, resolveAll, waitAll } from './acquire.js';
import { Hold, release, tryTake, type Held } from './borrows.js';
import { SystemError } from './system-error.js';
import { asSystem, Unit, type System } from './system.js';

/**
 * @internal `ctx.run(system)`. Every failure rejects (SPEC 10.7): a disposed context
 * (`ContextDisposedError`), a non-system (`TypeError`), a parameter or body failure
 * (`SystemError`).
 */
export function runOn(ctx: SystemContext, value: unknown): Promise<unknown> {
  let sys: System;
  try {
    ctx._live('run()');
    sys = asSystem(value, 'ctx.run(system)');
  } catch (err) {
    return Promise.reject(err);
  }
  return runSystemOn(ctx, sys);
}

/** @internal Runs a known system on `ctx`; never throws synchronously. */
export function runSystemOn(ctx: SystemContext, sys: System): Promise<unknown> {
  try {
    const r = runSystemStep(ctx, sys);
    return r instanceof Promise ? r : Promise.resolve(r);
  } catch (err) {
    return Promise.reject(err);
  }
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
      throw new SystemError('ParamError', sys.name, err, `could not build its receiver with ctx.resolve(${sys._owner.name}): ${messageOf(err)}`);
    }
  }
  const mode = sys._borrows;
  if (mode === 'wait' || (mode === undefined && ctx.server.options.borrows === 'wait')) return runWaiting(ctx, sys, self, sink);
  const fetchers = sys._fetchers;
  const n = fetchers.length;
  const held: Held = n === 0 ? noHeld : new Array(n);
  const args = new Array(n);
  let i = 0;
  try {
    for (; i < n; i++) args[i] = fetchers[i](ctx, held);
  } catch (err) {
    release(held, sys._writes);
    throw new SystemError('ParamError', sys.name, err);
  }
  return call(ctx, sys, self, args, held, sink, undefined);
}

/**
 * Calls the body with its borrows taken, then stores the output and releases them. A
 * body that returns a thenable makes (or, for a waiting run, reuses) a {@link Hold}:
 * tracked on `ctx`, so the context's disposal awaits it and releases its borrows when it
 * gives up (SPEC 10.5), and named by conflict messages while it holds them.
 */
function call(ctx: SystemContext, sys: System, self: unknown, args: unknown[], held: Held, sink: OutputSink | undefined, hold: Hold | undefined): unknown {
  let r: unknown;
  let thenable: boolean;
  try {
    r = sys.fn.apply(self, args);
    thenable = r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function';
  } catch (err) {
    if (hold === undefined) release(held, sys._writes);
    else hold.end();
    throw bodyError(ctx, sys, err);
  }
  if (thenable) {
    const h = hold ?? new Hold(sys._label, ctx, held, sys._writes);
    const p = Promise.resolve(r).then(
      (v) => {
        h.end();
        return store(ctx, sys, v, sink);
      },
      (err: unknown) => {
        h.end();
        throw bodyError(ctx, sys, err);
      },
    );
    if (hold === undefined) {
      h.link();
      h.track(p);
    }
    return p;
  }
  if (hold === undefined) release(held, sys._writes);
  else hold.end();
  return store(ctx, sys, r, sink);
}

/**
 * A run under the `'wait'` rule (SPEC 10.5): every parameter is resolved first (a missing
 * one fails as in §4), then every borrow is taken at once, at once when they can all be
 * granted, else after waiting for them (FIFO per entry, holding none meanwhile).
 */
function runWaiting(ctx: SystemContext, sys: System, self: unknown, sink: OutputSink | undefined): unknown {
  const params = sys.params;
  const n = params.length;
  const held: Held = new Array(n);
  const args = new Array(n);
  const fail = (_i: number, err: unknown): unknown => new SystemError('ParamError', sys.name, err);
  const reqs = resolveAll(ctx, params, args, fail);
  if (tryTake(reqs, held)) {
    fillArgs(ctx, params, reqs, args);
    return call(ctx, sys, self, args, held, sink, undefined);
  }
  const hold = new Hold(sys._label, ctx, held, sys._writes);
  const timeoutMs = sys._borrowTimeoutMs ?? ctx.server.options.borrowTimeoutMs;
  const p = waitAll(ctx, params, reqs, args, hold, timeoutMs, (err) => new SystemError('ParamError', sys.name, err), fail).then(
    () => call(ctx, sys, self, args, held, sink, hold),
    (err: unknown) => {
      hold.end();
      throw err;
    },
  );
  hold.track(p);
  return p;
}

const noHeld: Held = [];

/** The `ExecutionError` for a throw or rejection of the body: its message names the context it ran on. */
function bodyError(ctx: SystemContext, sys: System, err: unknown): SystemError {
  const text = err instanceof Error ? err.message : `threw a non-Error value: ${describeValue(err)}`;
  return new SystemError('ExecutionError', sys.name, err, `${text} (thrown by its body, running on the ${ctx.describe()})`);
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
    ctx.outputs.insert(key, v);
  } catch (err) {
    throw new SystemError('ExecutionError', sys.name, err, `its output could not be stored: ${messageOf(err)}`);
  }
  if (sink !== undefined) {
    sink.stored = true;
    sink.token = key;
    sink.value = v;
  }
  return v;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : describeValue(err);
}
