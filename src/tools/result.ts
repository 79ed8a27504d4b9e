/**
 * The result boundary of a call: what a body returned becomes a frozen result (content
 * and a lossless-JSON `output`), then passes the `tools/post-execute` waterfall (accept,
 * optionally replacing content and output, or block).
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { readKind, readReason } from './authorize.js';
import { decided } from './call-failures.js';
import { errorResult, type CallState, type Execution } from './execution.js';
import { NotLosslessJsonError, snapshotJson, type JsonValue } from '../util/lossless-json.js';
import type { ToolRegistry } from './registry.js';
import type { ToolExecution, ToolResult } from './types.js';
import { errorText } from '../util/error-text.js';

/** @internal Turns a tool (or listener) result value into content; throws when it is not lossless JSON. */
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

/** @internal The body returned `value`: its result, through `tools/post-execute` when it has listeners. */
export function finish(reg: ToolRegistry, ctx: SystemContext, state: CallState, execution: Execution, value: unknown): ToolResult | Promise<ToolResult> {
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

/** The `tools/post-execute` waterfall (called when it has listeners): accept (optionally replacing content and output) or block. */
async function postExecute(reg: ToolRegistry, ctx: SystemContext, execution: ToolExecution, result: ToolResult): Promise<ToolResult> {
  const { scope, callId } = execution;
  let decision: unknown;
  try {
    decision = await reg.bus.waterfall(scope, 'tools/post-execute', Object.freeze({ kind: 'accept' }), [execution, result, ctx]);
  } catch (err) {
    return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute listener failed: ${errorText(err)}` });
  }
  const kind = readKind(decision);
  if (kind === 'accept') {
    let content: unknown;
    let output: unknown;
    try {
      content = (decision as { content?: unknown }).content;
      output = (decision as { output?: unknown }).output;
    } catch (err) {
      return errorResult(callId, { code: 'EXECUTION_ERROR', message: `a tools/post-execute decision could not be read: ${errorText(err)}` });
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

/** Why a value is not a result: not losslessly JSON-serializable (where and why), or unreadable. */
function notLossless(err: unknown): string {
  return err instanceof NotLosslessJsonError ? `is not losslessly JSON-serializable: ${err.path} ${err.reason}` : `can not be read: ${errorText(err)}`;
}
