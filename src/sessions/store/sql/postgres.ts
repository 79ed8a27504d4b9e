/**
 * The PostgreSQL session store, on `pg` (an optional peer dependency: `npm install pg`) or
 * any pool with the same `connect()` / `query()` shape.
 *
 * Many processes on many machines may share one database: leases expire on the database's
 * clock, and every write is fenced by the lease's epoch.
 */
import { describeValue } from '../../../util/describe-value.js';
import { SessionError } from '../../errors.js';
import { checkInt, checkName, checkObject, checkPollMs } from '../input.js';
import { SqlSessionStore, WAKE_SOURCE } from './base.js';
import { PgDriver, ignore, type Listenable, type OwnedPool, type PgPoolLike } from './pg-driver.js';
import { PgListener, polledSource } from './pg-listen.js';
import type { WakeSource } from './wakes.js';
import type { SessionStore } from '../contract.js';

/**
 * How a {@link PostgresSessionStore} hears about releases, handoff requests and cancels of
 * other processes, and how it sends its statements.
 */
export interface PostgresWakeOptions {
  /**
   * A connection string for one direct, unpooled connection on which the store `LISTEN`s for
   * wake-ups (a release wakes a waiter of another process within about 100 ms). Default: the
   * `connectionString`, when one is given. Point it past PgBouncer in transaction mode, which
   * does not keep `LISTEN`. Without one (a `pool` and no `listen`), wake-ups are polled every
   * `pollMs`, and the store logs that once (a `PolestarWarning`, code `POLESTAR_WAKEUPS_POLLED`).
   */
  readonly listen?: string;
  /**
   * How often wake-ups are polled when they can not be listened for, in milliseconds (a
   * finite number >= 1, default 250).
   */
  readonly pollMs?: number;
  /**
   * Whether the store runs its statements as named prepared statements (default `true`):
   * each connection parses and plans a statement once, the first time it runs there, and
   * from then on receives only its name and its values, which saves the server a parse and
   * a plan on every statement of every turn. Names are `polestar_` and a hash of the SQL,
   * the same in every process.
   *
   * A named statement lives on one server connection. `pg.Pool` keeps track of that by
   * itself; PgBouncer in transaction mode does so from version 1.21 when its
   * `max_prepared_statements` is above 0. Behind an older PgBouncer in transaction mode (or
   * one with `max_prepared_statements = 0`), pass `false`. Left `true` there, the first
   * statement the server does not have fails its transaction before its commit (nothing is
   * written), the store discards that connection, stops naming statements for good, and runs
   * the transaction again unnamed, so nothing fails; `false` only skips that first detour.
   * A pool of your own whose clients do not take `pg`'s query config (`{ name, text,
   * values }`) needs `false` too.
   */
  readonly preparedStatements?: boolean;
}

/** Options of {@link PostgresSessionStore}: a pool of yours, or a connection string. */
export type PostgresSessionStoreOptions =
  | (PostgresWakeOptions & {
      /** Your pool. The store never ends it: `store.close()` leaves it open. */
      readonly pool: PgPoolLike;
    })
  | (PostgresWakeOptions & {
      /** A PostgreSQL URL (`postgres://user@host:5432/db`); the store makes a `pg.Pool` and ends it on `close()`. */
      readonly connectionString: string;
      /** Size of that pool (default 10). */
      readonly max?: number;
    });

/**
 * A {@link SessionStore} in a PostgreSQL database, shared by any number of processes on
 * any number of machines. Leases are rows taken with a conditional `UPDATE … RETURNING` on
 * the database's clock (never the process's), and every write is one transaction fenced by
 * the lease's epoch; no session-level advisory locks are used (they pin a pooled connection
 * per session, break under transaction pooling and give no fencing token), so it works
 * behind PgBouncer in transaction mode. The tables (`polestar_*`, in the connection's
 * `search_path`) are created or migrated on first use under an advisory transaction lock;
 * a schema or rows written by a newer polestar-di are refused with `UNSUPPORTED_FORMAT`.
 *
 * Releases, handoff requests and cancels wake the other processes through `LISTEN`/`NOTIFY`
 * (the notification is sent in the transaction of the write, so only a committed one wakes
 * anyone; commits never notify), on one dedicated connection per store object, opened by the
 * first `watch()` and closed by `close()`; see {@link PostgresWakeOptions}.
 */
export class PostgresSessionStore extends SqlSessionStore implements SessionStore {
  /**
   * @param options - `{ pool }` or `{ connectionString, max? }`, with `listen?`, `pollMs?` and `preparedStatements?`.
   * @throws TypeError when the options are not one of those shapes.
   */
  constructor(options: PostgresSessionStoreOptions) {
    const driver = pgDriverOf(options);
    const o = options as PostgresWakeOptions & { connectionString?: string };
    const listen = o.listen === undefined ? (typeof o.connectionString === 'string' ? o.connectionString : undefined) : checkName(o.listen, 'options.listen');
    const pollMs = checkPollMs(o.pollMs, 'options.pollMs');
    const source = (hub: ConstructorParameters<typeof PgListener>[2]): WakeSource => (listen === undefined ? polledSource() : new PgListener(listen, redact(listen), hub));
    super(driver, { pollMs, [WAKE_SOURCE]: source });
  }
}

/** The driver of a {@link PostgresSessionStore} for its options, or a `TypeError` naming what is wrong with them. */
function pgDriverOf(options: PostgresSessionStoreOptions): PgDriver {
  const o = checkObject<{ pool: PgPoolLike; connectionString: string; max: number; preparedStatements: boolean }>(options, 'new PostgresSessionStore(options)', false);
  const prepared = o.preparedStatements ?? true;
  if (typeof prepared !== 'boolean') throw new TypeError(`new PostgresSessionStore(options): options.preparedStatements must be a boolean, got ${describeValue(prepared)}.`);
  if (o.pool !== undefined) {
    if (o.connectionString !== undefined) throw new TypeError('new PostgresSessionStore(options): give either pool or connectionString, not both.');
    if (o.pool === null || typeof o.pool !== 'object' || typeof (o.pool as { connect?: unknown }).connect !== 'function') {
      throw new TypeError('options.pool must be a pool with connect() (e.g. a pg.Pool).');
    }
    return new PgDriver({ pool: o.pool }, 'the PostgreSQL pool given to PostgresSessionStore', prepared);
  }
  if (o.connectionString === undefined) throw new TypeError('new PostgresSessionStore(options): give pool (a pg.Pool) or connectionString.');
  const url = checkName(o.connectionString, 'options.connectionString');
  const max = o.max === undefined ? 10 : checkInt(o.max, 'options.max', 1, 10_000);
  let made: Promise<OwnedPool> | undefined;
  return new PgDriver({ make: () => (made ??= makePool(url, max)), made: () => made }, `the PostgreSQL database at ${redact(url)}`, prepared);
}

/** Hides the password of a URL in messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'the given connection string';
  }
}

/** The store's own `pg.Pool` for a connection string (or `STORE_ERROR` when `pg` is not installed). */
async function makePool(connectionString: string, max: number): Promise<OwnedPool> {
  let pg: { Pool: new (config: { connectionString: string; max: number; keepAlive: boolean }) => OwnedPool & Listenable };
  try {
    pg = ((await import('pg')) as unknown as { default: typeof pg }).default;
  } catch (err) {
    throw new SessionError('STORE_ERROR', 'store error: PostgresSessionStore({ connectionString }) needs the pg package: npm install pg (or pass your own pool).', { cause: err });
  }
  // TCP keepalive finds a connection whose peer vanished without a FIN (a cut network).
  const pool = new pg.Pool({ connectionString, max, keepAlive: true });
  // An idle client's connection error is emitted on the pool; without a listener it would
  // crash the process. The pool has already discarded that client; the next call gets a
  // fresh connection (or fails, and that failure is reported on it).
  pool.on('error', ignore);
  return pool;
}

