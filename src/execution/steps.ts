/**
 * Steps of `ctx.execute([...])`: systems, `parallel(...)` branches and `loop(...)`.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../util/describe-value.js';
import { asSystem, type AnySystem, type SystemFn } from '../system/system.js';

/** One step of an execution: a system (or `@system()` method), a parallel step or a loop. */
export type Step = AnySystem | SystemFn | ParallelStep | LoopStep;

/** A step that runs its branches concurrently, each in its own child context. Made by {@link parallel}. */
export class ParallelStep {
  /** The branches, each a list of steps run in order. */
  readonly branches: readonly (readonly Step[])[];

  /** @internal Use {@link parallel}. */
  constructor(branches: readonly (readonly Step[])[]) {
    this.branches = Object.freeze(branches);
    Object.freeze(this);
  }
}

/** Options of {@link loop}. */
export interface LoopOptions {
  /** Checked before each iteration with the context the loop runs on; true stops the loop. */
  readonly until: (ctx: SystemContext) => boolean | PromiseLike<boolean>;
  /** The body runs at most this many times (default 1000); starting one more fails. */
  readonly maxIterations?: number;
  /** A name for errors (default `loop`). */
  readonly name?: string;
}

/** A step that repeats its body until a condition holds. Made by {@link loop}. */
export class LoopStep {
  /** The steps run on each iteration, in order. */
  readonly body: readonly Step[];
  /** The stop condition, checked before each iteration. */
  readonly until: (ctx: SystemContext) => boolean | PromiseLike<boolean>;
  /** The most iterations allowed. */
  readonly maxIterations: number;
  /** The name used in errors. */
  readonly name: string;

  /** @internal Use {@link loop}. */
  constructor(body: readonly Step[], options: LoopOptions) {
    this.body = Object.freeze(body);
    this.until = options.until;
    this.maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    this.name = options.name ?? 'loop';
    Object.freeze(this);
  }
}

/** The default `maxIterations` of {@link loop}. */
export const DEFAULT_MAX_ITERATIONS = 1000;

/**
 * Runs each branch concurrently in its own `ctx.child()`. A branch reads the parent
 * through `Res` but can not `ResMut` the parent's locals, and does not see its
 * outputs. When every branch succeeded, their outputs are merged into the parent's
 * outputs in branch order (a later branch wins); branch contexts are disposed either way.
 *
 * @example
 * ```ts
 * await ctx.execute([plan, parallel([searchWeb], [searchDocs]), answer]);
 * ```
 */
export function parallel(...branches: (readonly Step[])[]): ParallelStep {
  if (branches.length === 0) throw new TypeError('parallel(...branches): needs at least one branch (an array of steps).');
  return new ParallelStep(branches.map((b, i) => Object.freeze(snapshotSteps(b, `parallel(...): branch #${i}`))));
}

/**
 * Repeats `body` until `options.until(ctx)` is true, checked before each iteration. The
 * body runs at most `maxIterations` times (default 1000); the attempt to start one more
 * fails with a `SystemError`.
 *
 * @example
 * ```ts
 * await ctx.execute([loop([think, act], { until: (c) => c.get(Task).done, maxIterations: 10 })]);
 * ```
 */
export function loop(body: readonly Step[], options: LoopOptions): LoopStep {
  const steps = snapshotSteps(body, 'loop(body, options): body');
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`loop(body, options): options must be { until: (ctx) => boolean, maxIterations? }, got ${describeValue(options)}.`);
  }
  // Each option is read once: what was checked is what runs.
  const until = options.until;
  const max = options.maxIterations;
  const name = options.name;
  if (typeof until !== 'function') {
    throw new TypeError(`loop(body, options): options.until must be a function (ctx) => boolean, got ${describeValue(until)}.`);
  }
  if (max !== undefined && !(Number.isSafeInteger(max) && max >= 0)) {
    throw new TypeError(`loop(body, options): options.maxIterations must be a non-negative integer, got ${describeValue(max)}; a loop always has a bound.`);
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw new TypeError('loop(body, options): options.name must be a non-empty string.');
  }
  return new LoopStep(steps, { until, maxIterations: max, name });
}

/**
 * @internal Reads `steps` once, by index, into a new array, with each system step
 * resolved to its `System`; throws a TypeError naming the first entry that is not a step.
 * Nothing is read from `steps` afterwards, so a later change to the caller's array (or a
 * getter that answers differently the second time) can not change what runs.
 */
export function snapshotSteps(steps: unknown, where: string): Step[] {
  if (!Array.isArray(steps)) throw new TypeError(`${where}: expected an array of steps, got ${describeValue(steps)}.`);
  const n = steps.length;
  const list: Step[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const s: unknown = steps[i];
    list[i] = s instanceof ParallelStep || s instanceof LoopStep ? s : asSystem(s, `${where}, step #${i}`);
  }
  return list;
}
