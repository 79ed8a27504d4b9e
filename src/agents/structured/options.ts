/**
 * Reading a task's `output` option: the schema (or `{ schema, toolName?, instruction? }`),
 * checked and snapshotted when `runTask` is called, before anything is made, so a later
 * change to the caller's schema object changes nothing.
 */
import type { Server } from '../../context/server.js';
import { describeValue } from '../../context/token.js';
import { promptRegistryOf } from '../../prompts/prompts.js';
import { standardTarget } from '../../tools/schema/dialects.js';
import type { StandardJsonSchema } from '../../tools/schema/standard-schema.js';
import { toolRegistryOf } from '../../tools/tools.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { JsonSchema, Tool } from '../../tools/types.js';
import type { JsonObject } from '../../util/lossless-json.js';
import { readField } from '../../util/read-field.js';

/**
 * The schema of a task's structured result: a JSON Schema object (draft-07, 2019-09 or
 * 2020-12, by its `$schema`; without one, `ToolsPlugin`'s `defaultDialect`) or a Standard
 * Schema that emits JSON Schema, such as a zod 4 schema. It becomes the parameters of the
 * task's capture tool, so the rules of a tool's `parameters` apply. `V` is the type of
 * the value: a Standard Schema's input type, inferred; declare it for a JSON Schema.
 */
export type TaskOutputSchema<V = unknown> = JsonSchema | StandardJsonSchema<V>;

/** The long form of a task's `output` option: the schema and how the subagent is asked for it. */
export interface TaskOutputOptions<V = unknown> {
  /** The schema of the structured result (see {@link TaskOutputSchema}). Required. */
  readonly schema: TaskOutputSchema<V>;
  /**
   * The name of the capture tool the subagent calls with its result. Default:
   * `structured_output`. It must match `^[a-zA-Z0-9_-]{1,64}$` (what model providers
   * accept) and must not be the name of a tool the subagent already sees.
   */
  readonly toolName?: string;
  /**
   * The instruction the subagent's prompt gets (a protected prompt section). Default: a
   * sentence asking it to call the capture tool exactly once with its final answer, and
   * no tool after it.
   */
  readonly instruction?: string;
}

/**
 * What `agents.runTask({ output })` takes: the schema itself, or
 * `{ schema, toolName?, instruction? }` (an object with an own `schema` property is read
 * as that long form).
 */
export type TaskOutput<V = unknown> = TaskOutputSchema<V> | TaskOutputOptions<V>;

/** @internal The default name of the capture tool. */
export const DEFAULT_TOOL_NAME = 'structured_output';

/** @internal The name of the prompt section holding the instruction. */
export const INSTRUCTION_SECTION = 'polestar:structured-output';

/** What a capture tool name must look like (the providers' rule). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** @internal A task's `output`, read and checked: everything the capture needs, before any await. */
export interface OutputPlan {
  readonly toolName: string;
  readonly instruction: string;
  /**
   * The interned, deep-frozen JSON Schema. It holds one reference to its compiled
   * validator, passed to the capture tool's registration (or released with
   * {@link OutputPlan.registry}'s `releaseValidator` when the tool is never registered).
   */
  readonly parameters: JsonObject;
  /** The server's tools registry. */
  readonly registry: ToolRegistry;
}

/** The default instruction of the default tool name, made once. */
let defaultToolInstruction: string | undefined;

/** @internal The default instruction for the capture tool `toolName`. */
export function defaultInstruction(toolName: string): string {
  if (toolName === DEFAULT_TOOL_NAME) return (defaultToolInstruction ??= instructionFor(toolName));
  return instructionFor(toolName);
}

function instructionFor(toolName: string): string {
  return (
    `When you have your final answer, call the tool "${toolName}" exactly once, with the whole answer as its arguments. ` +
    'That call ends your task: do not call any tool after it.'
  );
}

/**
 * @internal Reads `output` (each field once), snapshots and compiles its schema. `where`
 * names the task in every message (`Agents.runTask({ id: "x", output })`).
 *
 * @throws TypeError naming `output` for a value that is neither a schema nor the long
 *   form, for a bad `toolName` or `instruction`, or when `ToolsPlugin` or `PromptsPlugin`
 *   is missing; `ToolSchemaError` (its message prefixed with `where`) for a schema its
 *   dialect refuses; `NotLosslessJsonError` for a schema JSON can not carry.
 */
export function readOutput(output: unknown, where: string, server: Server): OutputPlan {
  if (output === null || typeof output !== 'object') {
    throw new TypeError(
      `${where}: output must be a tool-parameter schema (a JSON Schema object, or a Standard Schema such as a zod 4 schema) ` +
        `or { schema, toolName?, instruction? }, got ${describeValue(output)}.`,
    );
  }
  let long: boolean;
  try {
    long = Object.hasOwn(output, 'schema');
  } catch (err) {
    throw new TypeError(`${where}: output could not be read: ${describeValue(err)}. Pass a schema or a plain object { schema, toolName?, instruction? }.`, { cause: err });
  }
  let schema: unknown = output;
  let toolName: unknown = DEFAULT_TOOL_NAME;
  let instruction: unknown;
  if (long) {
    schema = readField(output, 'schema', where, 'output');
    toolName = readField(output, 'toolName', where, 'output') ?? DEFAULT_TOOL_NAME;
    instruction = readField(output, 'instruction', where, 'output');
    if (schema === null || typeof schema !== 'object') {
      throw new TypeError(`${where}: output.schema must be a tool-parameter schema (a JSON Schema object, or a Standard Schema such as a zod 4 schema), got ${describeValue(schema)}.`);
    }
    if (typeof toolName !== 'string' || !TOOL_NAME.test(toolName)) {
      throw new TypeError(`${where}: output.toolName must be a tool name matching ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept), got ${describeValue(toolName)}.`);
    }
    if (instruction !== undefined && (typeof instruction !== 'string' || instruction.trim().length === 0)) {
      throw new TypeError(`${where}: output.instruction must be a non-empty string (the text the subagent's prompt gets), got ${describeValue(instruction)}.`);
    }
  }
  const name = toolName as string;
  const registry = toolRegistryOf(server);
  if (registry === undefined) {
    throw new TypeError(`${where}: output needs ToolsPlugin (the subagent records its result with a tool): server.addPlugins(new ToolsPlugin()).`);
  }
  if (promptRegistryOf(server) === undefined) {
    throw new TypeError(`${where}: output needs PromptsPlugin (the subagent's prompt gets the instruction to record its result): server.addPlugins(new PromptsPlugin()).`);
  }
  let parameters: JsonObject;
  try {
    const steps = registry.parameterSteps;
    parameters = steps.intern(name, steps.snapshot(name, schema, standardTarget(registry.options.defaultDialect)));
  } catch (err) {
    throw named(err, where);
  }
  return { toolName: name, instruction: (instruction as string | undefined) ?? defaultInstruction(name), parameters, registry };
}

/** @internal Drops the plan's validator reference, for a task whose capture tool was never registered. */
export function releaseOutput(plan: OutputPlan): void {
  // the registry releases by the interned parameters (all a stored tool's release reads)
  plan.registry.releaseValidator({ parameters: plan.parameters } as Tool);
}

/** The schema's refusal (a `ToolSchemaError`, a `NotLosslessJsonError`, a `TypeError`), its message naming the task too. */
function named(err: unknown, where: string): unknown {
  if (err instanceof Error) {
    try {
      err.message = `${where}: output: ${err.message}`;
    } catch {
      // a frozen error keeps its own message
    }
  }
  return err;
}
