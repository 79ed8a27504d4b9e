/**
 * The execution pipeline of `Tools.execute`:
 *
 * snapshot the call into a frozen execution → resolve the tool (UNKNOWN_TOOL, also for a
 * tool the model was not `shown`) → lossless arguments and JSON-Schema validation
 * (INVALID_ARGS) → `tools/pre-execute` waterfall (allow / deny / ask → `Approval`) →
 * guards (global, then the scope's) → `tools/execute` waterfall over the call function,
 * run under the timeout → `tools/post-execute` waterfall (accept / block) → `tools/result`
 * observers.
 *
 * Every phase up to the body's return is covered by the call's abort: the
 * caller's signal, `timeoutMs`, the calling context's disposal and the undoing of the
 * tool's registration settle the call at once. The call is tracked on the calling
 * context and on the context owning the tool's registration, so their disposal aborts
 * and then awaits it.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { isThenable } from '../events/bus.js';
import type { LayerEntry } from '../scope/layers.js';
import { isReadableScope } from '../scope/live.js';
import { Approval } from './approval.js';
import { CallState, Execution, errorResult, isExecutionToken, type Failure } from './execution.js';
import { NotLosslessJsonError, snapshotJson, type JsonValue } from './lossless-json.js';
import { readShown, wasShown } from './shown.js';
import type { ToolRegistry } from './tools.js';
import type { Tool, ToolCallFunction, ToolExecution, ToolExecutionToken, ToolResult } from './types.js';
import { Agent } from '../agents/agent.js';
import { toolChannel, trace, type Mutable, type ToolTraceContext } from '../observability/channels.js';
import { bodyWrapper } from '../observability/wrap.js';

export { isExecutionToken };

/** The call function found its tool gone (unregistered while a tools/execute listener awaited). */
class ToolVanished extends Error {
  constructor(readonly toolName: string) {
    super(`unknown tool "${toolName}"`);
  }
}

function unknownTool(name: string): Failure {
  return { code: 'UNKNOWN_TOOL', message: `unknown tool "${name}"` };
}

/** The failure of a call function that threw or rejected with `err`. */
function thrown(err: unknown): Failure {
  return err instanceof ToolVanished ? unknownTool(err.toolName) : { code: 'EXECUTION_ERROR', message: messageOf(err) };
}

function messageOf(err: unknown): string {
  try {
    if (err instanceof Error) return err.message;
    return String(err);
  } catch {
    return describeValue(err);
  }
}

/** Turns a tool (or listener) result value into content; throws when it is not lossless JSON. */
export function normalizeContent(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(snapshotJson(value, 'the tool result', 'result'));
}

/**
 * The successful result of a body that returned `value`: its content and, unless it is
 * `undefined`, its deep-frozen snapshot as `output`. Throws when it is not lossless JSON.
 */
function successResult(callId: string, value: unknown): ToolResult {
  if (typeof value === 'string') return Object.freeze({ callId, content: value, isError: false, output: value });
  if (value === undefined) return Object.freeze({ callId, content: '', isError: false });
  const output = snapshotJson(value, 'the tool result', 'result');
  return Object.freeze({ callId, content: JSON.stringify(output), isError: false, output });
}

/** The fields of a tool call, in the order they are read. */
const CALL_FIELDS = ['callId', 'name', 'arguments', 'scope', 'parent', 'signal'] as const;

/** The call's fields from index `from` on (by {@link CALL_FIELDS} index), each read on its own; a throwing one is reported and `undefined`. */
function readRest(call: Record<string, unknown>, from: number, failed: (key: string, err: unknown) => void): unknown[] {
  const out: unknown[] = [];
  for (let i = from; i < CALL_FIELDS.length; i++) {
    const key = CALL_FIELDS[i] as string;
    try {
      out[i] = call[key];
    } catch (err) {
      failed(key, err);
    }
  }
  return out;
}

/** @internal Runs one call. Never throws or rejects. */
export function executeCall(reg: ToolRegistry, ctx: SystemContext, call: unknown, options?: unknown): Promise<ToolResult> {
  try {
    return startCall(reg, ctx, call, options);
  } catch (err) {
    // never expected (every read of the input is guarded); kept so that execute can never throw
    return Promise.resolve(errorResult('', { code: 'EXECUTION_ERROR', message: messageOf(err) }));
  }
}

/** The synchronous start of a call: the input's snapshot and the execution, then the rest of it (traced when `polestar:tool` has subscribers). */
function startCall(reg: ToolRegistry, ctx: SystemContext, call: unknown, options: unknown): Promise<ToolResult> {
  // ---- snapshot the input (each field read once)
  let callId = '';
  let name = '';
  let scope = ctx._scopeKey;
  let parent: ToolExecutionToken | undefined;
  let signal: AbortSignal | undefined;
  let args: JsonValue | undefined;
  let failure: Failure | undefined;
  let tool: Tool | undefined;
  let registration: LayerEntry<Tool> | undefined;
  if (call === null || typeof call !== 'object') {
    failure ??= { code: 'INVALID_ARGS', message: `a tool call must be an object { callId, name, arguments }, got ${describeValue(call)}` };
  } else {
    // Each field read once, in this order; a throwing one is refused and the rest still read.
    const c = call as Record<string, unknown>;
    let rawId: unknown, rawName: unknown, rawArgs: unknown, rawScope: unknown, rawParent: unknown, rawSignal: unknown;
    let at = 0;
    try {
      rawId = c.callId;
      at = 1;
      rawName = c.name;
      at = 2;
      rawArgs = c.arguments;
      at = 3;
      rawScope = c.scope;
      at = 4;
      rawParent = c.parent;
      at = 5;
      rawSignal = c.signal;
    } catch (err) {
      failure ??= { code: 'INVALID_ARGS', message: `reading the call's "${CALL_FIELDS[at] as string}" threw: ${messageOf(err)}` };
      const rest = readRest(c, at + 1, (key, e) => void (failure ??= { code: 'INVALID_ARGS', message: `reading the call's "${key}" threw: ${messageOf(e)}` }));
      if (at < 1) rawName = rest[1];
      if (at < 2) rawArgs = rest[2];
      if (at < 3) rawScope = rest[3];
      if (at < 4) rawParent = rest[4];
      if (at < 5) rawSignal = rest[5];
    }
    if (typeof rawId === 'string') callId = rawId;
    else if (typeof rawId === 'number' && Number.isFinite(rawId)) callId = String(rawId);
    else failure ??= { code: 'INVALID_ARGS', message: `callId must be a string, got ${describeValue(rawId)}` };
    if (rawScope !== undefined) {
      if (rawScope === null || (typeof rawScope !== 'object' && typeof rawScope !== 'function')) {
        failure ??= { code: 'INVALID_ARGS', message: `scope must be a scope key (an object) or omitted, got ${describeValue(rawScope)}` };
      } else if (!isReadableScope(ctx, rawScope)) {
        // An explicit scope is the view's own or a live scope key; anything
        // else (a model's `scope: {}`, a disposed agent's key) is refused, never read as
        // the bare global layer.
        failure ??= {
          code: 'INVALID_ARGS',
          message: `scope ${describeValue(rawScope)} is not a live scope key: pass the key of a live scope (createScope, an agent's key) or omit scope to use the view's own`,
        };
      } else scope = rawScope;
    }
    if (rawParent !== undefined) {
      if (isExecutionToken(rawParent)) parent = rawParent;
      else failure ??= { code: 'INVALID_ARGS', message: 'parent must be the token of an enclosing execution (execution.token)' };
    }
    if (rawSignal !== undefined) {
      if (rawSignal instanceof AbortSignal) signal = rawSignal;
      else failure ??= { code: 'INVALID_ARGS', message: `signal must be an AbortSignal, got ${describeValue(rawSignal)}` };
    }
    if (typeof rawName === 'string') name = rawName;
    else failure ??= { code: 'UNKNOWN_TOOL', message: `unknown tool ${describeValue(rawName)}` };
    let shown: ReturnType<typeof readShown>;
    if (options !== undefined) {
      shown = readShown(options, name);
      if (typeof shown === 'string') failure ??= { code: 'INVALID_ARGS', message: shown };
    }
    if (failure === undefined) {
      let argsFailure: Failure | undefined;
      try {
        args = snapshotJson(rawArgs, 'tool arguments', 'arguments');
      } catch (err) {
        argsFailure = { code: 'INVALID_ARGS', message: `invalid arguments for tool "${name}": ${messageOf(err)}` };
      }
      // A disposed context sees no tools: its scope's restrictions and guards are gone,
      // so resolving for it would fall back to the bare global layer.
      registration = ctx.isDisposed ? undefined : reg.lookup(scope, name);
      // What the model was not shown can not run, as if it did not exist.
      if (registration !== undefined && shown !== undefined && typeof shown !== 'string' && !wasShown(shown, name)) registration = undefined;
      tool = registration?.value;
      if (tool === undefined) failure ??= unknownTool(name);
      else if (argsFailure !== undefined) failure = argsFailure;
      else {
        let invalid: string | undefined;
        try {
          invalid = reg.validate(tool, args);
        } catch (err) {
          invalid = messageOf(err);
        }
        if (invalid !== undefined) failure ??= { code: 'INVALID_ARGS', message: `invalid arguments for tool "${name}": ${invalid}` };
      }
    }
  }

  // ---- the execution: frozen; its token and signal are made on first read
  // a refused call never runs, so it is never over: it must not hold the registration
  // (whose entry holds its owner context) for as long as something keeps its execution
  const state = new CallState(name, callId, failure === undefined ? registration : undefined);
  const execution = new Execution(state, callId, name, args, scope, parent, failure === undefined ? tool?.annotations : undefined);
  if (toolChannel.hasSubscribers) return traceCall(reg, ctx, state, execution, failure, tool, signal);
  return runCall(reg, ctx, state, execution, failure, tool, signal);
}

/** {@link runCall} as one `polestar:tool` trace, its context object handed to the body wrapper. */
function traceCall(
  reg: ToolRegistry,
  ctx: SystemContext,
  state: CallState,
  execution: Execution,
  failure: Failure | undefined,
  tool: Tool | undefined,
  signal: AbortSignal | undefined,
): Promise<ToolResult> {
  const agentId = agentIdOf(ctx, execution.scope);
  const context: Mutable<ToolTraceContext> = agentId === undefined ? { call: execution, result: undefined } : { call: execution, agentId, result: undefined };
  state.trace = context;
  return trace(toolChannel, context, ctx.server, () => runCall(reg, ctx, state, execution, failure, tool, signal));
}

/** The agent a call is made for: its scope's, else the calling context's nearest one. */
function agentIdOf(ctx: SystemContext, scope: object | undefined): string | undefined {
  return Agent._is(scope) ? scope.id : Agent._nearest(ctx)?.id;
}

/** The call after its snapshot: run (unless refused), then the `tools/result` observers. Never rejects. */
async function runCall(
  reg: ToolRegistry,
  ctx: SystemContext,
  state: CallState,
  execution: Execution,
  failure: Failure | undefined,
  tool: Tool | undefined,
  signal: AbortSignal | undefined,
): Promise<ToolResult> {
  const { callId, name, scope } = execution;
  let result: ToolResult;
  if (failure !== undefined) result = errorResult(callId, failure);
  else {
    try {
      const tracked = track(reg, ctx, state, execution, tool as Tool, signal);
      result = tracked instanceof Promise ? await tracked : tracked;
    } catch (err) {
      // never expected (track never rejects); kept so that execute can never reject
      result = errorResult(callId, { code: 'EXECUTION_ERROR', message: messageOf(err) });
    }
  }

  // ---- observers: once for every call, each failure contained and logged
  if (reg.bus.hasListeners('tools/result', scope)) {
    try {
      const errors = await reg.bus.emit(scope, 'tools/result', [execution, result]);
      for (const e of errors) reg.bus.report(e, `a tools/result observer of "${name}" (call ${callId}) failed`);
    } catch (err) {
      reg.bus.report(err, `the tools/result observers of "${name}" (call ${callId}) could not be called`);
    }
  }
  return result;
}

/**
 * Runs the pipeline of a resolved call with everything that can abort it wired to its
 * state. The result itself when the pipeline (or an abort) decided the call synchronously;
 * otherwise a promise resolved the moment an abort decides it, or when the pipeline
 * finishes. Never throws or rejects.
 */
function track(
  reg: ToolRegistry,
  ctx: SystemContext,
  state: CallState,
  execution: Execution,
  tool: Tool,
  callerSignal: AbortSignal | undefined,
): ToolResult | Promise<ToolResult> {
  // Join the in-flight groups of the calling and the owning context: their disposal
  // aborts the call (at once, when it already started) and awaits it.
  reg.groupOf(ctx).join1(state);
  // resolved in this same synchronous step: the registration is live, its ctx owns it
  const owner = (state.registration as LayerEntry<Tool>).ctx;
  if (owner !== ctx) reg.groupOf(owner).join2(state);
  if (callerSignal !== undefined) {
    // An already-aborted caller signal stops the call before anything runs (never asks Approval).
    if (callerSignal.aborted) state.abort(callerSignal.reason);
    else {
      const onAbort = (): void => state.abort(callerSignal.reason);
      state.callerSignal = callerSignal;
      state.onCallerAbort = onAbort;
      callerSignal.addEventListener('abort', onAbort, { once: true });
    }
  }
  if (state.aborted) {
    state.decided = true;
    const failed = errorResult(execution.callId, state.failure());
    state.resultSettled = true;
    state.check();
    return failed;
  }
  // While the pipeline runs synchronously, an abort records its result on the state.
  state.syncPhase = true;
  let r: ToolResult | Promise<ToolResult>;
  try {
    r = authorizeAndRun(reg, ctx, state, execution, tool);
  } catch (err) {
    r = errorResult(execution.callId, { code: 'EXECUTION_ERROR', message: messageOf(err) }); // never expected
  }
  state.syncPhase = false;
  const abortedMeanwhile = state.syncResult;
  if (r instanceof Promise) {
    const pipeline = r;
    const settleWith = (x: ToolResult): void => state.settle(x);
    const failWith = (err: unknown): void => state.settle(errorResult(execution.callId, { code: 'EXECUTION_ERROR', message: messageOf(err) }));
    if (abortedMeanwhile !== undefined) {
      pipeline.then(settleWith, failWith); // ignored (the abort's result won), but it ends the call
      return abortedMeanwhile;
    }
    return new Promise<ToolResult>((resolve) => {
      state.resolve = resolve;
      pipeline.then(settleWith, failWith);
    });
  }
  state.settle(r);
  return abortedMeanwhile ?? r;
}

/** The result the pipeline hands back once an abort decided the call (ignored: the abort's result won). */
function decided(state: CallState, callId: string): ToolResult {
  return errorResult(callId, state.failure());
}

/**
 * The pipeline after resolution: the result itself when it ran synchronously to its end
 * (no policy, no `tools/execute` listener, a body that returned a plain value), else a
 * promise of it.
 */
function authorizeAndRun(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, tool: Tool): ToolResult | Promise<ToolResult> {
  const scope = execution.scope;
  if (hasPolicy(reg, scope) || reg.bus.hasListeners('tools/execute', scope)) return authorizeAndRunAsync(reg, ctx, state, execution, tool);
  return runBody(reg, ctx, state, execution, tool, undefined);
}

/**
 * Calls the body (or the call function `tools/execute` listeners made) and finishes the
 * call: synchronously when the body returned a plain value.
 */
function runBody(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, tool: Tool, fn: ToolCallFunction | undefined): ToolResult | Promise<ToolResult> {
  let value: unknown;
  try {
    value = returnedValue(state, startBody(fn, state, execution, ctx, tool));
  } catch (err) {
    return bodyFailed(state, execution.callId, err);
  }
  if (value instanceof Pending) return settleBody(reg, ctx, state, execution, value.settled);
  return finish(reg, ctx, state, execution, value);
}

/** The result of a body that threw or rejected with `err` (an abort that decided the call first wins). */
function bodyFailed(state: CallState, callId: string, err: unknown): ToolResult {
  return state.decided ? decided(state, callId) : errorResult(callId, thrown(err));
}

/** A body's result that is still to come: its settling (see {@link returnedValue}). */
class Pending {
  constructor(readonly settled: Promise<unknown>) {}
}

/**
 * What the call function returned: a value that is not a thenable means the body has
 * returned (now, so an abort no longer changes the call); a thenable is adopted (its
 * `then` read once, as `Promise.resolve` does) and the body has returned when it settles.
 * Throws (the body has then returned) when reading `then` throws.
 */
function returnedValue(state: CallState, returned: unknown): unknown {
  if (returned === null || (typeof returned !== 'object' && typeof returned !== 'function')) {
    state.bodyReturned();
    return returned;
  }
  let then: unknown;
  try {
    // A plain native promise is awaited as it is (as Promise.resolve would return it); a
    // subclass or any other thenable is adopted through its `then`, read once.
    if (returned instanceof Promise && returned.constructor === Promise) return new Pending(bodySettled(state, returned));
    then = (returned as { then?: unknown }).then;
  } catch (err) {
    state.bodyReturned();
    throw err;
  }
  if (typeof then !== 'function') {
    state.bodyReturned();
    return returned;
  }
  // Adopted in a later job, as Promise.resolve adopts a thenable.
  const adopted = new Promise<unknown>((resolve, reject) => {
    queueMicrotask(() => {
      try {
        (then as (res: (v: unknown) => void, rej: (e: unknown) => void) => unknown).call(returned, resolve, reject);
      } catch (err) {
        reject(err);
      }
    });
  });
  return new Pending(bodySettled(state, adopted));
}

/** Whether `tools/pre-execute` listeners or guards apply to a call in `scope`. */
function hasPolicy(reg: ToolRegistry, scope: object | undefined): boolean {
  return reg.bus.hasListeners('tools/pre-execute', scope) || reg.globalGuards.length > 0 || (scope !== undefined && reg.scopedGuards.has(scope));
}

/** Waits for the body's result to settle, then finishes the call. */
async function settleBody(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, settled: Promise<unknown>): Promise<ToolResult> {
  let value: unknown;
  try {
    value = await settled;
  } catch (err) {
    return bodyFailed(state, execution.callId, err);
  }
  return finish(reg, ctx, state, execution, value);
}

/** The body returned `value`: its result, through `tools/post-execute` when it has listeners. */
function finish(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, value: unknown): ToolResult | Promise<ToolResult> {
  const callId = execution.callId;
  if (state.decided) return decided(state, callId);
  let result: ToolResult;
  try {
    result = successResult(callId, value);
  } catch (err) {
    result = errorResult(callId, { code: 'EXECUTION_ERROR', message: `tool "${execution.name}" returned a result that ${notLossless(err)}` });
  }
  // Without listeners the result is returned as it is (not through another promise).
  return reg.bus.hasListeners('tools/post-execute', execution.scope) ? postExecute(reg, ctx, execution, result) : result;
}

/** The pipeline with policy or `tools/execute` listeners. */
async function authorizeAndRunAsync(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, tool: Tool): Promise<ToolResult> {
  const { scope, callId } = execution;
  if (hasPolicy(reg, scope)) {
    const denial = await authorize(reg, ctx, state, execution);
    if (state.decided) return decided(state, callId);
    if (denial !== undefined) return errorResult(callId, { code: 'DENIED', message: denial });
    // Policy awaited: a tool unregistered (or whose scope was disposed or restricted)
    // meanwhile is gone for this call too, and so is every tool when the context the call
    // was made through was disposed meanwhile (its scope's guards may have been removed
    // before they ran). One resolver, checked at dispatch. (Without policy, the call was
    // resolved in this same synchronous step.)
    if (!stillResolves(reg, ctx, execution, state)) return errorResult(callId, unknownTool(execution.name));
  }

  // ---- tools/execute: listeners wrap, replace or short-circuit the call function
  let fn: unknown;
  if (reg.bus.hasListeners('tools/execute', scope)) {
    const seed: ToolCallFunction = async (e, c) => {
      if (e !== execution) throw new TypeError('the call function must be called with the execution it was given');
      if (c !== undefined && c !== ctx) throw new TypeError('the call function must be called with the calling context it was given (or none)');
      if (state.aborted) throw new TypeError(`tool "${execution.name}" was aborted before its body started`);
      // Called again once the call is over (a wrapper that kept it): the body would run
      // untracked, after its result was delivered, beyond the reach of disposal.
      if (state.over) {
        throw new TypeError(`${state.label} is over: a tools/execute wrapper can only call the call function it was given while the call runs (before its result is settled)`);
      }
      if (!stillResolves(reg, ctx, execution, state)) throw new ToolVanished(execution.name);
      return tool.execute(execution.arguments, execution, ctx);
    };
    fn = seed;
    try {
      fn = await reg.bus.waterfall(scope, 'tools/execute', seed, [execution, ctx]);
    } catch (err) {
      if (state.decided) return decided(state, callId);
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/execute listener failed: ${messageOf(err)}` });
    }
    if (state.decided) return decided(state, callId);
    if (typeof fn !== 'function') {
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/execute listener returned ${describeValue(fn)} instead of a call function` });
    }
  }
  return runBody(reg, ctx, state, execution, tool, fn as ToolCallFunction | undefined);
}

/** Whether `execution`'s name still resolves to the call's registration for its scope, through a live calling context. */
function stillResolves(reg: ToolRegistry, ctx: SystemContext, execution: ToolExecution, state: CallState): boolean {
  return !ctx.isDisposed && reg.lookup(execution.scope, execution.name) === state.registration;
}

/**
 * Starts the call function under the tool's timeout and returns what it returned. While
 * it runs an abort decides the call; once it returned (see {@link returnedValue}), an abort
 * no longer changes the call's result. When it throws, it has returned.
 */
function startBody(fn: ToolCallFunction | undefined, state: CallState, execution: ToolExecution, ctx: SystemContext, tool: Tool): unknown {
  const timeoutMs = tool.timeoutMs;
  if (timeoutMs !== undefined) state.startTimer(timeoutMs);
  state.bodyRunning = true;
  try {
    // an instrumentation's wrapper (only while one is installed, for a traced call)
    if (bodyWrapper !== undefined && state.trace !== undefined) {
      return bodyWrapper('tool', state.trace, fn === undefined ? () => tool.execute(execution.arguments, execution, ctx) : () => fn(execution, ctx));
    }
    // without tools/execute listeners the body is called directly (the seed's checks hold:
    // the call was resolved and not decided just before)
    return fn === undefined ? tool.execute(execution.arguments, execution, ctx) : fn(execution, ctx);
  } catch (err) {
    state.bodyReturned();
    throw err;
  }
}

/** The settling of a promise the call function returned (or adopted from its thenable); the body has then returned. */
function bodySettled(state: CallState, p: Promise<unknown>): Promise<unknown> {
  let settled: Promise<unknown>;
  try {
    settled = p.then(
      (v) => {
        state.bodyReturned();
        return v;
      },
      (err: unknown) => {
        state.bodyReturned();
        throw err;
      },
    );
  } catch (err) {
    // a promise with a throwing own `then`: the body is over
    state.bodyReturned();
    return Promise.reject(err);
  }
  return settled;
}

/** The `tools/post-execute` waterfall (called when it has listeners): accept (optionally replacing content and output) or block. */
async function postExecute(reg: ToolRegistry, ctx: SystemContext, execution: ToolExecution, result: ToolResult): Promise<ToolResult> {
  const { scope, callId } = execution;
  let decision: unknown;
  try {
    decision = await reg.bus.waterfall(scope, 'tools/post-execute', Object.freeze({ kind: 'accept' }), [execution, result, ctx]);
  } catch (err) {
    return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute listener failed: ${messageOf(err)}` });
  }
  const kind = readKind(decision);
  if (kind === 'accept') {
    let content: unknown;
    let output: unknown;
    try {
      content = (decision as { content?: unknown }).content;
      output = (decision as { output?: unknown }).output;
    } catch (err) {
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute decision could not be read: ${messageOf(err)}` });
    }
    if (content === undefined && output === undefined) return result;
    let text = result.content;
    if (content !== undefined) {
      try {
        text = normalizeContent(content);
      } catch (err) {
        return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute listener gave content that ${notLossless(err)}` });
      }
    }
    let out: JsonValue | undefined;
    if (output !== undefined) {
      try {
        out = snapshotJson(output, 'the tool output', 'output');
      } catch (err) {
        return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute listener gave an output that ${notLossless(err)}` });
      }
    } else if (content === undefined) out = result.output;
    // A failed call never carries an output, whatever the decision gave.
    if (result.isError) return Object.freeze({ callId, content: text, isError: true, error: result.error });
    return Object.freeze(out === undefined ? { callId, content: text, isError: false } : { callId, content: text, isError: false, output: out });
  }
  if (kind === 'block') {
    const reason = readReason(decision);
    return errorResult(callId, { code: 'DENIED', message: reason ?? 'blocked by a tools/post-execute listener' });
  }
  return errorResult(callId, { code: 'DENIED', message: `malformed tools/post-execute decision: ${describeValue(decision)}` });
}

/** The pre-execute waterfall, approval and guards; returns a denial reason or `undefined` (also when aborted meanwhile). */
async function authorize(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: ToolExecution): Promise<string | undefined> {
  const scope = execution.scope;
  if (reg.bus.hasListeners('tools/pre-execute', scope)) {
    let decision: unknown;
    try {
      decision = await reg.bus.waterfall(scope, 'tools/pre-execute', Object.freeze({ kind: 'allow' }), [execution, ctx]);
    } catch (err) {
      return `a tools/pre-execute listener failed: ${messageOf(err)}`;
    }
    if (state.aborted) return undefined;
    const kind = readKind(decision);
    if (kind === 'deny') return readReason(decision) ?? 'denied by a tools/pre-execute listener';
    if (kind === 'ask') {
      const reason = readReason(decision);
      const denied = await ask(ctx, state, execution, reason);
      if (denied !== undefined || state.aborted) return denied;
    } else if (kind !== 'allow') {
      return `malformed tools/pre-execute decision: ${describeValue(decision)}`;
    }
  }
  const globals = reg.globalGuards;
  const scoped = scope === undefined ? undefined : reg.scopedGuards.get(scope);
  for (const list of [globals, scoped]) {
    if (list === undefined) continue;
    for (const g of list) {
      if (state.aborted) return undefined;
      let r: unknown;
      try {
        r = g.fn(execution, ctx);
        if (isThenable(r)) r = await r;
      } catch (err) {
        return `a guard failed: ${messageOf(err)}`;
      }
      if (r === undefined) continue;
      if (typeof r === 'string' && r.length > 0) return r;
      return `a guard returned ${describeValue(r)} (a guard returns a denial string or undefined)`;
    }
  }
  return undefined;
}

/**
 * The `Approval` that decides a call in `scope`: `Res(Approval)` from the
 * scope's own context, or the global one for the global layer; never the calling view's.
 */
function approvalFor(ctx: SystemContext, scope: object | undefined): { approval: unknown } | string {
  const server = ctx.server;
  if (scope === undefined) return { approval: server.hasGlobal(Approval) ? server.getGlobal(Approval) : undefined };
  const owner = server._scopeCtx(scope);
  if (owner === undefined) return "the scope's context is being disposed";
  return { approval: owner.tryGet(Approval) };
}

async function ask(ctx: SystemContext, state: CallState, execution: ToolExecution, reason: string | undefined): Promise<string | undefined> {
  const why = reason === undefined ? '' : `: ${reason}`;
  let approval: unknown;
  try {
    const found = approvalFor(ctx, execution.scope);
    if (typeof found === 'string') return `approval required${why}, but ${found}`;
    approval = found.approval;
  } catch (err) {
    return `approval required${why}, but the Approval could not be resolved: ${messageOf(err)}`;
  }
  if (approval === undefined) return `approval required${why}, but no Approval is installed`;
  let approve: unknown;
  try {
    approve = (approval as { approve?: unknown }).approve;
  } catch (err) {
    return `approval required${why}, but reading the Approval's approve() threw: ${messageOf(err)}`;
  }
  if (typeof approve !== 'function') return `approval required${why}, but the installed Approval has no approve() method`;
  if (state.aborted) return undefined;
  let granted: unknown;
  try {
    granted = approve.call(approval, execution, reason, ctx);
    if (isThenable(granted)) granted = await granted;
  } catch (err) {
    return `approval required${why}, but approve() failed: ${messageOf(err)}`;
  }
  return granted === true ? undefined : `not approved${why}`;
}

function notLossless(err: unknown): string {
  return err instanceof NotLosslessJsonError ? `is not losslessly JSON-serializable: ${err.path} ${err.reason}` : `can not be read: ${messageOf(err)}`;
}

function readKind(decision: unknown): unknown {
  if (decision === null || typeof decision !== 'object') return undefined;
  try {
    return (decision as { kind?: unknown }).kind;
  } catch {
    return undefined;
  }
}

function readReason(decision: unknown): string | undefined {
  try {
    const r = (decision as { reason?: unknown }).reason;
    return typeof r === 'string' && r.length > 0 ? r : undefined;
  } catch {
    return undefined;
  }
}
