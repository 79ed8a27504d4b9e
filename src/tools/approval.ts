/**
 * The approval seam used when a `tools/pre-execute` listener answers `{ kind: 'ask' }`.
 */
import type { ToolExecution } from './types.js';

/**
 * Grants or refuses a tool call a `tools/pre-execute` listener asked about. Install one
 * as a global under this token (`server.insertGlobal(Approval, myApproval)`) or as a
 * local of an agent's context to give one agent its own channel. Only a result of
 * exactly `true` grants the call; anything else, a throw, or no `Approval` at all denies.
 *
 * @example
 * ```ts
 * server.insertGlobal(Approval, { approve: async (execution, reason) => askTheUser(execution.name, reason) });
 * ```
 */
export abstract class Approval {
  /**
   * Decides an `ask`.
   *
   * @param execution - the frozen execution being asked about.
   * @param reason - the reason the listener gave, if any.
   */
  abstract approve(execution: ToolExecution, reason: string | undefined): boolean | Promise<boolean>;
}
