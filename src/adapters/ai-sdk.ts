/**
 * `polestar-di/adapters/ai-sdk`: the Vercel AI SDK (`ai`, an optional peer dependency)
 * meets polestar. `toAiSdkTools` turns a `Tools` view into the SDK's tool record, every
 * call running through `Tools.execute`; `toAiSdkMessages` and `fromAiSdkMessages`
 * convert conversations between `ChatMessage[]` and the SDK's `ModelMessage[]`, lossless
 * both ways; `taskStopped` ends a `generateText` / `streamText` loop at a task's
 * structured result. This entry imports `ai` for its types only.
 *
 * @packageDocumentation
 */
import type { StopCondition, ToolSet } from 'ai';
import { describeValue } from '../util/describe-value.js';

export { toAiSdkTools } from './wire/ai-sdk/tools.js';
export type { AiSdkTool, AiSdkTools, AiSdkToolsOptions } from './wire/ai-sdk/tools.js';
export { toAiSdkMessages, fromAiSdkMessages } from './wire/ai-sdk/messages.js';

/** What {@link taskStopped} reads of a task: the `task` of `agents.runTask({ output, fn })` fits. */
export interface AiSdkTask {
  /** Whether the task recorded its structured result. */
  readonly stopped: boolean;
}

/**
 * A `stopWhen` condition for `generateText` / `streamText`: true once `task` (the second
 * argument of `fn` in `agents.runTask({ output, fn })`) is stopped, that is once the
 * subagent's capture call succeeded, so the loop ends with the step that recorded the
 * result instead of asking the model again. Combine it with a step bound:
 * `stopWhen: [taskStopped(task), stepCountIs(8)]`.
 *
 * @throws TypeError for a `task` without a boolean `stopped`.
 *
 * @example
 * ```ts
 * const { value } = await agents.runTask({ output: Draft, fn: async (writer, task) => {
 *   const turn = await prepareTurn(writer.ctx);
 *   return generateText({ model, system: turn.system, prompt: 'Write it.',
 *     tools: toAiSdkTools(writer.ctx.get(Tools), { shown: turn.assembly }),
 *     stopWhen: [taskStopped(task), stepCountIs(8)] });
 * } });
 * ```
 */
export function taskStopped<TOOLS extends ToolSet = ToolSet>(task: AiSdkTask): StopCondition<TOOLS> {
  let stopped: unknown;
  try {
    stopped = task !== null && typeof task === 'object' ? task.stopped : undefined;
  } catch {
    stopped = undefined;
  }
  if (typeof stopped !== 'boolean') {
    throw new TypeError(`taskStopped(task): task must be the task of agents.runTask({ output, fn }) (the second argument of fn), got ${describeValue(task)}.`);
  }
  return () => task.stopped;
}
