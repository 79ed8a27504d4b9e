/**
 * The execution pipeline of `Tools.execute`:
 *
 * snapshot the call into a frozen execution → resolve the tool (UNKNOWN_TOOL) → lossless
 * arguments and JSON-Schema validation (INVALID_ARGS) → `tools/pre-execute` waterfall
 * (allow / deny / ask → `Approval`) → guards (global, then the scope's) → `tools/execute`
 * waterfall over the call function, run under the timeout and the caller's signal →
 * `tools/post-execute` waterfall (accept / block) → `tools/result` observers.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { isThenable } from '../events/bus.js';
import { Approval } from './approval.js';
import { NotLosslessJsonError, snapshotJson, type JsonValue } from './lossless-json.js';
import type { ToolRegistry } from './tools.js';
import type {
  Tool,
  ToolCallFunction,
  ToolErrorCode,
  ToolExecution,
  ToolExecutionToken,
  ToolResult,
} from './types.js';

const minted = new WeakSet<object>();

interface Failure {
  readonly code: ToolErrorCode;
  readonly message: string;
}

/** @internal Whether `v` is a token minted by a tools registry. */
export function isExecutionToken(v: unknown): v is ToolExecutionToken {
  return typeof v === 'object' && v !== null && minted.has(v);
}

function mintToken(): ToolExecutionToken {
  const t = Object.freeze(Object.create(null) as object);
  minted.add(t);
  return t as ToolExecutionToken;
}

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

function errorResult(callId: string, f: Failure): ToolResult {
  return Object.freeze({ callId, content: `Error: ${f.message}`, isError: true, error: Object.freeze({ code: f.code, message: f.message }) });
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
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

/** @internal Runs one call. Never rejects. */
export async function executeCall(reg: ToolRegistry, ctx: SystemContext, call: unknown): Promise<ToolResult> {
  // ---- snapshot the input (each field read once)
  let callId = '';
  let name = '';
  let scope = ctx._scopeKey;
  let parent: ToolExecutionToken | undefined;
  let signal: AbortSignal | undefined;
  let args: JsonValue | undefined;
  let failure: Failure | undefined;
  let argsFailure: Failure | undefined;
  let tool: Tool | undefined;
  const fail = (code: ToolErrorCode, message: string): void => {
    failure ??= { code, message };
  };
  if (call === null || typeof call !== 'object') {
    fail('INVALID_ARGS', `a tool call must be an object { callId, name, arguments }, got ${describeValue(call)}`);
  } else {
    const read = (key: string): unknown => {
      try {
        return (call as Record<string, unknown>)[key];
      } catch (err) {
        fail('INVALID_ARGS', `reading the call's "${key}" threw: ${messageOf(err)}`);
        return undefined;
      }
    };
    const rawId = read('callId');
    const rawName = read('name');
    const rawArgs = read('arguments');
    const rawScope = read('scope');
    const rawParent = read('parent');
    const rawSignal = read('signal');
    if (typeof rawId === 'string') callId = rawId;
    else if (typeof rawId === 'number' && Number.isFinite(rawId)) callId = String(rawId);
    else fail('INVALID_ARGS', `callId must be a string, got ${describeValue(rawId)}`);
    if (rawScope !== undefined) {
      if (rawScope !== null && (typeof rawScope === 'object' || typeof rawScope === 'function')) scope = rawScope;
      else fail('INVALID_ARGS', `scope must be a scope key (an object) or omitted, got ${describeValue(rawScope)}`);
    }
    if (rawParent !== undefined) {
      if (isExecutionToken(rawParent)) parent = rawParent;
      else fail('INVALID_ARGS', 'parent must be the token of an enclosing execution (execution.token)');
    }
    if (rawSignal !== undefined) {
      if (rawSignal instanceof AbortSignal) signal = rawSignal;
      else fail('INVALID_ARGS', `signal must be an AbortSignal, got ${describeValue(rawSignal)}`);
    }
    if (typeof rawName === 'string') name = rawName;
    else fail('UNKNOWN_TOOL', `unknown tool ${describeValue(rawName)}`);
    if (failure === undefined) {
      try {
        args = snapshotJson(rawArgs, 'tool arguments', 'arguments');
      } catch (err) {
        argsFailure = { code: 'INVALID_ARGS', message: `invalid arguments for tool "${name}": ${messageOf(err)}` };
      }
      // A disposed context sees no tools: its scope's restrictions and guards are gone,
      // so resolving for it would fall back to the bare global layer.
      tool = ctx.isDisposed ? undefined : reg.resolve(scope).byName.get(name);
      if (tool === undefined) failure ??= unknownTool(name);
      else if (argsFailure !== undefined) failure = argsFailure;
      else {
        let invalid: string | undefined;
        try {
          invalid = reg.validate(tool, args);
        } catch (err) {
          invalid = messageOf(err);
        }
        if (invalid !== undefined) fail('INVALID_ARGS', `invalid arguments for tool "${name}": ${invalid}`);
      }
    }
  }

  // ---- the execution: frozen, with a fresh token
  let controller: AbortController | undefined;
  const callerSignal = signal;
  if (failure === undefined && tool?.timeoutMs !== undefined) {
    controller = new AbortController();
    signal = signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
  }
  const execution: ToolExecution = Object.freeze({ token: mintToken(), callId, name, arguments: args, scope, parent, signal });

  let result: ToolResult;
  try {
    result = failure !== undefined ? errorResult(callId, failure) : await authorizeAndRun(reg, ctx, execution, tool as Tool, controller, callerSignal);
  } catch (err) {
    result = errorResult(callId, { code: 'EXECUTION_ERROR', message: messageOf(err) });
  }

  // ---- observers: once for every call, each failure contained and logged
  if (reg.bus.hasListeners('tools/result', scope)) {
    const errors = await reg.bus.emit(scope, 'tools/result', [execution, result]);
    for (const e of errors) reg.bus.report(e, `a tools/result observer of "${name}" (call ${callId}) failed`);
  }
  return result;
}

async function authorizeAndRun(
  reg: ToolRegistry,
  ctx: SystemContext,
  execution: ToolExecution,
  tool: Tool,
  controller: AbortController | undefined,
  callerSignal: AbortSignal | undefined,
): Promise<ToolResult> {
  const { scope, callId } = execution;
  const denial = await authorize(reg, ctx, execution);
  if (denial !== undefined) return errorResult(callId, { code: 'DENIED', message: denial });
  // Policy may have awaited: a tool unregistered (or whose scope was disposed or
  // restricted) meanwhile is gone for this call too, and so is every tool when the
  // context the call was made through was disposed meanwhile (its scope's guards may
  // have been removed before they ran). One resolver, checked at dispatch.
  const stillResolves = (): boolean => !ctx.isDisposed && reg.resolve(scope).byName.get(execution.name) === tool;
  if (!stillResolves()) return errorResult(callId, unknownTool(execution.name));

  // ---- tools/execute: listeners wrap, replace or short-circuit the call function
  const seed: ToolCallFunction = async (e) => {
    if (e !== execution) throw new TypeError('the call function must be called with the execution it was given');
    if (!stillResolves()) throw new ToolVanished(execution.name);
    return tool.execute(execution.arguments, execution);
  };
  let fn: unknown = seed;
  if (reg.bus.hasListeners('tools/execute', scope)) {
    try {
      fn = await reg.bus.waterfall(scope, 'tools/execute', seed, [execution]);
    } catch (err) {
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/execute listener failed: ${messageOf(err)}` });
    }
    if (typeof fn !== 'function') {
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/execute listener returned ${describeValue(fn)} instead of a call function` });
    }
  }
  let result: ToolResult;
  const outcome = await run(fn as ToolCallFunction, execution, tool, controller, callerSignal);
  if (outcome.failure !== undefined) result = errorResult(callId, outcome.failure);
  else {
    try {
      result = Object.freeze({ callId, content: normalizeContent(outcome.value), isError: false });
    } catch (err) {
      result = errorResult(callId, { code: 'EXECUTION_ERROR', message: `tool "${execution.name}" returned a result that ${notLossless(err)}` });
    }
  }

  // ---- tools/post-execute: accept (optionally replacing the content) or block
  if (!reg.bus.hasListeners('tools/post-execute', scope)) return result;
  let decision: unknown;
  try {
    decision = await reg.bus.waterfall(scope, 'tools/post-execute', Object.freeze({ kind: 'accept' }), [execution, result]);
  } catch (err) {
    return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute listener failed: ${messageOf(err)}` });
  }
  const kind = readKind(decision);
  if (kind === 'accept') {
    let content: unknown;
    try {
      content = (decision as { content?: unknown }).content;
      if (content === undefined) return result;
      const text = normalizeContent(content);
      return Object.freeze({ ...result, content: text });
    } catch (err) {
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute listener gave content that ${notLossless(err)}` });
    }
  }
  if (kind === 'block') {
    const reason = readReason(decision);
    return errorResult(callId, { code: 'DENIED', message: reason ?? 'blocked by a tools/post-execute listener' });
  }
  return errorResult(callId, { code: 'DENIED', message: `malformed tools/post-execute decision: ${describeValue(decision)}` });
}

/** The pre-execute waterfall, approval and guards; returns a denial reason or `undefined`. */
async function authorize(reg: ToolRegistry, ctx: SystemContext, execution: ToolExecution): Promise<string | undefined> {
  const scope = execution.scope;
  if (reg.bus.hasListeners('tools/pre-execute', scope)) {
    let decision: unknown;
    try {
      decision = await reg.bus.waterfall(scope, 'tools/pre-execute', Object.freeze({ kind: 'allow' }), [execution]);
    } catch (err) {
      return `a tools/pre-execute listener failed: ${messageOf(err)}`;
    }
    const kind = readKind(decision);
    if (kind === 'deny') return readReason(decision) ?? 'denied by a tools/pre-execute listener';
    if (kind === 'ask') {
      const reason = readReason(decision);
      const denied = await ask(ctx, execution, reason);
      if (denied !== undefined) return denied;
    } else if (kind !== 'allow') {
      return `malformed tools/pre-execute decision: ${describeValue(decision)}`;
    }
  }
  const globals = reg.globalGuards;
  const scoped = scope === undefined ? undefined : reg.scopedGuards.get(scope);
  for (const list of [globals, scoped]) {
    if (list === undefined) continue;
    for (const g of list) {
      let r: unknown;
      try {
        r = g.fn(execution);
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

async function ask(ctx: SystemContext, execution: ToolExecution, reason: string | undefined): Promise<string | undefined> {
  const why = reason === undefined ? '' : `: ${reason}`;
  let approval: unknown;
  try {
    approval = ctx.isDisposed ? undefined : ctx.tryGet(Approval);
  } catch (err) {
    return `approval required${why}, but the Approval could not be resolved: ${messageOf(err)}`;
  }
  if (approval === undefined) return `approval required${why}, but no Approval is installed`;
  const approve = (approval as { approve?: unknown }).approve;
  if (typeof approve !== 'function') return `approval required${why}, but the installed Approval has no approve() method`;
  let granted: unknown;
  try {
    granted = approve.call(approval, execution, reason);
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

type Outcome = { value: unknown; failure?: undefined } | { value?: undefined; failure: Failure };

/** Calls the call function under the tool's timeout and the caller's signal. */
async function run(
  fn: ToolCallFunction,
  execution: ToolExecution,
  tool: Tool,
  controller: AbortController | undefined,
  callerSignal: AbortSignal | undefined,
): Promise<Outcome> {
  const name = execution.name;
  const aborted = (s: AbortSignal): Outcome => ({ failure: { code: 'EXECUTION_ERROR', message: `tool "${name}" was aborted: ${messageOf(s.reason)}` } });
  if (callerSignal?.aborted) return aborted(callerSignal);
  const timeoutMs = tool.timeoutMs;
  if (controller === undefined && callerSignal === undefined) {
    try {
      return { value: await fn(execution) };
    } catch (err) {
      return { failure: thrown(err) };
    }
  }
  return new Promise<Outcome>((resolve) => {
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (o: Outcome): void => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
      resolve(o);
    };
    const onAbort = (): void => finish(aborted(callerSignal as AbortSignal));
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    if (controller !== undefined && timeoutMs !== undefined) {
      timer = setTimeout(() => {
        const message = `tool "${name}" timed out after ${timeoutMs} ms`;
        finish({ failure: { code: 'TIMEOUT', message } });
        controller.abort(new DOMException(message, 'TimeoutError'));
      }, timeoutMs);
    }
    let p: Promise<unknown>;
    try {
      p = Promise.resolve(fn(execution));
    } catch (err) {
      finish({ failure: thrown(err) });
      return;
    }
    p.then(
      (value) => finish({ value }),
      (err: unknown) => finish({ failure: thrown(err) }),
    );
  });
}
