/**
 * One call in flight: the frozen {@link ToolExecution} handed to policy, the body and the
 * observers, and the mutable {@link CallState} behind it that everything able to abort
 * the call (the caller's signal, the timeout, the calling context's disposal, the undoing
 * of the tool's registration) goes through. The state is a member of the in-flight groups
 * of the calling and the owning context (see in-flight.ts).
 */
import type { LayerEntry } from '../scope/layers.js';
import type { CallGroup } from './in-flight.js';
import type { JsonValue } from '../util/lossless-json.js';
import type { Tool, ToolAnnotations, ToolErrorCode, ToolExecution, ToolExecutionToken, ToolResult } from './types.js';

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

/** @internal Why a call failed. */
export interface Failure {
  readonly code: ToolErrorCode;
  readonly message: string;
}

/** @internal The frozen error result of a call that failed with `f`. */
export function errorResult(callId: string, f: Failure): ToolResult {
  return Object.freeze({ callId, content: `Error: ${f.message}`, isError: true, error: Object.freeze({ code: f.code, message: f.message }) });
}

/**
 * @internal The mutable side of one call: everything able to abort it goes through
 * {@link CallState.abort}. The `AbortController` behind `execution.signal` is made only
 * when the signal is read (or never). The call is *over* once its result settled and its
 * call function is not running; then it leaves its {@link CallGroup}s.
 */
export class CallState {
  readonly name: string;
  readonly callId: string;
  /**
   * The registration being called (`undefined` for a call refused before resolution):
   * what undoing it aborts. A registration, not the stored `Tool`, which registrations of
   * the same definition may share. Dropped when the call is over: the entry holds its owner
   * context, and a kept execution must not keep a context alive.
   */
  registration: LayerEntry<Tool> | undefined;
  /** Set by the first abort. */
  aborted = false;
  /** The first abort's reason. */
  reason: unknown = undefined;
  /** The first abort was the tool's `timeoutMs` expiring (the call is `TIMEOUT`). */
  timedOut = false;
  /** An abort settled the call (its result is the abort's failure); the pipeline stops at its next step. */
  decided = false;
  /** The call function returned (or threw): from then on an abort no longer decides the call. */
  returned = false;
  /** The call function is running (its promise has not settled). */
  bodyRunning = false;
  /** The call's result is settled. */
  resultSettled = false;
  /** The call's authoritative final result, set right before the `tools/result` observers hear it. */
  final: ToolResult | undefined = undefined;
  /** The call is over (see the class). */
  over = false;
  /** Resolves the call's result; cleared once used. */
  resolve: ((r: ToolResult) => void) | undefined = undefined;
  /** The pipeline is running synchronously (no promise for the result yet): an abort records {@link syncResult}. */
  syncPhase = false;
  /** The result an abort decided while {@link syncPhase}. */
  syncResult: ToolResult | undefined = undefined;
  /** The caller's signal and the listener added to it, removed when the call is over. */
  callerSignal: AbortSignal | undefined = undefined;
  onCallerAbort: (() => void) | undefined = undefined;
  /** Group links: the calling context's group (`g1`) and the owning context's (`g2`, when another). */
  g1: CallGroup | undefined = undefined;
  p1: CallState | undefined = undefined;
  n1: CallState | undefined = undefined;
  g2: CallGroup | undefined = undefined;
  p2: CallState | undefined = undefined;
  n2: CallState | undefined = undefined;
  /** The `polestar:tool` context object of a traced call (`undefined` when nobody subscribed): what the body wrapper is given. */
  trace: object | undefined = undefined;
  /** The execution's `token`, made on its first read. */
  token: ToolExecutionToken | undefined = undefined;
  #ac: AbortController | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(name: string, callId: string, registration: LayerEntry<Tool> | undefined) {
    this.name = name;
    this.callId = callId;
    this.registration = registration;
  }

  /** For disposal messages: `tool "x" (call c1)`. */
  get label(): string {
    return `tool "${this.name}" (call ${this.callId})`;
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

  /**
   * Aborts the call (the first reason wins): `execution.signal` aborts and, unless the
   * call function already returned, the call settles at once with the abort's failure.
   */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const r = this.resolve;
    if ((r !== undefined || this.syncPhase) && !this.returned) {
      this.resolve = undefined;
      this.decided = true;
      const failed = errorResult(this.callId, this.failure());
      if (r !== undefined) r(failed);
      else this.syncResult = failed;
      this.resultSettled = true;
      this.check();
    }
    this.#ac?.abort(reason);
  }

  /** Aborts the call as its `timeoutMs` expiry. */
  timeout(ms: number): void {
    if (this.aborted) return;
    const message = `tool "${this.name}" timed out after ${ms} ms`;
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

  /** The call function settled. */
  bodyReturned(): void {
    this.returned = true;
    this.bodyRunning = false;
    this.clearTimer();
    this.check();
  }

  /** The pipeline produced `r` (ignored when an abort decided the call first). */
  settle(r: ToolResult): void {
    const res = this.resolve;
    if (res !== undefined) {
      this.resolve = undefined;
      res(r);
    }
    this.resultSettled = true;
    this.check();
  }

  /** The failure an abort makes the call: `TIMEOUT` for the timeout, else `EXECUTION_ERROR`. */
  failure(): Failure {
    if (this.timedOut) return { code: 'TIMEOUT', message: (this.reason as DOMException).message };
    return { code: 'EXECUTION_ERROR', message: `tool "${this.name}" was aborted: ${reasonText(this.reason)}` };
  }

  /** Checks whether the call is over and, the first time it is, ends it: it leaves its groups. */
  check(): void {
    if (this.over || !this.resultSettled || this.bodyRunning) return;
    this.over = true;
    this.resolve = undefined;
    this.registration = undefined;
    this.g1?.leave1(this);
    this.g2?.leave2(this);
    const s = this.callerSignal;
    if (s !== undefined) {
      this.callerSignal = undefined;
      s.removeEventListener('abort', this.onCallerAbort as () => void);
      this.onCallerAbort = undefined;
    }
    this.clearTimer();
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

  /**
   * @internal The authoritative final result of `execution` once the `tools/result`
   * observers are hearing it (a result an observer hears through an emit of its own is not
   * it); `undefined` before, and for an execution the pipeline did not make.
   */
  static _finalResult(execution: ToolExecution): ToolResult | undefined {
    return execution instanceof Execution ? execution.#state.final : undefined;
  }

  /** Fresh for every execution, made on first read. */
  get token(): ToolExecutionToken {
    return (this.#state.token ??= mintToken());
  }

  /** Never `undefined`; made on first read. */
  get signal(): AbortSignal {
    return this.#state.signal();
  }
}
