/**
 * ExecutionResult: what `ctx.execute(steps)` resolves to.
 */
import { randomUUID } from 'node:crypto';
import type { Token } from '../context/token.js';

/** What `JSON.stringify(result)` shows of an {@link ExecutionResult} (the token is left out). */
export interface ExecutionResultJson {
  /** The execution's unique id. */
  readonly runId: string;
  /** How many systems ran to completion. */
  readonly systemsExecuted: number;
  /** Wall-clock duration in milliseconds. */
  readonly durationMs: number;
  /** Whether a final output was taken. */
  readonly hasOutput: boolean;
  /** The final output's value, `undefined` when there was none. */
  readonly value: unknown;
}

/**
 * The result of `ctx.execute(steps)`. The final output (the most recently stored one)
 * was moved out of `ctx.outputs`; every other output stays there.
 */
export class ExecutionResult {
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

  /** The run id, made on first read (a UUID costs more than a whole small execution). */
  #runId: string | undefined;

  /** @internal Made by `ctx.execute`. */
  constructor(systemsExecuted: number, durationMs: number, last: { token: Token; value: unknown } | undefined) {
    this.systemsExecuted = systemsExecuted;
    this.durationMs = durationMs;
    this.hasOutput = last !== undefined;
    this.outputToken = last?.token;
    this.value = last?.value;
    Object.freeze(this);
  }

  /** A unique id of this execution (a random UUID, made when first read, then fixed). */
  get runId(): string {
    return (this.#runId ??= randomUUID());
  }

  /** The fields `JSON.stringify` shows, `runId` included (a getter, so not an own property); the token is left out as before. */
  toJSON(): ExecutionResultJson {
    return { runId: this.runId, systemsExecuted: this.systemsExecuted, durationMs: this.durationMs, hasOutput: this.hasOutput, value: this.value };
  }

  /** The final output when its token is `token`, else `undefined`. */
  output<T>(token: Token<T>): T | undefined {
    return this.hasOutput && this.outputToken === token ? (this.value as T) : undefined;
  }
}
