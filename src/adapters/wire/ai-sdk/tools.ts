/**
 * polestar's tools as Vercel AI SDK tools: each runs through `Tools.execute`, so schema
 * checks, guards, `Approval`, events and "only what the model was shown can run" apply to
 * the calls the SDK's loop makes.
 */
import type { JSONSchema7, Schema, Tool } from 'ai';
import type { SystemContext } from '../../../context/system-context.js';
import { thawJson, type JsonValue } from '../../../util/lossless-json.js';
import type { Tools } from '../../../tools/tools.js';
import type { ShownTools, ToolResult } from '../../../tools/types.js';
import { readToolSource } from '../tool-source.js';

/**
 * One polestar tool as an AI SDK tool. Its output is polestar's `ToolResult` (the SDK
 * types the outputs of a string-keyed tool record as `unknown`: read
 * `result.toolResults[i].output` as a `ToolResult` for `isError` and `error.code`); the
 * model gets its `content` as text (`error-text` for a failed call).
 */
export type AiSdkTool = Tool<unknown, ToolResult>;

/** What {@link toAiSdkTools} returns: pass it as `tools` to `generateText` / `streamText`. */
export type AiSdkTools = Record<string, AiSdkTool>;

/** Options of {@link toAiSdkTools}. */
export interface AiSdkToolsOptions {
  /**
   * The scope whose tools to show and run (a scope key, e.g. `scopeOf(agent.ctx)`);
   * default: the scope of the `tools` view.
   */
  readonly scope?: object;
  /**
   * What the model is shown this turn: an assembly (e.g. `prepareTurn(ctx)`'s
   * `turn.assembly`, whose tools are shown as they are in it) or tool names. Only those
   * tools are converted, and each call passes `{ shown }` to `Tools.execute`. Default:
   * every tool the scope sees.
   */
  readonly shown?: ShownTools;
  /**
   * The calling context of the calls (usually the turn's context): the tool bodies,
   * guards and `Approval` receive it, and its disposal aborts the calls in flight.
   * Default: the context of the `tools` view.
   */
  readonly ctx?: SystemContext;
}

// The AI SDK recognises a JSON Schema wrapper by this registered symbol (what its own
// `jsonSchema()` helper sets); building it here keeps `ai` a type-only import.
const SCHEMA_MARKER = Symbol.for('vercel.ai.schema');

function inputSchemaOf(parameters: JsonValue): Schema<unknown> {
  const wrapper = {
    [SCHEMA_MARKER]: true,
    _type: undefined,
    // A fresh copy on every read: the model is shown the registered schema unchanged.
    get jsonSchema(): JSONSchema7 {
      return thawJson(parameters) as JSONSchema7;
    },
    // No validation by the SDK: polestar validates (an invalid call is INVALID_ARGS).
    validate: undefined,
  };
  return wrapper as unknown as Schema<unknown>;
}

/**
 * The tools of `tools` (a `Tools` view) as a record of AI SDK tools, keyed by name, for
 * `generateText({ tools })` / `streamText({ tools })`. Every call the SDK makes runs
 * through `Tools.execute` (in `scope`, with `{ shown }`, through `ctx`), with the call's
 * `toolCallId` as `callId` and the SDK's `abortSignal` as its signal. A failed call never
 * throws: its result reaches the model as `error-text` with polestar's text
 * (`Error: <reason>`), so the model can correct itself. Two calls with one id at once:
 * the second is answered `INVALID_ARGS` without running. The SDK's own input validation
 * is off (polestar's schema check answers instead); arguments that are not JSON at all
 * are answered by the SDK itself (a `tool-error`) before any tool runs.
 *
 * @throws TypeError for a `tools` that is not a `Tools` view, a malformed option, a `ctx`
 *   of another server than `tools`, or a tool name outside `^[a-zA-Z0-9_-]{1,64}$` (the providers would refuse the request:
 *   every such name is listed).
 *
 * @example
 * ```ts
 * const turn = await prepareTurn(turnCtx);
 * const result = await generateText({
 *   model,
 *   system: turn.system,
 *   prompt: 'What causes tides?',
 *   tools: toAiSdkTools(turnCtx.get(Tools), { shown: turn.assembly }),
 *   stopWhen: stepCountIs(5),
 * });
 * ```
 */
export function toAiSdkTools(tools: Tools, options: AiSdkToolsOptions = {}): AiSdkTools {
  const { source } = readToolSource('toAiSdkTools(tools, options)', tools, options, []);
  // No prototype: a name the model makes up (`toString`) finds nothing here.
  const out: AiSdkTools = Object.create(null) as AiSdkTools;
  for (const s of source.schemas) {
    const name = s.name;
    const tool: AiSdkTool = {
      description: s.description,
      inputSchema: inputSchemaOf(s.parameters as JsonValue),
      execute: (input, { toolCallId, abortSignal }) => source.run({ callId: toolCallId, name, arguments: input, signal: abortSignal }),
      toModelOutput: ({ output }) => (output.isError ? { type: 'error-text', value: output.content } : { type: 'text', value: output.content }),
    };
    Object.defineProperty(out, name, { value: tool, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
