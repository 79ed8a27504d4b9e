/**
 * The stage of a task's structured result: what the capture tool's body received, kept
 * against the exact execution that ran it, and committed only when that execution's final
 * result (the `tools/result` boundary) is a success. The first commit wins; nothing undoes
 * it.
 */
import { Execution } from '../../tools/execution.js';
import type { ToolExecution, ToolResult } from '../../tools/types.js';
import type { JsonValue } from '../../util/lossless-json.js';

/**
 * @internal The stage and commit table of one task. Keyed by the `ToolExecution` object
 * itself (a `WeakMap`: an abandoned execution is not kept alive), so a call that reuses
 * another's call id never reaches its staged value.
 */
export class CaptureStage {
  readonly #staged = new WeakMap<ToolExecution, JsonValue>();
  #committed = false;
  #value: JsonValue | undefined = undefined;
  readonly #onCommit: () => void;

  /** @param onCommit - called once, synchronously, when a value is committed. */
  constructor(onCommit: () => void) {
    this.#onCommit = onCommit;
  }

  /** Whether a value was committed. */
  get committed(): boolean {
    return this.#committed;
  }

  /** The committed value (deep-frozen lossless JSON); `undefined` before the commit. */
  get value(): JsonValue | undefined {
    return this.#value;
  }

  /**
   * Stages `value` (the execution's validated, deep-frozen arguments) against `execution`.
   *
   * @throws TypeError for an execution the pipeline did not make (the tool's `execute`
   *   called by hand); Error once a value is committed (a call that passed the guard before
   *   the commit).
   */
  stage(execution: ToolExecution, value: JsonValue, toolName: string): void {
    if (!(execution instanceof Execution)) {
      throw new TypeError(`the capture tool "${toolName}" records a result only when it runs through Tools.execute`);
    }
    if (this.#committed) throw new Error(`a structured result was already recorded with "${toolName}"; this call records nothing`);
    this.#staged.set(execution, value);
  }

  /**
   * The final result of `execution` (a `tools/result` observer): a staged value is
   * dropped from the stage, and committed when `result` is a success and nothing was
   * committed before. Returns whether it committed now.
   */
  settle(execution: ToolExecution, result: ToolResult): boolean {
    const staged = this.#staged;
    if (!staged.has(execution)) return false;
    // Only the pipeline's own final result counts: a `tools/result` someone emits by hand is not it.
    if (Execution._finalResult(execution) !== result) return false;
    const value = staged.get(execution) as JsonValue;
    staged.delete(execution);
    if (this.#committed || result.isError) return false;
    this.#committed = true;
    this.#value = value;
    this.#onCommit();
    return true;
  }
}
