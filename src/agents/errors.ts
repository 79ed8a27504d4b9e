/**
 * The error of the agent lifecycle: a create transaction that failed or was refused.
 */
import { branded } from '../util/brand.js';

/**
 * Why an {@link AgentError} was raised, when it has a code: `NO_STRUCTURED_RESULT`, a task
 * run with `output` whose function settled before the subagent recorded its structured
 * result.
 */
export type AgentErrorCode = 'NO_STRUCTURED_RESULT';

/**
 * An agent could not be created (duplicate id, setup failure, owner disposed during
 * setup, a failing `agent/created` listener), or an agent's task failed its contract (see
 * {@link AgentError.code}). The message names the agent; `cause` keeps the original error
 * when there is one.
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
   * What went wrong, for the errors that have a code (`NO_STRUCTURED_RESULT`); `undefined`
   * for a failed or refused create.
   */
  readonly code: AgentErrorCode | undefined;

  /**
   * @param agentId - the id of the agent.
   * @param message - the full message (it should name the agent).
   * @param options - `cause`: the original error; `rollbackError`: a rollback failure;
   *   `code`: the error's code.
   */
  constructor(agentId: string, message: string, options?: { cause?: unknown; rollbackError?: unknown; code?: AgentErrorCode }) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.agentId = agentId;
    this.rollbackError = options?.rollbackError;
    this.code = options?.code;
  }
}
