/**
 * The call phase: after resolution (and the guard phase, when there is policy), the
 * `tools/execute` waterfall over the call function, the body started under the tool's
 * timeout, and its returned value (or its promise, or an adopted thenable) settled into
 * the result boundary. Synchronous to the end when nothing needs to wait.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { authorize, hasPolicy } from './authorize.js';
import { decided, thrown, ToolVanished, unknownTool } from './call-failures.js';
import { errorResult, type CallState, type Execution } from './execution.js';
import type { ToolRegistry } from './registry.js';
import { finish } from './result.js';
import type { Tool, ToolCallFunction, ToolExecution, ToolResult } from './types.js';
import { bodyWrapper } from '../observability/wrap.js';
import { errorText } from '../util/error-text.js';

/**
 * @internal The pipeline after resolution: the result itself when it ran synchronously to its end
 * (no policy, no `tools/execute` listener, a body that returned a plain value), else a
 * promise of it.
 */
export function authorizeAndRun(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, tool: Tool): ToolResult | Promise<ToolResult> {
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
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/execute listener failed: ${errorText(err)}` });
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
