/**
 * The error of the agent lifecycle: a create transaction that failed or was refused.
 */
import { branded } from '../util/brand.js';

/**
 * An agent could not be created (duplicate id, setup failure, owner disposed during
 * setup, a failing `agent/created` listener). The message names the agent; `cause` keeps
 * the original error when there is one.
 */
export class AgentError extends Error {
  /**
   * True when `value` is an instance of `AgentError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'AgentError');
  /** Always `'AgentError'`. */
  override readonly name = 'AgentError';
  /** The id of the agent the failed transaction was about. */
  readonly agentId: string;
  /**
   * An error thrown while rolling back (disposing the half-composed agent), when the
   * rollback itself failed. The rollback still ran to the end.
   */
  readonly rollbackError: unknown;

  /**
   * @param agentId - the id of the agent.
   * @param message - the full message (it should name the agent).
   * @param options - `cause`: the original error; `rollbackError`: a rollback failure.
   */
  constructor(agentId: string, message: string, options?: { cause?: unknown; rollbackError?: unknown }) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.agentId = agentId;
    this.rollbackError = options?.rollbackError;
  }
}
