/**
 * ctx.execute(steps): runs systems in order, parallel branches in child contexts,
 * bounded loops; resolves to an ExecutionResult.
 */
import { randomUUID } from 'node:crypto';
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { settle } from '../disposal/ownership.js';
import { runSystemOn } from '../system/run.js';
import { SystemError } from '../system/system-error.js';
import { asSystem } from '../system/system.js';
import { ExecutionResult } from './execution-result.js';
import { checkSteps, LoopStep, ParallelStep, type Step } from './steps.js';

interface Counter {
  systems: number;
}

/**
 * @internal `ctx.execute(steps)`. The steps are checked before anything runs (a
 * TypeError, thrown synchronously, for a non-step).
 */
export function executeOn(ctx: SystemContext, steps: readonly Step[]): Promise<ExecutionResult> {
  checkSteps(steps, 'ctx.execute(steps)');
  return execute(ctx, steps);
}

async function execute(ctx: SystemContext, steps: readonly Step[]): Promise<ExecutionResult> {
  const runId = randomUUID();
  const start = performance.now();
  const counter: Counter = { systems: 0 };
  await runSteps(ctx, steps, counter);
  const last = ctx.outputs.takeLast();
  return new ExecutionResult(runId, counter.systems, performance.now() - start, last);
}

async function runSteps(ctx: SystemContext, steps: readonly Step[], counter: Counter): Promise<void> {
  for (const step of steps) {
    if (step instanceof ParallelStep) await runParallel(ctx, step, counter);
    else if (step instanceof LoopStep) await runLoop(ctx, step, counter);
    else {
      ctx._live('execute()');
      await runSystemOn(ctx, asSystem(step, 'ctx.execute(steps)'));
      counter.systems++;
    }
  }
}

async function runParallel(ctx: SystemContext, step: ParallelStep, counter: Counter): Promise<void> {
  const children: SystemContext[] = [];
  let failure: { error: unknown } | undefined;
  try {
    for (let i = 0; i < step.branches.length; i++) children.push(ctx.child());
    // Every branch settles before anything is disposed: no branch keeps running on a
    // disposed context. The first failure in branch order is reported.
    const results = await Promise.allSettled(step.branches.map((b, i) => runSteps(children[i], b, counter)));
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
      stop = Boolean(await step.until(ctx));
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
    await runSteps(ctx, step.body, counter);
  }
}
