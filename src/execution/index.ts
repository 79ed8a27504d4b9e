// Execution: ctx.execute(steps) with parallel branches and bounded loops.
export { parallel, loop, ParallelStep, LoopStep, DEFAULT_MAX_ITERATIONS } from './steps.js';
export type { Step, LoopOptions } from './steps.js';
export { ExecutionResult } from './execution-result.js';
export type { ExecutionResultJson } from './execution-result.js';
