/**
 * The capture tool of a task with `output`, and its registration through the subagent's
 * own scope (after its `setup`, still unpublished): the tool whose parameters are the
 * task's schema, its instruction as a protected prompt section, the `tools/result`
 * observer that commits, and the guard that stops the task. Everything is owned by the
 * subagent's context, so it is undone with it, and no other agent's scope sees any of it.
 */
import type { SystemContext } from '../../context/system-context.js';
import { Events } from '../../events/events.js';
import { Prompts } from '../../prompts/prompts.js';
import { Tools } from '../../tools/tools.js';
import type { Tool, ToolExecution, ToolResult } from '../../tools/types.js';
import type { JsonValue } from '../../util/lossless-json.js';
import { INSTRUCTION_SECTION, type OutputPlan } from './options.js';
import type { CaptureStage } from './stage.js';
import { denyAfterStop } from './stop.js';

/** Where the instruction goes in the prompt: after every ordinary section. */
const INSTRUCTION_ORDER = 1_000_000_000;

/** What the model gets back from a successful capture call. */
const RECORDED = 'Recorded: this is your final answer. Your task is done; call no more tools.';

/** @internal The stored record of a task's capture tool (deep-frozen; its parameters are the plan's interned schema). */
export function captureTool(plan: OutputPlan, stage: CaptureStage): Tool {
  const toolName = plan.toolName;
  return Object.freeze({
    name: toolName,
    description: 'Records the final answer of your task, exactly once. Its arguments are the answer.',
    parameters: plan.parameters,
    execute: (args: unknown, execution: ToolExecution): string => {
      stage.stage(execution, args as JsonValue, toolName);
      return RECORDED;
    },
  });
}

/**
 * @internal Registers the capture of one task through `agentCtx` (the subagent's scoped
 * context): the tool, the protected instruction, the committing observer and the guard.
 * `registered()` is told once the tool holds the plan's validator reference.
 *
 * @throws TypeError naming the tool when the subagent already sees a tool of that name (a
 *   global one, or one its setup registered).
 */
export function installCapture(agentCtx: SystemContext, plan: OutputPlan, stage: CaptureStage, task: string, registered: () => void): void {
  const { toolName, registry } = plan;
  const scope = agentCtx._scopeKey;
  // every name the subagent's view knows: its own layer's and the global layer's (a
  // restricted global tool included), read without building the view
  if (registry.layers.own(scope, toolName) !== undefined || registry.layers.own(undefined, toolName) !== undefined) {
    throw new TypeError(
      `${task}: the capture tool "${toolName}" would hide a tool the subagent already sees (a global tool, or one its setup registers); ` +
        'choose another name with output: { schema, toolName }.',
    );
  }
  registry.layers.add(agentCtx, toolName, captureTool(plan, stage));
  registered();
  const prompts = agentCtx.get(Prompts);
  prompts.section({ name: INSTRUCTION_SECTION, order: INSTRUCTION_ORDER, text: plan.instruction });
  prompts.protect({ sections: [INSTRUCTION_SECTION], tools: [toolName] });
  // First among the observers: the commit does not wait for another observer's promise.
  agentCtx.get(Events).on('tools/result', (execution: ToolExecution, result: ToolResult) => void stage.settle(execution, result), { prepend: true });
  agentCtx.get(Tools).guard(denyAfterStop(stage, task, toolName));
}
