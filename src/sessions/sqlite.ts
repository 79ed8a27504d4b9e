/**
 * polestar-di/sessions/sqlite: the SQLite session store, on `@libsql/client` (an optional
 * peer dependency: `npm install @libsql/client`).
 *
 * Embedded, durable, one file. Several processes on one host may share the file: SQLite's
 * file locks serialize writers, and a write that waits longer than `busyTimeoutMs` for the
 * lock fails with `STORE_LOCKED`. Network filesystems are not supported (SQLite's locks and
 * its WAL shared memory need a local filesystem).
 *
 * @packageDocumentation
 */
export { SqliteSessionStore, DEFAULT_SQLITE_BUSY_TIMEOUT_MS } from './store/sql/sqlite.js';
export type { SqliteSessionStoreOptions } from './store/sql/sqlite.js';
