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
 *
 * This file holds the call's start (the input's snapshot, resolution, validation, the
 * trace, the abort wiring and the `tools/result` observers); the later phases are
 * `authorize.ts` (guards and approval), `call-body.ts` (the call) and `result.ts` (the
 * result boundary).
 */

import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import type { LayerEntry } from '../scope/layers.js';
import { isReadableScope } from '../scope/live.js';
import { authorizeAndRun } from './call-body.js';
import { unknownTool } from './call-failures.js';
import { CallState, Execution, errorResult, isExecutionToken, type Failure } from './execution.js';
import { snapshotJson, type JsonValue } from '../util/lossless-json.js';
import type { ToolRegistry } from './registry.js';
import { readShown, wasShown } from './shown.js';
import type { Tool, ToolExecutionToken, ToolResult } from './types.js';
import { Agent } from '../agents/agent.js';
import { toolChannel, trace, type Mutable, type ToolTraceContext } from '../observability/channels.js';
import { errorText } from '../util/error-text.js';

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
    return Promise.resolve(errorResult('', { code: 'EXECUTION_ERROR', message: errorText(err) }));
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
      failure ??= { code: 'INVALID_ARGS', message: `reading the call's "${CALL_FIELDS[at] as string}" threw: ${errorText(err)}` };
      const rest = readRest(c, at + 1, (key, e) => void (failure ??= { code: 'INVALID_ARGS', message: `reading the call's "${key}" threw: ${errorText(e)}` }));
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
        argsFailure = { code: 'INVALID_ARGS', message: `invalid arguments for tool "${name}": ${errorText(err)}` };
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
          invalid = errorText(err);
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

/**
 * The call after its snapshot: run (unless refused), then the `tools/result` observers.
 * Never rejects. A call decided synchronously that nobody observes is answered without an
 * async frame.
 */
function runCall(
  reg: ToolRegistry,
  ctx: SystemContext,
  state: CallState,
  execution: Execution,
  failure: Failure | undefined,
  tool: Tool | undefined,
  signal: AbortSignal | undefined,
): Promise<ToolResult> {
  let result: ToolResult | Promise<ToolResult>;
  if (failure !== undefined) result = errorResult(execution.callId, failure);
  else {
    try {
      result = track(reg, ctx, state, execution, tool as Tool, signal);
    } catch (err) {
      // never expected (track never throws); kept so that execute can never reject
      result = errorResult(execution.callId, { code: 'EXECUTION_ERROR', message: errorText(err) });
    }
  }
  if (result instanceof Promise || reg.bus.hasListeners('tools/result', execution.scope)) return observe(reg, state, execution, result);
  return Promise.resolve(result);
}

/** Awaits the call's result (when it is still to come), then calls the `tools/result` observers when there are any. Never rejects. */
async function observe(reg: ToolRegistry, state: CallState, execution: Execution, pending: ToolResult | Promise<ToolResult>): Promise<ToolResult> {
  const { callId, name, scope } = execution;
  let result: ToolResult;
  try {
    result = pending instanceof Promise ? await pending : pending;
  } catch (err) {
    // never expected (track never rejects); kept so that execute can never reject
    result = errorResult(callId, { code: 'EXECUTION_ERROR', message: errorText(err) });
  }

  // ---- observers: once for every call, each failure contained and logged
  if (reg.bus.hasListeners('tools/result', scope)) {
    state.final = result;
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
    r = errorResult(execution.callId, { code: 'EXECUTION_ERROR', message: errorText(err) }); // never expected
  }
  state.syncPhase = false;
  const abortedMeanwhile = state.syncResult;
  if (r instanceof Promise) {
    const pipeline = r;
    const settleWith = (x: ToolResult): void => state.settle(x);
    const failWith = (err: unknown): void => state.settle(errorResult(execution.callId, { code: 'EXECUTION_ERROR', message: errorText(err) }));
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
