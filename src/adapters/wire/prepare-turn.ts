/**
 * One model turn, provider-neutral: what the model is shown (`prepareTurn`: the rendered
 * system prompt and the tools of the prompt assembly, both read through the calling
 * context) and the calls it makes run through that same context, refusing any tool the
 * turn did not show (`executeToolCall`).
 */
import { SystemContext } from '../../context/system-context.js';
import { describeValue } from '../../util/describe-value.js';
import { Prompts } from '../../prompts/prompts.js';
import type { PromptAssembly } from '../../prompts/types.js';
import { Tools } from '../../tools/tools.js';
import type { ToolCall, ToolResult, ToolSchema } from '../../tools/types.js';

/** What one model turn shows the model, made by {@link prepareTurn}. */
export interface PreparedTurn {
  /** The system prompt: the assembly rendered (`Prompts.render`). */
  readonly system: string;
  /** The tools shown to the model: exactly `assembly.tools`. Convert them with `toOpenAIChatTools` and the like. */
  readonly tools: readonly ToolSchema[];
  /** The assembly both were made from; {@link executeToolCall} refuses any tool it did not show. */
  readonly assembly: PromptAssembly;
}

/**
 * Prepares one model turn through `ctx` (a turn, session or agent context, or any context
 * whose scope is the agent's): `Prompts.assemble()` for the scope of `ctx` (so variable
 * providers and `prompt/assemble` listeners see `ctx`), rendered into the system prompt,
 * with the tools that assembly shows.
 *
 * Rejects (never throws) with a `TypeError` when `ctx` is not a context or `PromptsPlugin`
 * is not installed, and with whatever `assemble`/`render` reject or throw (e.g. a
 * `PromptError` for an unknown `{{variable}}`).
 *
 * @example
 * ```ts
 * const turn = await prepareTurn(turnCtx);
 * const request = { system: turn.system, tools: toAnthropicTools(turn.tools) };
 * ```
 */
export async function prepareTurn(ctx: SystemContext): Promise<PreparedTurn> {
  if (!(ctx instanceof SystemContext)) {
    throw new TypeError(`prepareTurn(ctx): ctx must be a SystemContext (a turn, session or agent context), got ${describeValue(ctx)}.`);
  }
  const prompts = ctx.tryGet(Prompts);
  if (prompts === undefined) {
    ctx._live('prepareTurn()');
    throw new TypeError('prepareTurn(ctx): Prompts is not installed; add it with server.addPlugins(new PromptsPlugin()) before server.finish().');
  }
  const assembly = await prompts.assemble();
  const system = prompts.render(assembly);
  return Object.freeze({ system, tools: assembly.tools, assembly });
}

/**
 * Runs one tool call of the model through `ctx`'s `Tools` view (so the tool body, guards,
 * `Approval` and every `tools/*` listener see `ctx`), refusing a tool that `turn` did not
 * show the model: `ctx.get(Tools).execute(call, { shown: turn.assembly })`. Like
 * `Tools.execute` it never rejects for a bad call: it resolves to an error result
 * (`UNKNOWN_TOOL` for a tool the turn did not show).
 *
 * Rejects with a `TypeError` only for a programming error: `ctx` not a context, `Tools`
 * not installed, or `turn` not a {@link PreparedTurn}.
 *
 * @example
 * ```ts
 * const call = fromAnthropicToolUse(block, turnCtx.signal);
 * const result = await executeToolCall(turnCtx, turn, call);
 * ```
 */
export async function executeToolCall(ctx: SystemContext, turn: PreparedTurn, call: ToolCall): Promise<ToolResult> {
  if (!(ctx instanceof SystemContext)) {
    throw new TypeError(`executeToolCall(ctx, turn, call): ctx must be a SystemContext, got ${describeValue(ctx)}.`);
  }
  const assembly = (turn as { assembly?: unknown } | null | undefined)?.assembly;
  if (assembly === null || typeof assembly !== 'object' || !Array.isArray((assembly as { tools?: unknown }).tools)) {
    throw new TypeError(`executeToolCall(ctx, turn, call): turn must be what prepareTurn(ctx) resolved to (with an assembly), got ${describeValue(turn)}.`);
  }
  const tools = ctx.tryGet(Tools);
  if (tools === undefined) {
    ctx._live('executeToolCall()');
    throw new TypeError('executeToolCall(ctx, turn, call): Tools is not installed; add it with server.addPlugins(new ToolsPlugin()) before server.finish().');
  }
  return tools.execute(call, { shown: assembly as PromptAssembly });
}
