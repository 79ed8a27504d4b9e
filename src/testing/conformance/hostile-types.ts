/**
 * @internal The types the hostile calls of the session store conformance suite share with
 * the hostile values they are made of.
 */
import type { Lease, TurnAttempt } from '../../sessions/store/contract.js';

/**
 * The state the hostile calls run against. Session A: turn 1 committed by `la`, attempt
 * (2, 1) aborted, attempt (2, 2) open with one flushed event, `la` live. Session B: free (its
 * lease `lb` released). Session C: never created.
 */
export interface HostileSetup {
  readonly agentId: string;
  readonly la: Lease;
  readonly lb: Lease;
  /** `la`'s owner and epoch pointed at session B. */
  readonly forged: Lease;
  readonly committed: TurnAttempt;
  readonly aborted: TurnAttempt;
  readonly open: TurnAttempt;
  readonly c: string;
  readonly ids: readonly string[];
}
