/**
 * ExecutionResult: what `ctx.execute(steps)` resolves to.
 */
import type { Token } from '../context/token.js';

/**
 * The result of `ctx.execute(steps)`. The final output (the most recently stored one)
 * was moved out of `ctx.outputs`; every other output stays there.
 */
export class ExecutionResult {
  /** A unique id of this execution. */
  readonly runId: string;
  /** How many systems ran to completion (every branch and iteration counted). */
  readonly systemsExecuted: number;
  /** Wall-clock duration of the execution in milliseconds. */
  readonly durationMs: number;
  /** Whether a final output was taken. */
  readonly hasOutput: boolean;
  /** The final output's token, `undefined` when there was none. */
  readonly outputToken: Token | undefined;
  /** The final output's value, `undefined` when there was none. */
  readonly value: unknown;

  /** @internal Made by `ctx.execute`. */
  constructor(runId: string, systemsExecuted: number, durationMs: number, last: { token: Token; value: unknown } | undefined) {
    this.runId = runId;
    this.systemsExecuted = systemsExecuted;
    this.durationMs = durationMs;
    this.hasOutput = last !== undefined;
    this.outputToken = last?.token;
    this.value = last?.value;
    Object.freeze(this);
  }

  /** The final output when its token is `token`, else `undefined`. */
  output<T>(token: Token<T>): T | undefined {
    return this.hasOutput && this.outputToken === token ? (this.value as T) : undefined;
  }
}
