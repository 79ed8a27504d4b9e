/**
 * ctx.execute(steps): runs systems in order, parallel branches in child contexts,
 * bounded loops; resolves to an ExecutionResult.
 */
import type { SystemContext } from '../context/system-context.js';
import { errorText } from '../util/error-text.js';
import { isThenable } from '../util/is-thenable.js';
import { settle } from '../lifetime/settle.js';
import type { Token } from '../context/token.js';
import { runSystemStep, type OutputSink } from '../system/run.js';
import { SystemError } from '../system/system-error.js';
import { asSystem, System } from '../system/system.js';
import { ExecutionResult } from './execution-result.js';
import { LoopStep, ParallelStep, snapshotSteps, type Step } from './steps.js';

/**
 * The bookkeeping of one execution: how many systems it started and the last output *it*
 * stored on the context it runs on (a system's output, or a parallel step's merge).
 * Concurrent executions on one context each keep their own, so neither takes the other's.
 */
class Run implements OutputSink {
  systems = 0;
  stored = false;
  token: Token | undefined = undefined;
  value: unknown = undefined;
}

/*
 * Cost model: steps that finish synchronously (a system whose body returns a plain
 * value) are run in a plain loop with no promise of their own; only a step that really
 * is asynchronous (an async body, a parallel step, a loop) switches the rest of the
 * sequence onto an async path. So `execute([a, b, c])` of synchronous systems costs one
 * resolved promise, not one per step and per nesting level.
 */

/**
 * @internal `ctx.execute(steps)`. The array is read once (a snapshot) and every step is
 * checked before anything runs; every failure rejects, a disposed context
 * and a non-step included.
 */
export function executeOn(ctx: SystemContext, steps: readonly Step[]): Promise<ExecutionResult> {
  const start = performance.now();
  const run = new Run();
  let pending: Promise<unknown> | undefined;
  try {
    ctx._live('execute()');
    const list = snapshotSteps(steps, 'ctx.execute(steps)');
    pending = runSteps(ctx, list, run, run);
    if (pending === undefined) return Promise.resolve(finish(ctx, run, start));
  } catch (err) {
    return Promise.reject(err);
  }
  return pending.then(() => finish(ctx, run, start));
}

/**
 * Moves this execution's final output (the last output it stored on `ctx`) out of
 * `ctx.outputs` and builds the result. An execution that stored nothing (no steps, a loop
 * whose body never ran) has no final output; whatever ran before stays in `ctx.outputs`.
 * The output is removed only while `ctx.outputs` still holds that very value: a later
 * store under the same token (another execution, a `ctx.run`) is left alone.
 */
function finish(ctx: SystemContext, run: Run, start: number): ExecutionResult {
  if (!run.stored) return new ExecutionResult(run.systems, performance.now() - start, undefined);
  const t = run.token as Token;
  const outputs = ctx.outputs;
  if (outputs.has(t) && Object.is(outputs.get(t), run.value)) outputs.remove(t);
  return new ExecutionResult(run.systems, performance.now() - start, { token: t, value: run.value });
}

/**
 * Runs `steps` in order on `ctx`. Returns `undefined` when every step finished
 * synchronously, else a promise of the rest; may throw synchronously.
 */
function runSteps(ctx: SystemContext, steps: readonly Step[], run: Run, sink: OutputSink | undefined): Promise<unknown> | undefined {
  for (let i = 0; i < steps.length; i++) {
    const p = runStep(ctx, steps[i], run, sink);
    if (p !== undefined) return finishSteps(ctx, steps, i + 1, p, run, sink);
  }
  return undefined;
}

/** The async rest of {@link runSteps}: awaits `pending`, then runs the steps from `from`. */
async function finishSteps(ctx: SystemContext, steps: readonly Step[], from: number, pending: Promise<unknown>, run: Run, sink: OutputSink | undefined): Promise<void> {
  await pending;
  for (let i = from; i < steps.length; i++) {
    const p = runStep(ctx, steps[i], run, sink);
    if (p !== undefined) await p;
  }
}

/**
 * Runs one step; `undefined` when it finished synchronously. `sink` records what a step
 * stores on the execution's own context (branches run on child contexts: none).
 */
function runStep(ctx: SystemContext, step: Step, run: Run, sink: OutputSink | undefined): Promise<unknown> | undefined {
  if (step instanceof ParallelStep) return runParallel(ctx, step, run, sink);
  if (step instanceof LoopStep) return runLoop(ctx, step, run, sink);
  ctx._live('execute()');
  const r = runSystemStep(ctx, step instanceof System ? step : asSystem(step, 'ctx.execute(steps)'), sink);
  // Counted once started: a result exists only when every started system completed.
  run.systems++;
  return r instanceof Promise ? r : undefined;
}

/** {@link runSteps} of a branch, as a promise: a branch must never throw synchronously. */
function branch(ctx: SystemContext, steps: readonly Step[], run: Run): Promise<unknown> | undefined {
  try {
    return runSteps(ctx, steps, run, undefined);
  } catch (err) {
    return Promise.reject(err);
  }
}

async function runParallel(ctx: SystemContext, step: ParallelStep, run: Run, sink: OutputSink | undefined): Promise<void> {
  const children: SystemContext[] = [];
  let failure: { error: unknown } | undefined;
  try {
    for (let i = 0; i < step.branches.length; i++) children.push(ctx.child());
    // Every branch settles before anything is disposed: no branch keeps running on a
    // disposed context. The first failure in branch order is reported.
    const results = await Promise.allSettled(step.branches.map((b, i) => branch(children[i], b, run)));
    for (const r of results) {
      if (r.status === 'rejected') {
        failure = { error: r.reason };
        break;
      }
    }
    if (failure === undefined) {
      const outputs = ctx.outputs;
      for (const c of children) {
        for (const [t, v] of c.outputs.entries()) {
          outputs.insert(t, v);
          if (sink !== undefined) {
            sink.stored = true;
            sink.token = t;
            sink.value = v;
          }
        }
      }
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

async function runLoop(ctx: SystemContext, step: LoopStep, run: Run, sink: OutputSink | undefined): Promise<void> {
  for (let done = 0; ; done++) {
    let stop: boolean;
    try {
      const u = step.until(ctx);
      stop = Boolean(isThenable(u) ? await u : u);
    } catch (err) {
      throw new SystemError('ExecutionError', step.name, err, `its until(ctx) threw after ${done} iteration(s): ${errorText(err)}`);
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
    const p = runSteps(ctx, step.body, run, sink);
    if (p !== undefined) await p;
  }
}
