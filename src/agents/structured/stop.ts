/**
 * The stop of a task with `output`: once its structured result is committed, a scoped
 * deny-only guard refuses every later tool call of the subagent (the capture tool's
 * included), and the task's stop signal aborts. A guard can only deny, so no listener
 * ordering can let a call through again.
 */
import type { ToolGuard } from '../../tools/types.js';
import type { CaptureStage } from './stage.js';

/**
 * @internal The guard of a task: `undefined` (no opinion) until the stage committed, then
 * a denial naming the task and its capture tool for every call.
 */
export function denyAfterStop(stage: CaptureStage, task: string, toolName: string): ToolGuard {
  let denial: string | undefined;
  return () => (stage.committed ? (denial ??= `${task} already recorded its structured result with "${toolName}"; the task is stopped and runs no more tool calls`) : undefined);
}

/** @internal Why `task.stopSignal` aborts when the result was recorded. */
export function stoppedReason(task: string, toolName: string): DOMException {
  return new DOMException(`${task} stopped: its structured result was recorded with "${toolName}"`, 'AbortError');
}

/** @internal Why `task.stopSignal` aborts when the task's function settled first. */
export function settledReason(task: string): DOMException {
  return new DOMException(`${task} ended: its function settled`, 'AbortError');
}
