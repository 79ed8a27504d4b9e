/**
 * The durable sessions' events: the info their listeners receive, their listener types in
 * `EventMap` (by declaration merging) and the reserved `session/` and `sessions/`
 * prefixes, registered when this module loads.
 */
import { reserveEventNames } from '../events/reserved.js';

/**
 * What every `session/*` listener receives: one frozen object describing the durable
 * session at the moment of the event.
 */
export interface SessionEventInfo {
  /** The durable session's id. */
  readonly sessionId: string;
  /** The id of the agent the session created (the event's scope is that agent). */
  readonly agentId: string;
  /**
   * The session's `committedTurn` at that moment; for `session/rolled-back`, the turn it
   * was rolled back to.
   */
  readonly turn: number;
}

/** What a `session/lease-lost` listener receives: {@link SessionEventInfo} plus the failure. */
export interface SessionLeaseLostInfo extends SessionEventInfo {
  /** The `SessionError` (code `LEASE_LOST`) the fenced write failed with. */
  readonly error: Error;
}

declare module '../events/event-map.js' {
  interface EventMap {
    /** A durable session was created (checkpoint 0 committed); `turn` is 0. */
    'session/created': (info: SessionEventInfo) => unknown;
    /** A durable session was resumed from its store; `turn` is its last committed turn. */
    'session/resumed': (info: SessionEventInfo) => unknown;
    /** A turn was committed; `turn` is its number. */
    'session/turn-committed': (info: SessionEventInfo) => unknown;
    /** The session was rolled back; `turn` is the turn it was rolled back to. */
    'session/rolled-back': (info: SessionEventInfo) => unknown;
    /** A fenced write found the lease lost (`error`); the durable session is disposed at once. */
    'session/lease-lost': (info: SessionLeaseLostInfo) => unknown;
    /** The durable session was disposed (closed, disposed, or after a lost lease). */
    'session/disposed': (info: SessionEventInfo) => unknown;
  }
}

reserveEventNames(
  ['session/', 'sessions/'],
  ['session/created', 'session/resumed', 'session/turn-committed', 'session/rolled-back', 'session/lease-lost', 'session/disposed'],
);
