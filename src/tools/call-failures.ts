/**
 * The failures a call can end with that every phase of the pipeline shares: an unknown
 * (or vanished) tool, a body that threw, an abort that decided the call first.
 */
import { errorText } from '../util/error-text.js';
import { errorResult, type CallState, type Failure } from './execution.js';
import type { ToolResult } from './types.js';

/** @internal The call function found its tool gone (unregistered while a tools/execute listener awaited). */
export class ToolVanished extends Error {
  constructor(readonly toolName: string) {
    super(`unknown tool "${toolName}"`);
  }
}

/** @internal The failure of a call whose tool is unknown to its scope. */
export function unknownTool(name: string): Failure {
  return { code: 'UNKNOWN_TOOL', message: `unknown tool "${name}"` };
}

/** @internal The failure of a call function that threw or rejected with `err`. */
export function thrown(err: unknown): Failure {
  return err instanceof ToolVanished ? unknownTool(err.toolName) : { code: 'EXECUTION_ERROR', message: errorText(err) };
}

/** @internal The result the pipeline hands back once an abort decided the call (ignored: the abort's result won). */
export function decided(state: CallState, callId: string): ToolResult {
  return errorResult(callId, state.failure());
}
