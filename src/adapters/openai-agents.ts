/**
 * `polestar-di/adapters/openai-agents`: the OpenAI Agents SDK (`@openai/agents`, an
 * optional peer dependency) meets polestar. `toAgentsSdkTools` turns a `Tools` view into
 * the SDK's function tools, every call running through `Tools.execute`, sent with
 * `strict: true` only where the schema allows it; with `{ task }` (a task run with
 * `output`) the run ends at the subagent's structured result. This entry imports
 * `@openai/agents` (its `tool()` factory); the root entry and the other adapters never do.
 *
 * @packageDocumentation
 */
import type { ToolsToFinalOutputResult, ToolToFinalOutputFunction } from '@openai/agents';
import type { Tools } from '../tools/tools.js';
import { describeValue } from '../util/describe-value.js';
import { toAgentsSdkTools as toTools, type AgentsSdkTool, type AgentsSdkToolsOptions } from './wire/openai-agents/tools.js';

export type { AgentsSdkTool, AgentsSdkToolsOptions } from './wire/openai-agents/tools.js';

/**
 * What {@link toAgentsSdkTools} and {@link taskToolUseBehavior} read of a task: the
 * `task` object `agents.runTask({ output, fn })` hands to `fn` fits.
 */
export interface AgentsSdkTask {
  /** Whether the task recorded its structured result. */
  readonly stopped: boolean;
  /** The recorded value (`undefined` until then). */
  readonly value: unknown;
}

/** Options of {@link toAgentsSdkTools}: those of the tools, and the task whose run the tools end. */
export interface AgentsSdkTaskToolsOptions extends AgentsSdkToolsOptions {
  /**
   * The task (of `agents.runTask({ output, fn })`) these tools serve: once it is stopped
   * (its structured result was recorded), every tool of the list is disabled (the SDK's
   * `isEnabled`), so the model is offered no tool again and the run ends with its next
   * answer. To end the run at the capture call itself, without that last model request,
   * also give the agent `toolUseBehavior: taskToolUseBehavior(task)`. Either way polestar's
   * guard denies any later call.
   */
  readonly task?: AgentsSdkTask;
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
 * With `task`, the tools end the run of a task run with `output` (see
 * {@link AgentsSdkTaskToolsOptions.task}).
 *
 * @throws TypeError for a `tools` that is not a `Tools` view, a malformed option (a `task`
 *   without a boolean `stopped` included), a `ctx` of another server than `tools`, a tool
 *   name outside `^[a-zA-Z0-9_-]{1,64}$` (OpenAI would refuse the request: every such name
 *   is listed), a root schema that is not an object, or, with `strict: true`, a schema
 *   outside OpenAI's strict subset.
 *
 * @example
 * ```ts
 * const { value } = await agents.runTask({ output: { schema: Draft }, fn: async (writer, task) => {
 *   const turn = await prepareTurn(writer.ctx);
 *   const agent = new Agent({ name: 'writer', instructions: turn.system, model,
 *     tools: toAgentsSdkTools(writer.ctx.get(Tools), { shown: turn.assembly, task }),
 *     toolUseBehavior: taskToolUseBehavior(task) });
 *   return (await run(agent, 'Write the article.')).finalOutput;
 * } });
 * ```
 */
export function toAgentsSdkTools<Context = unknown>(tools: Tools, options: AgentsSdkTaskToolsOptions = {}): AgentsSdkTool<Context>[] {
  const where = 'toAgentsSdkTools(tools, options)';
  let task: unknown;
  let rest: AgentsSdkToolsOptions = options;
  if (options !== null && typeof options === 'object' && !Array.isArray(options) && Object.hasOwn(options, 'task')) {
    ({ task, ...rest } = options);
    if (task !== undefined) checkTask(task, `${where}: task`);
  }
  const made = toTools<Context>(tools, rest);
  if (task === undefined) return made;
  const t = task as AgentsSdkTask;
  const enabled = async (): Promise<boolean> => !t.stopped;
  for (const tool of made) tool.isEnabled = enabled;
  return made;
}

/**
 * A `toolUseBehavior` for the Agents SDK `Agent` of a task run with `output`: the run ends
 * with the tool calls of the step in which the task stopped (its structured result
 * recorded), without another model request; its `finalOutput` is the recorded value as
 * JSON text. Before that, the model runs again after every tool call (the SDK's default).
 *
 * @throws TypeError for a `task` without a boolean `stopped`.
 *
 * @example
 * ```ts
 * new Agent({ name: 'writer', model, tools: toAgentsSdkTools(tools, { task }), toolUseBehavior: taskToolUseBehavior(task) });
 * ```
 */
export function taskToolUseBehavior(task: AgentsSdkTask): ToolToFinalOutputFunction {
  checkTask(task, 'taskToolUseBehavior(task)');
  return (): ToolsToFinalOutputResult =>
    task.stopped ? { isFinalOutput: true, isInterrupted: undefined, finalOutput: JSON.stringify(task.value) ?? '' } : { isFinalOutput: false, isInterrupted: undefined };
}

function checkTask(task: unknown, where: string): void {
  let stopped: unknown;
  try {
    stopped = task !== null && typeof task === 'object' ? (task as { stopped?: unknown }).stopped : undefined;
  } catch {
    stopped = undefined;
  }
  if (typeof stopped !== 'boolean') {
    throw new TypeError(`${where}: task must be the task of agents.runTask({ output, fn }) (the second argument of fn), got ${describeValue(task)}.`);
  }
}
