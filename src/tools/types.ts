/**
 * The shapes of the tools registry: definitions, stored tools, calls, executions,
 * results and the decisions of the `tools/*` events.
 */
import type { JsonObject, JsonValue } from './lossless-json.js';

/** A JSON Schema object (the `parameters` of a tool). */
export type JsonSchema = JsonObject;

/** What `Tools.register` accepts. */
export interface ToolDefinition<A = any> {
  /** Model-facing name; unique per layer. */
  readonly name: string;
  /** Model-facing description. */
  readonly description: string;
  /** JSON Schema of the arguments; must be lossless JSON. */
  readonly parameters: JsonSchema;
  /**
   * The body. Called with `this` set to the definition object, the detached deep-frozen
   * arguments and the execution. Its result becomes the result content (see
   * {@link ToolResult.content}).
   */
  execute(args: A, execution: ToolExecution): unknown;
  /** Abort the call with code `TIMEOUT` after this many milliseconds. */
  readonly timeoutMs?: number;
}

/** A stored tool: a deep-frozen snapshot of a definition. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /** The definition's `execute`, bound to the definition object. */
  readonly execute: (args: any, execution: ToolExecution) => unknown;
  readonly timeoutMs?: number;
}

/** The model-facing projection of a tool; detached (a fresh copy on every read). */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: { [key: string]: JsonValue };
}

declare const tokenBrand: unique symbol;

/** An opaque, frozen, property-free identity minted by the registry for each execution. */
export interface ToolExecutionToken {
  readonly [tokenBrand]: 'ToolExecutionToken';
}

/** What `Tools.execute` accepts. */
export interface ToolCall {
  /** The model's call id; echoed in the result. */
  readonly callId: string;
  /** The tool name the model asked for. */
  readonly name: string;
  /** The model's arguments; must be lossless JSON and match the tool's schema. */
  readonly arguments: unknown;
  /** The scope to resolve the tool in; omitted = the view's own scope. */
  readonly scope?: object;
  /** The token of an enclosing execution (for nested dispatch). */
  readonly parent?: ToolExecutionToken;
  /** Aborts the call (code `EXECUTION_ERROR`). */
  readonly signal?: AbortSignal;
}

/**
 * One trip through the pipeline: a frozen snapshot of the call. Its identity is stable
 * from the first policy listener to the last observer (a safe `WeakMap` key).
 */
export interface ToolExecution {
  /** Fresh for every execution; callers can not choose it. */
  readonly token: ToolExecutionToken;
  readonly callId: string;
  readonly name: string;
  /** Detached, deep-frozen arguments (`undefined` when they were not lossless JSON). */
  readonly arguments: JsonValue | undefined;
  /** The scope the tool was resolved in (`undefined`: the global layer). */
  readonly scope: object | undefined;
  readonly parent: ToolExecutionToken | undefined;
  /**
   * Aborted when the caller's signal aborts or the tool's `timeoutMs` elapses;
   * `undefined` when neither applies.
   */
  readonly signal: AbortSignal | undefined;
}

/** Why a call failed. */
export type ToolErrorCode = 'UNKNOWN_TOOL' | 'INVALID_ARGS' | 'DENIED' | 'TIMEOUT' | 'EXECUTION_ERROR';

/** The outcome of `Tools.execute`. Frozen. */
export interface ToolResult {
  readonly callId: string;
  /**
   * The text for the model. A string returned by the tool is used as is; `undefined`
   * becomes `''`; any other lossless JSON value is `JSON.stringify`-ed. Errors read
   * `Error: <reason>`.
   */
  readonly content: string;
  readonly isError: boolean;
  readonly error?: { readonly code: ToolErrorCode; readonly message: string };
}

/** A `tools/pre-execute` decision. */
export type PreExecuteDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'ask'; readonly reason?: string };

/** A `tools/post-execute` decision. */
export type PostExecuteDecision =
  | { readonly kind: 'accept'; readonly content?: unknown }
  | { readonly kind: 'block'; readonly reason: string };

/** The function `tools/execute` listeners wrap, replace or short-circuit. */
export type ToolCallFunction = (execution: ToolExecution) => Promise<unknown>;

/** A deny-only guard: returns a denial reason, or `undefined` to let the call pass. */
export type ToolGuard = (execution: ToolExecution) => string | undefined | Promise<string | undefined>;

/** What `Tools.restrict` accepts. */
export interface ToolRestriction {
  /** Only these global tools stay visible (`[]` hides every global tool). */
  readonly allow?: readonly string[];
  /** These global tools are hidden. */
  readonly deny?: readonly string[];
}
