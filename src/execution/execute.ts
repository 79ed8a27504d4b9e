/**
 * ctx.execute(steps): runs systems in order, parallel branches in child contexts,
 * bounded loops; resolves to an ExecutionResult.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { settle } from '../disposal/ownership.js';
import { runSystemStep } from '../system/run.js';
import { SystemError } from '../system/system-error.js';
import { asSystem } from '../system/system.js';
import { ExecutionResult } from './execution-result.js';
import { checkSteps, LoopStep, ParallelStep, type Step } from './steps.js';

interface Counter {
  systems: number;
}

/*
 * Cost model: steps that finish synchronously (a system whose body returns a plain
 * value) are run in a plain loop with no promise of their own; only a step that really
 * is asynchronous (an async body, a parallel step, a loop) switches the rest of the
 * sequence onto an async path. So `execute([a, b, c])` of synchronous systems costs one
 * resolved promise, not one per step and per nesting level.
 */

/**
 * @internal `ctx.execute(steps)`. The steps are checked before anything runs (a
 * TypeError, thrown synchronously, for a non-step).
 */
export function executeOn(ctx: SystemContext, steps: readonly Step[]): Promise<ExecutionResult> {
  checkSteps(steps, 'ctx.execute(steps)');
  const start = performance.now();
  const counter: Counter = { systems: 0 };
  let pending: Promise<unknown> | undefined;
  try {
    pending = runSteps(ctx, steps, counter);
    if (pending === undefined) return Promise.resolve(finish(ctx, counter, start));
  } catch (err) {
    return Promise.reject(err);
  }
  return pending.then(() => finish(ctx, counter, start));
}

/**
 * Moves the final output out and builds the result. Only an execution in which a system
 * ran has a final output: with none (no steps, a loop whose body never ran) the most
 * recent output belongs to whatever ran before, and stays in `ctx.outputs`.
 */
function finish(ctx: SystemContext, counter: Counter, start: number): ExecutionResult {
  const last = counter.systems > 0 ? ctx.outputs.takeLast() : undefined;
  return new ExecutionResult(counter.systems, performance.now() - start, last);
}

/**
 * Runs `steps` in order on `ctx`. Returns `undefined` when every step finished
 * synchronously, else a promise of the rest; may throw synchronously.
 */
function runSteps(ctx: SystemContext, steps: readonly Step[], counter: Counter): Promise<unknown> | undefined {
  for (let i = 0; i < steps.length; i++) {
    const p = runStep(ctx, steps[i], counter);
    if (p !== undefined) return finishSteps(ctx, steps, i + 1, p, counter);
  }
  return undefined;
}

/** The async rest of {@link runSteps}: awaits `pending`, then runs the steps from `from`. */
async function finishSteps(ctx: SystemContext, steps: readonly Step[], from: number, pending: Promise<unknown>, counter: Counter): Promise<void> {
  await pending;
  for (let i = from; i < steps.length; i++) {
    const p = runStep(ctx, steps[i], counter);
    if (p !== undefined) await p;
  }
}

/** Runs one step; `undefined` when it finished synchronously. */
function runStep(ctx: SystemContext, step: Step, counter: Counter): Promise<unknown> | undefined {
  if (step instanceof ParallelStep) return runParallel(ctx, step, counter);
  if (step instanceof LoopStep) return runLoop(ctx, step, counter);
  ctx._live('execute()');
  const r = runSystemStep(ctx, asSystem(step, 'ctx.execute(steps)'));
  // Counted once started: a result exists only when every started system completed.
  counter.systems++;
  return r instanceof Promise ? r : undefined;
}

/** {@link runSteps} as a promise, for a branch that must never throw synchronously. */
function branch(ctx: SystemContext, steps: readonly Step[], counter: Counter): Promise<unknown> | undefined {
  try {
    return runSteps(ctx, steps, counter);
  } catch (err) {
    return Promise.reject(err);
  }
}

async function runParallel(ctx: SystemContext, step: ParallelStep, counter: Counter): Promise<void> {
  const children: SystemContext[] = [];
  let failure: { error: unknown } | undefined;
  try {
    for (let i = 0; i < step.branches.length; i++) children.push(ctx.child());
    // Every branch settles before anything is disposed: no branch keeps running on a
    // disposed context. The first failure in branch order is reported.
    const results = await Promise.allSettled(step.branches.map((b, i) => branch(children[i], b, counter)));
    for (const r of results) {
      if (r.status === 'rejected') {
        failure = { error: r.reason };
        break;
      }
    }
    if (failure === undefined) {
      for (const c of children) for (const [t, v] of c.outputs.entries()) ctx.outputs.insert(t, v);
    }
  } catch (err) {
    failure ??= { error: err };
  }
  const errors: unknown[] = [];
  for (let i = children.length - 1; i >= 0; i--) {
    const c = children[i];
    await settle(() => c.dispose(), errors);
  }
  if (failure !== undefined) throw failure.error;
  if (errors.length > 0) {
    throw new SystemError('ExecutionError', 'parallel', errors.length === 1 ? errors[0] : new AggregateError(errors, 'disposing the branch contexts failed'));
  }
}

async function runLoop(ctx: SystemContext, step: LoopStep, counter: Counter): Promise<void> {
  for (let done = 0; ; done++) {
    let stop: boolean;
    try {
      const u = step.until(ctx);
      stop = Boolean(isThenable(u) ? await u : u);
    } catch (err) {
      throw new SystemError('ExecutionError', step.name, err, `its until(ctx) threw after ${done} iteration(s): ${err instanceof Error ? err.message : describeValue(err)}`);
    }
    if (stop) return;
    if (done >= step.maxIterations) {
      throw new SystemError(
        'ExecutionError',
        step.name,
        undefined,
        `the body already ran maxIterations (${step.maxIterations}) times and until(ctx) is still false; ` +
          `fix the stop condition or raise maxIterations: loop(body, { until, maxIterations })`,
      );
    }
    const p = runSteps(ctx, step.body, counter);
    if (p !== undefined) await p;
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as PromiseLike<unknown>).then === 'function';
}
