/**
 * The approval seam used when a `tools/pre-execute` listener answers `{ kind: 'ask' }`.
 */
import type { SystemContext } from '../context/system-context.js';
import type { ToolExecution } from './types.js';

/**
 * Grants or refuses a tool call a `tools/pre-execute` listener asked about. Install one
 * as a global under this token (`server.insertGlobal(Approval, myApproval)`) or as a
 * local of an agent's context to give one agent its own channel. Only a result of
 * exactly `true` grants the call; anything else, a throw, or no `Approval` at all denies.
 *
 * Which `Approval` decides depends on the scope the call resolves in, never on
 * the view it came through: `Res(Approval)` from that scope's context (`scope.ctx`, e.g.
 * the agent's context, walking up to the globals), and for the global layer the global
 * `Approval` only. Per-conversation approval uses the calling context `approve` receives.
 * When the call is aborted while `approve` is pending, the call settles at once
 * (`EXECUTION_ERROR`) and the answer is ignored; an already-aborted call is never asked
 * about.
 *
 * @example
 * ```ts
 * server.insertGlobal(Approval, { approve: async (execution, reason, ctx) => askTheUser(ctx, execution.name, reason) });
 * ```
 */
export abstract class Approval {
  /**
   * Decides an `ask`.
   *
   * @param execution - the frozen execution being asked about.
   * @param reason - the reason the listener gave, if any.
   * @param ctx - the calling context: the context whose `Tools` view `execute` was called
   *   through (a turn, usually); read the conversation from it.
   */
  abstract approve(execution: ToolExecution, reason: string | undefined, ctx: SystemContext): boolean | Promise<boolean>;
}
