/**
 * One call in flight: the frozen {@link ToolExecution} handed to policy, the body and the
 * observers, and the mutable {@link CallState} behind it that everything able to abort
 * the call (the caller's signal, the timeout, the calling context's disposal, the undoing
 * of the tool's registration) goes through. The state is the call's in-flight record
 * (contract C1): the disposal of the calling context and of the owning context abort it
 * and then await it.
 */
import type { InFlight } from '../context/in-flight.js';
import type { JsonValue } from './lossless-json.js';
import type { ToolAnnotations, ToolErrorCode, ToolExecution, ToolExecutionToken } from './types.js';

const minted = new WeakSet<object>();

/** @internal Whether `v` is a token minted by a tools registry. */
export function isExecutionToken(v: unknown): v is ToolExecutionToken {
  return typeof v === 'object' && v !== null && minted.has(v);
}

function mintToken(): ToolExecutionToken {
  const t = Object.freeze(Object.create(null) as object);
  minted.add(t);
  return t as ToolExecutionToken;
}

const RESOLVED: Promise<void> = Promise.resolve();

/** @internal Why a call was aborted, as the pipeline reports it. */
export interface AbortFailure {
  readonly code: ToolErrorCode;
  readonly message: string;
}

/**
 * @internal The mutable side of one call. Made for every call; the `AbortController`
 * behind `execution.signal` and the promise disposal awaits are made only when read.
 */
export class CallState implements InFlight {
  readonly #name: string;
  readonly #callId: string;
  /** Set by the first abort. */
  aborted = false;
  /** The first abort's reason. */
  reason: unknown = undefined;
  /** The first abort was the tool's `timeoutMs` expiring (the call is `TIMEOUT`). */
  timedOut = false;
  #ac: AbortController | undefined = undefined;
  /**
   * Settles the call at once with the abort's failure: set while an abort can still
   * decide the call (until the body returned), cleared after.
   */
  wake: ((f: AbortFailure) => void) | undefined = undefined;
  /** An abort settled the call (its result is the abort's failure); the pipeline stops at its next step. */
  decided = false;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** The call function is running (its promise has not settled). */
  bodyRunning = false;
  /** The call's result is settled. */
  resultSettled = false;
  #over = false;
  #waiters: (() => void)[] | undefined = undefined;
  /** Run once when the call is over (untracks it everywhere). */
  onOver: (() => void) | undefined = undefined;

  constructor(name: string, callId: string) {
    this.#name = name;
    this.#callId = callId;
  }

  /** For disposal messages: `tool "x" (call c1)`. */
  get label(): string {
    return `tool "${this.#name}" (call ${this.#callId})`;
  }

  /** The signal of `execution.signal`, made on first read (already aborted when the call was). */
  signal(): AbortSignal {
    let ac = this.#ac;
    if (ac === undefined) {
      ac = this.#ac = new AbortController();
      if (this.aborted) ac.abort(this.reason);
    }
    return ac.signal;
  }

  /** Aborts the call (the first reason wins); settles it at once when the body has not returned. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const wake = this.wake;
    if (wake !== undefined) {
      this.wake = undefined;
      wake(this.failure());
    }
    this.#ac?.abort(reason);
  }

  /** Aborts the call as its `timeoutMs` expiry. */
  timeout(ms: number): void {
    if (this.aborted) return;
    const message = `tool "${this.#name}" timed out after ${ms} ms`;
    this.timedOut = true;
    this.abort(new DOMException(message, 'TimeoutError'));
  }

  /** Starts the `timeoutMs` timer (when the call function starts). */
  startTimer(ms: number): void {
    if (this.aborted) return;
    this.#timer = setTimeout(() => this.timeout(ms), ms);
  }

  /** Stops the `timeoutMs` timer, if any. */
  clearTimer(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** The call function settled: from now on an abort no longer decides the call. */
  bodyReturned(): void {
    this.wake = undefined;
    this.bodyRunning = false;
    this.clearTimer();
    this.check();
  }

  /** The failure an abort makes the call: `TIMEOUT` for the timeout, else `EXECUTION_ERROR`. */
  failure(): AbortFailure {
    if (this.timedOut) return { code: 'TIMEOUT', message: (this.reason as DOMException).message };
    return { code: 'EXECUTION_ERROR', message: `tool "${this.#name}" was aborted: ${reasonText(this.reason)}` };
  }

  /** Settles when the call is over: its result settled and its call function not running. Never rejects. */
  get settled(): Promise<unknown> {
    if (this.#over) return RESOLVED;
    return new Promise<void>((resolve) => (this.#waiters ??= []).push(resolve));
  }

  /** Nothing to release: a tool body holds no borrows of its own (a tool system tracks its own). */
  giveUp(): void {}

  /** Checks whether the call is over and, the first time it is, ends it. */
  check(): void {
    if (this.#over || !this.resultSettled || this.bodyRunning) return;
    this.#over = true;
    this.wake = undefined;
    const over = this.onOver;
    this.onOver = undefined;
    over?.();
    const ws = this.#waiters;
    if (ws !== undefined) {
      this.#waiters = undefined;
      for (const w of ws) w();
    }
  }
}

/** The text of an abort reason for `tool "x" was aborted: <reason>`. Never throws. */
export function reasonText(reason: unknown): string {
  try {
    if (reason instanceof Error || reason instanceof DOMException) return reason.message;
    if (reason === undefined) return 'aborted';
    return String(reason);
  } catch {
    return 'aborted';
  }
}

/**
 * @internal The frozen execution. `token` and `signal` live on the prototype and are made
 * on first read (private fields are not properties: freezing the instance leaves them
 * writable), so a call nobody inspects pays for neither.
 */
export class Execution implements ToolExecution {
  readonly callId: string;
  readonly name: string;
  readonly arguments: JsonValue | undefined;
  readonly scope: object | undefined;
  readonly parent: ToolExecutionToken | undefined;
  readonly annotations: ToolAnnotations | undefined;
  #token: ToolExecutionToken | undefined = undefined;
  readonly #state: CallState;

  constructor(
    state: CallState,
    callId: string,
    name: string,
    args: JsonValue | undefined,
    scope: object | undefined,
    parent: ToolExecutionToken | undefined,
    annotations: ToolAnnotations | undefined,
  ) {
    this.#state = state;
    this.callId = callId;
    this.name = name;
    this.arguments = args;
    this.scope = scope;
    this.parent = parent;
    this.annotations = annotations;
    Object.freeze(this);
  }

  /** Fresh for every execution, made on first read. */
  get token(): ToolExecutionToken {
    return (this.#token ??= mintToken());
  }

  /** Never `undefined`; made on first read. */
  get signal(): AbortSignal {
    return this.#state.signal();
  }
}
