/**
 * The `task` object `agents.runTask({ output, fn })` hands to `fn`: whether the subagent
 * recorded its structured result (the task is then stopped), the value, and a signal that
 * aborts at the stop.
 */
import type { StopLatch } from './stop-latch.js';
import type { CaptureStage } from './stage.js';

/**
 * What `fn(agent, task)` of a task run with `output` receives: read-only, frozen, and
 * changed by polestar only. Once the subagent's capture call succeeded (its final result,
 * after every policy), the task is *stopped*: `stopped` is `true`, `value` holds the
 * recorded value and `stopSignal` is aborted, all by the time that call's
 * `Tools.execute` resolves, and every later tool call of the subagent is denied. No
 * listener can undo it. Stop the model loop on it: `stopWhen: taskStopped(task)` with the
 * AI SDK, `toAgentsSdkTools(tools, { task })` with the OpenAI Agents SDK, or check
 * `task.stopped` in a loop of your own.
 *
 * `V` is the type of the value (a Standard Schema's input type, or what you declared).
 */
export class StructuredTask<V = unknown> {
  readonly #stage: CaptureStage;
  readonly #latch: StopLatch;
  readonly #toolName: string;

  /** @internal Made by `runTask`; there is no other way to make one. */
  constructor(stage: CaptureStage, latch: StopLatch, toolName: string) {
    this.#stage = stage;
    this.#latch = latch;
    this.#toolName = toolName;
    Object.freeze(this);
  }

  /** Whether the subagent recorded its structured result (the task is stopped). Never goes back to `false`. */
  get stopped(): boolean {
    return this.#stage.committed;
  }

  /**
   * The recorded value, deep-frozen (lossless JSON, as the schema validated it);
   * `undefined` until the task is stopped. It stays readable after `fn` settled, also
   * when `fn` threw.
   */
  get value(): V | undefined {
    return this.#stage.value as V | undefined;
  }

  /**
   * Aborts when the task stops (its result was recorded), when `fn` settles, or when the
   * task's owner (its parent agent, or the context of the `Agents` view) is disposed,
   * whichever comes first (the reason says which). Pass it to work that should end with
   * the task.
   */
  get stopSignal(): AbortSignal {
    return this.#latch.signal;
  }

  /** The name of the capture tool the subagent records its result with (`structured_output` unless `output.toolName` says otherwise). */
  get toolName(): string {
    return this.#toolName;
  }
}
