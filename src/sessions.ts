/**
 * polestar-di/sessions: the store-author contract of durable sessions. Everything a
 * `SessionStore` of your own needs: the interface and the values it takes and returns, the
 * error it rejects with, the input checks polestar's own stores run (so a store of yours
 * refuses malformed input with the same `TypeError`s and writes nothing), and the SQL driver
 * port with the SQL store built on it. Check a store with `runSessionStoreConformance` from
 * `polestar-di/testing`.
 *
 * @packageDocumentation
 */
export { HISTORY_KIND_PREFIX } from './sessions/store/contract.js';
export type {
  SessionStore,
  Lease,
  PersistedLocal,
  NewSessionEvent,
  SessionEventStatus,
  StoredSessionEvent,
  TurnAttempt,
  BegunAttempt,
  OpenAttempt,
  CommittedTurn,
  CheckpointInfo,
  Checkpoint,
  LeaseState,
  SessionInfo,
  LoadedSession,
  SessionSummary,
  SessionPage,
  CreateSessionInput,
  AcquireOptions,
  CommitInput,
  AbortInput,
  BeginOptions,
  AttemptStatus,
  DeleteOptions,
  ListQuery,
  EventsQuery,
  HolderRequest,
  StoreWake,
  StoreWatch,
} from './sessions/store/contract.js';
export { SessionError, SESSION_ERROR_CODES } from './sessions/errors.js';
export type { SessionErrorCode, SessionErrorOptions, LeaseHolder } from './sessions/errors.js';
export { checkAbort, checkAcquire, checkAttempt, checkBegin, checkCancelRequest, checkCommit, checkCreate, checkDelete, checkHandoffRequest, checkEvents, checkEventsQuery, checkInt, checkJson, checkLabel, checkLease, checkList, checkLoad, checkLocals, checkName, checkRenew, compareCodePoints, encodeCursor } from './sessions/store/input.js';
export type { CheckedAbort, CheckedBegin, CheckedCancelRequest, CheckedCommit, CheckedCreate } from './sessions/store/input.js';
export { SqlSessionStore } from './sessions/store/sql/base.js';
export type { SqlSessionStoreOptions } from './sessions/store/sql/base.js';
export type { SqlConn, SqlDialect, SqlDriver, SqlResult, SqlRow, SqlValue } from './sessions/store/sql/driver.js';
export type { StoreBounds } from './sessions/store/store-bound.js';
