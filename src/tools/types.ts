/**
 * The shapes of the tools registry: definitions, stored tools, calls, executions,
 * results and the decisions of the `tools/*` events.
 */
import type { SystemContext } from '../context/system-context.js';
import type { JsonObject, JsonValue } from '../util/lossless-json.js';
import type { StandardJsonSchema } from './schema/standard-schema.js';

/** A JSON Schema object (the `parameters` of a tool). */
export type JsonSchema = JsonObject;

/**
 * What `Tools.register` accepts. `A` is the type `execute` receives its arguments as.
 * With a Standard Schema `parameters` (a zod 4 schema) it is the schema's input type,
 * inferred. With a JSON Schema object declare it (`ToolDefinition<{ q: string }>`, or
 * annotate `execute`'s parameter) to match the schema, which is what is checked at run
 * time; undeclared it is `unknown`.
 */
export interface ToolDefinition<A = unknown> {
  /** Model-facing name; unique per layer. */
  readonly name: string;
  /** Model-facing description. */
  readonly description: string;
  /**
   * The arguments' schema: a JSON Schema object (lossless JSON; its `$schema` names the
   * dialect: draft-07, 2019-09 or 2020-12, default `ToolsPlugin`'s `defaultDialect`), or a
   * Standard Schema that emits JSON Schema (zod 4), converted once at `register` with
   * `~standard.jsonSchema.input({ target })`. Either way the JSON Schema is what is
   * stored, shown to the model and checked by ajv.
   */
  readonly parameters: JsonSchema | StandardJsonSchema<A>;
  /**
   * The body. Called with `this` set to the definition object, the detached deep-frozen
   * arguments, the execution and the *calling context*: the context whose `Tools` view
   * `execute` was called through (a turn, usually), so a global tool can read the turn's
   * locals, the session's history and the agent's resources with `ctx.get`. Its result
   * becomes the result content (see {@link ToolResult.content}) and, when it is not
   * `undefined`, the result's {@link ToolResult.output}. May be a `toolSystem(...)`.
   * Watch `execution.signal` (or pass it on) to stop when the call is aborted.
   */
  execute(args: A, execution: ToolExecution, ctx: SystemContext): unknown;
  /**
   * Abort the call with code `TIMEOUT` after this many milliseconds, counted from the
   * moment the call function (the `tools/execute` chain and the body) starts; the policy
   * phase before it (`tools/pre-execute`, `Approval`, guards) is not timed.
   */
  readonly timeoutMs?: number;
  /**
   * Metadata about the tool for guards, policies and adapters (MCP's `readOnlyHint`,
   * `destructiveHint`, ...): a JSON object, snapshotted (lossless JSON) and deep-frozen
   * at `register`. Shown on {@link Tool}, {@link ToolSchema} and {@link ToolExecution}.
   */
  readonly annotations?: ToolAnnotations;
}

/**
 * A tool's metadata ({@link ToolDefinition.annotations}): a lossless JSON object, e.g.
 * MCP's `{ readOnlyHint: true, destructiveHint: false }`.
 */
export type ToolAnnotations = JsonObject;

/** A stored tool: a deep-frozen snapshot of a definition. */
export interface Tool {
  /** The model-facing name the tool was registered under; unique within its layer. */
  readonly name: string;
  /** The model-facing description, as given in the definition. */
  readonly description: string;
  /**
   * The deep-frozen JSON Schema of the arguments. Tools with identical schemas (same JSON
   * text) share one object and one compiled validator.
   */
  readonly parameters: JsonSchema;
  /** The definition's `execute`, bound to the definition object; called as `(args, execution, ctx)`. */
  readonly execute: (args: unknown, execution: ToolExecution, ctx: SystemContext) => unknown;
  /** Calls are aborted with code `TIMEOUT` after this many milliseconds; absent: no timeout. */
  readonly timeoutMs?: number;
  /** The deep-frozen annotations of the definition; absent when it had none. */
  readonly annotations?: ToolAnnotations;
}

/** The model-facing projection of a tool; detached (a fresh copy on every read). */
export interface ToolSchema {
  /** The name the model must use in its tool call. */
  name: string;
  /** What the tool does, shown to the model. */
  description: string;
  /** A mutable copy of the tool's JSON Schema of the arguments. */
  parameters: { [key: string]: JsonValue };
  /** A mutable copy of the tool's annotations; absent when the tool has none. */
  annotations?: { [key: string]: JsonValue };
}

declare const tokenBrand: unique symbol;

/** An opaque, frozen, property-free identity minted by the registry for each execution. */
export interface ToolExecutionToken {
  /** Type-level brand only (absent at run time): keeps other objects from passing as a token. */
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
  /**
   * The scope to resolve the tool in; omitted = the view's own scope. Must be the view's
   * own scope key or a live one, else the call answers `INVALID_ARGS`.
   */
  readonly scope?: object;
  /** The token of an enclosing execution (for nested dispatch). */
  readonly parent?: ToolExecutionToken;
  /**
   * Aborts the call (code `EXECUTION_ERROR`, `tool "x" was aborted: <reason>`) in any
   * phase before the body returns, the policy phase included; an already-aborted signal
   * never reaches `Approval`, a guard or the body.
   */
  readonly signal?: AbortSignal;
}

/**
 * What the model was shown: an assembly (anything with
 * `tools: readonly { name }[]`, such as a `PromptAssembly`) or the shown tool names.
 */
export type ShownTools = ShownAssembly | readonly string[];

/** Anything that lists the tools shown to the model, such as a `PromptAssembly`. */
export interface ShownAssembly {
  /** The tools the model was shown; only each one's `name` is read. */
  readonly tools: readonly ShownTool[];
}

/** One tool the model was shown (a `ToolSchema` fits). */
export interface ShownTool {
  /** The tool's name. */
  readonly name: string;
}

/** Options of `Tools.execute(call, options)`. */
export interface ExecuteOptions {
  /**
   * What the model was shown for this turn: a tool that is not in it is refused with
   * `UNKNOWN_TOOL`, as if it did not exist. A malformed value answers `INVALID_ARGS`.
   * Omitted: every tool the scope resolves can run.
   */
  readonly shown?: ShownTools;
}

/**
 * One trip through the pipeline: a frozen snapshot of the call. Its identity is stable
 * from the first policy listener to the last observer (a safe `WeakMap` key). It holds
 * no context (the body, guards and `Approval` receive the calling context as an
 * argument); `signal` and `scope` are live objects. `token` and `signal` are made on
 * first read.
 */
export interface ToolExecution {
  /** Fresh for every execution; callers can not choose it. */
  readonly token: ToolExecutionToken;
  /** The model's call id, from {@link ToolCall.callId}. */
  readonly callId: string;
  /** The name of the tool being executed. */
  readonly name: string;
  /** Detached, deep-frozen arguments (`undefined` when they were not lossless JSON). */
  readonly arguments: JsonValue | undefined;
  /** The scope the tool was resolved in (`undefined`: the global layer). */
  readonly scope: object | undefined;
  /** The token of the enclosing execution for a nested call; `undefined` for a top-level call. */
  readonly parent: ToolExecutionToken | undefined;
  /**
   * Never `undefined` (made on first read). Aborted when the caller's signal aborts, when
   * the tool's `timeoutMs` elapses (reason: a `TimeoutError` `DOMException`), when the
   * disposal of the calling context (or an ancestor) starts (reason: a
   * `ContextDisposedError`), and when the tool's registration is undone (its disposer,
   * or the disposal of the context that owns it).
   */
  readonly signal: AbortSignal;
  /** The tool's deep-frozen annotations; `undefined` when it has none or was not found. */
  readonly annotations: ToolAnnotations | undefined;
}

/** Why a call failed. */
export type ToolErrorCode = 'UNKNOWN_TOOL' | 'INVALID_ARGS' | 'DENIED' | 'TIMEOUT' | 'EXECUTION_ERROR';

/** The outcome of `Tools.execute`. Frozen. */
export interface ToolResult {
  /** The call id of the {@link ToolCall}, echoed so the model can match the result. */
  readonly callId: string;
  /**
   * The text for the model. A string returned by the tool is used as is; `undefined`
   * becomes `''`; any other lossless JSON value is `JSON.stringify`-ed. Errors read
   * `Error: <reason>`.
   */
  readonly content: string;
  /** `true` when the call failed; {@link ToolResult.error} then says why. */
  readonly isError: boolean;
  /**
   * The body's raw return value (lossless JSON, deep-frozen), present only while the
   * model gets the body's own result: absent when the body returned `undefined`, for
   * refused, failed, aborted and timed-out calls, and after a `tools/post-execute`
   * `block` or an `accept` that replaced the content (unless that decision gave an
   * `output` of its own).
   */
  readonly output?: JsonValue;
  /** Why the call failed; present exactly when `isError` is `true`. */
  readonly error?: {
    /** The failure category. */
    readonly code: ToolErrorCode;
    /** A human-readable reason (also the text after `Error: ` in `content`). */
    readonly message: string;
  };
}

/** A `tools/pre-execute` decision. */
export type PreExecuteDecision =
  | {
      /** Let the call proceed. */
      readonly kind: 'allow';
    }
  | {
      /** Refuse the call; it fails with code `DENIED`. */
      readonly kind: 'deny';
      /** Why; becomes the error message (content `Error: <reason>`). */
      readonly reason: string;
    }
  | {
      /** Run the call only if the `Approval` resource grants it (returns exactly `true`); otherwise it fails with code `DENIED`. */
      readonly kind: 'ask';
      /** Why approval is needed; passed to `Approval.approve`. */
      readonly reason?: string;
    };

/** A `tools/post-execute` decision. */
export type PostExecuteDecision =
  | {
      /** Keep the result (the default when no listener changes the decision). */
      readonly kind: 'accept';
      /** Replaces the result's content (normalized like a tool's return value); absent keeps the tool's own. */
      readonly content?: unknown;
      /**
       * Replaces the result's {@link ToolResult.output} (lossless JSON). A decision that
       * gives `content` without `output` removes the body's output.
       */
      readonly output?: unknown;
    }
  | {
      /** Withhold the result from the model; the call fails with code `DENIED`. */
      readonly kind: 'block';
      /** Why; becomes the error message (content `Error: <reason>`). */
      readonly reason: string;
    };

/**
 * The function `tools/execute` listeners wrap, replace or short-circuit. The pipeline
 * calls the outermost one as `fn(execution, ctx)` with the calling context; the seed (the
 * tool's own body) must be called with the execution it was given and either that
 * context or nothing (it always runs the body on the calling context).
 */
export type ToolCallFunction = (execution: ToolExecution, ctx?: SystemContext) => Promise<unknown>;

/**
 * A deny-only guard: returns a denial reason, or `undefined` to let the call pass.
 * Receives the execution and the calling context (the context whose view `execute` was
 * called through).
 */
export type ToolGuard = (execution: ToolExecution, ctx: SystemContext) => string | undefined | Promise<string | undefined>;

/**
 * A `tools/pre-execute` listener: receives the decision so far, the execution and the
 * calling context, and returns (or resolves to) the decision to pass on.
 */
export type PreExecuteListener = (
  decision: PreExecuteDecision,
  execution: ToolExecution,
  ctx: SystemContext,
) => PreExecuteDecision | Promise<PreExecuteDecision>;

/**
 * A `tools/execute` listener: receives the current call function, the execution and the
 * calling context, and returns (or resolves to) the call function to use.
 */
export type ExecuteListener = (
  fn: ToolCallFunction,
  execution: ToolExecution,
  ctx: SystemContext,
) => ToolCallFunction | Promise<ToolCallFunction>;

/**
 * A `tools/post-execute` listener: receives the decision so far, the execution, the
 * result the body produced and the calling context, and returns (or resolves to) the
 * decision to pass on.
 */
export type PostExecuteListener = (
  decision: PostExecuteDecision,
  execution: ToolExecution,
  result: ToolResult,
  ctx: SystemContext,
) => PostExecuteDecision | Promise<PostExecuteDecision>;

/**
 * A `tools/result` observer: called once for every call (refused and invalid ones
 * included) with the frozen execution and result; its return value is ignored and its
 * failure is contained and logged.
 */
export type ResultObserver = (execution: ToolExecution, result: ToolResult) => unknown;

/** What `Tools.restrict` accepts. */
export interface ToolRestriction {
  /** Only these global tools stay visible (`[]` hides every global tool). */
  readonly allow?: readonly string[];
  /** These global tools are hidden. */
  readonly deny?: readonly string[];
}
