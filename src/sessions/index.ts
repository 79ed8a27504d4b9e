// Durable sessions: the store contract, its error, and the in-memory store. The SQL stores
// have their own entry points (polestar-di/sessions/sqlite, polestar-di/sessions/postgres),
// each importing only its own driver.
export type { SessionEventInfo, SessionLeaseLostInfo } from './events.js'; // and, loading it, the session/* events and reserved prefixes
import './events.js';
export { SessionError, SESSION_ERROR_CODES } from './errors.js';
export type { SessionErrorCode, SessionErrorOptions, LeaseHolder } from './errors.js';
export { HISTORY_KIND_PREFIX } from './store/contract.js';
export type { SessionStore, Lease, PersistedLocal, NewSessionEvent, SessionEventStatus, StoredSessionEvent, TurnAttempt, BegunAttempt, OpenAttempt, CommittedTurn, CheckpointInfo, Checkpoint, LeaseState, SessionInfo, LoadedSession, SessionSummary, SessionPage, CreateSessionInput, AcquireOptions, CommitInput, AbortInput, BeginOptions, AttemptStatus, DeleteOptions, ListQuery, EventsQuery } from './store/contract.js';
export { MemorySessionStore } from './store/memory.js';
export type { MemorySessionStoreOptions } from './store/memory.js';
export { SessionsPlugin } from './plugin.js';
export type { SessionsPluginOptions } from './plugin.js';
export { Sessions } from './sessions.js';
export type {
  CreateSessionOptions,
  OpenSessionOptions,
  ResumeSessionOptions,
  OneshotOptions,
  OneshotResult,
  SessionListItem,
  SessionListPage,
} from './sessions.js';
export { DurableSession } from './durable/durable-session.js';
export type { TurnFn, DurableTurnOptions } from './durable/turn.js';
export type { SessionCheckpoint, TurnSlotOptions } from './durable/rollback.js';
export { TurnLog } from './turn-log.js';
export type { LocalSerializer, SerializerEntry } from './serializers.js';
export type { SessionEventRecord, InterruptedTurn, InterruptedHandler } from './runtime.js';
