/**
 * polestar-di/sessions/postgres: the PostgreSQL session store, on `pg` (an optional peer
 * dependency: `npm install pg`) or any pool with the same `connect()` / `query()` shape.
 *
 * Many processes on many machines may share one database: leases expire on the database's
 * clock, and every write is fenced by the lease's epoch.
 *
 * @packageDocumentation
 */
export { PostgresSessionStore } from './store/sql/postgres.js';
export type { PostgresSessionStoreOptions, PostgresWakeOptions } from './store/sql/postgres.js';
export { PgDriverError, serverTimeouts } from './store/sql/pg-driver.js';
export type { PgPoolClientLike, PgPoolLike, PgQueryConfig, PgQueryResultLike } from './store/sql/pg-driver.js';
