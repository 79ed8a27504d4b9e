/**
 * polestar's tools as OpenAI Agents SDK function tools: each runs through `Tools.execute`,
 * so schema checks, guards, `Approval`, events and "only what the model was shown can
 * run" apply to the calls `run()` makes.
 */
import { tool, type FunctionTool } from '@openai/agents';
import type { SystemContext } from '../../../context/system-context.js';
import { describeValue } from '../../../util/describe-value.js';
import { thawJson, type JsonValue } from '../../../util/lossless-json.js';
import type { Tools } from '../../../tools/tools.js';
import type { ShownTools, ToolSchema } from '../../../tools/types.js';
import type { Obj } from '../provider-meta.js';
import { readToolSource } from '../tool-source.js';
import { outsideStrictSubset } from './strict.js';

/**
 * One polestar tool as an Agents SDK function tool (the SDK's `FunctionTool` for the run
 * context type `Context`): its output is polestar's result text (`Error: <reason>` for a
 * failed call, returned to the model, never thrown).
 */
export type AgentsSdkTool<Context = unknown> = FunctionTool<Context>;

/** Options of {@link toAgentsSdkTools}. */
export interface AgentsSdkToolsOptions {
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
  /**
   * Whether the tools are sent with OpenAI's `strict: true` (the model's arguments then
   * always match the schema). `'auto'` (the default): strict exactly for a schema inside
   * OpenAI's strict subset (below); `false`: never; `true`: always, refusing a schema
   * outside the subset with a `TypeError` naming the tool and the reason.
   *
   * The strict subset: the root is `{ type: 'object' }`; every object lists all its
   * properties in `required` and sets `additionalProperties: false`; every schema has a
   * `type` (or is an `anyOf`, `enum`, `const` or `$ref`); arrays have one `items` schema;
   * the keywords are only `type`, `properties`, `required`, `additionalProperties`,
   * `items`, `enum`, `const`, `anyOf`, `description`, `title`, `$ref`, `$defs`,
   * `definitions`, `pattern`, `format` (`date-time`, `time`, `date`, `duration`,
   * `email`, `hostname`, `ipv4`, `ipv6`, `uuid`), `multipleOf`, `minimum`, `maximum`,
   * `exclusiveMinimum`, `exclusiveMaximum`, `minItems` and `maxItems`; at most 10 levels
   * of nesting, 5,000 properties and 1,000 values per `enum`. A root `$schema` is left out
   * of a strict tool's schema (polestar still validates with the registered dialect).
   */
  readonly strict?: 'auto' | boolean;
}

/**
 * The tools of `tools` (a `Tools` view) as Agents SDK `FunctionTool`s, for `new Agent({
 * tools })`. Every call `run()` makes runs through `Tools.execute` (in `scope`, with `{
 * shown }`, through `ctx`), with the call's `callId` and the run's abort signal. A failed
 * call never throws: polestar's result text (`Error: <reason>`) is the tool's output, so
 * the model can correct itself (a thrown error would reach it only as the SDK's generic
 * message). Two calls with one id at once: the second is answered `INVALID_ARGS` without
 * running. Arguments that are not JSON at all are answered by the SDK itself before any
 * tool runs. A schema without a root `type` is sent as `{ type: 'object', … }`.
 *
 * @throws TypeError for a `tools` that is not a `Tools` view, a malformed option, a `ctx`
 *   of another server than `tools`, a tool name outside `^[a-zA-Z0-9_-]{1,64}$` (OpenAI would refuse the request: every such
 *   name is listed), a root schema that is not an object, or, with `strict: true`, a
 *   schema outside OpenAI's strict subset.
 *
 * @example
 * ```ts
 * const turn = await prepareTurn(turnCtx);
 * const agent = new Agent({ name: 'researcher', instructions: turn.system, model,
 *   tools: toAgentsSdkTools(turnCtx.get(Tools), { shown: turn.assembly }) });
 * const result = await run(agent, 'What causes tides?');
 * ```
 */
export function toAgentsSdkTools<Context = unknown>(tools: Tools, options: AgentsSdkToolsOptions = {}): AgentsSdkTool<Context>[] {
  const where = 'toAgentsSdkTools(tools, options)';
  const { source, options: read } = readToolSource(where, tools, options, ['strict']);
  const strict = read.strict ?? 'auto';
  if (strict !== 'auto' && typeof strict !== 'boolean') throw new TypeError(`${where}: strict must be 'auto', true or false, got ${describeValue(strict)}.`);
  const notObjects = source.schemas.filter((s) => {
    const t = s.parameters.type;
    return !(t === undefined || t === 'object' || (Array.isArray(t) && t.includes('object')));
  });
  if (notObjects.length > 0) {
    throw new TypeError(
      `${where}: OpenAI needs an object root schema ({ type: 'object', … }); not an object: ` +
        `${notObjects.map((s) => `${JSON.stringify(s.name)} (type ${JSON.stringify(s.parameters.type)})`).join(', ')}. ` +
        'Register such a tool with an object schema (e.g. wrap the value in a property) or hide it from this turn with Tools.restrict.',
    );
  }
  return source.schemas.map((s): AgentsSdkTool<Context> => {
    const name = s.name;
    const { parameters, isStrict } = shownParameters(s, strict, where);
    // The SDK's own factory, so the tool takes part in its bookkeeping (a static approval
    // policy, timeouts, tracing). Made non-strict so the SDK parses the arguments as plain
    // JSON (its strict path rewrites schemas and strips nulls), then given the strictness
    // and the exact name polestar shows (the factory would turn "-" into "_").
    const made = tool<NonStrictParameters, Context>({
      name,
      description: s.description,
      parameters: parameters as NonStrictParameters,
      strict: false,
      execute: async (input, _runContext, details) => {
        const result = await source.run({ callId: details?.toolCall?.callId ?? '', name, arguments: input, signal: details?.signal });
        return result.content;
      },
    });
    made.name = name;
    made.strict = isStrict;
    // Typed as a FunctionTool with the default type parameters, which plain `FunctionTool[]`
    // and `Agent({ tools })` accept (the SDK's are invariant); its approval policy reads no input.
    return made as unknown as AgentsSdkTool<Context>;
  });
}

/** The SDK's type of a function tool's `parameters`. */
type SdkParameters = FunctionTool['parameters'];
/** The SDK's type of JSON Schema `parameters` it reads as plain JSON Schema (not a zod schema). */
type NonStrictParameters = Extract<SdkParameters, { additionalProperties: true }>;

function shownParameters(s: ToolSchema, strict: 'auto' | boolean, where: string): { parameters: SdkParameters; isStrict: boolean } {
  const schema = thawJson(s.parameters as JsonValue) as Obj;
  if (schema.type === undefined) schema.type = 'object';
  let isStrict = false;
  if (strict !== false) {
    const { $schema: _dialect, ...rest } = schema;
    const why = outsideStrictSubset(rest);
    if (why === undefined) {
      isStrict = true;
      // The SDK's strict type: { type: 'object', properties, required, additionalProperties: false, … }.
      return { parameters: rest as SdkParameters, isStrict };
    }
    if (strict === true) {
      throw new TypeError(
        `${where}: tool ${JSON.stringify(s.name)} is outside OpenAI's strict subset: ${why}. ` +
          "Pass strict: 'auto' (strict only where the schema allows it) or false, or make the schema strict-compatible.",
      );
    }
  }
  // Sent as registered: OpenAI reads a non-strict schema as plain JSON Schema.
  return { parameters: schema as SdkParameters, isStrict };
}
