// PLACEHOLDER (replaced by the execution work).
import type { SystemContext } from '../context/system-context.js';
import type { Step } from './steps.js';
import type { ExecutionResult } from './execution-result.js';
/** @internal placeholder */
export function executeOn(_ctx: SystemContext, _steps: readonly Step[]): Promise<ExecutionResult> {
  return Promise.reject(new Error('execute: not built yet'));
}
