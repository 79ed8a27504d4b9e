/**
 * polestar-di/sessions/postgres: the PostgreSQL session store, on `pg` (an optional peer
 * dependency: `npm install pg`) or any pool with the same `connect()` / `query()` shape.
 *
 * Many processes on many machines may share one database: leases expire on the database's
 * clock, and every write is fenced by the lease's epoch.
 *
 * @packageDocumentation
 */
import { SessionError } from './errors.js';
import { checkInt, checkName, checkObject } from './input.js';
import type { SqlConn, SqlDriver } from './sql-driver.js';
import { SqlSessionStoreCore } from './sql-store.js';
import type {
  AbortInput,
  AcquireOptions,
  BegunAttempt,
  CheckpointInfo,
  CommitInput,
  CommittedTurn,
  CreateSessionInput,
  DeleteOptions,
  EventsQuery,
  Lease,
  ListQuery,
  LoadedSession,
  NewSessionEvent,
  SessionPage,
  SessionStore,
  StoredSessionEvent,
  TurnAttempt,
} from './store.js';

/** What a query resolves to (the part of `pg`'s `QueryResult` the store reads). */
export interface PgQueryResultLike {
  /** The rows, by column name. */
  readonly rows: readonly Record<string, unknown>[];
}

/** A client checked out of a pool (the part of `pg`'s `PoolClient` the store uses). */
export interface PgPoolClientLike {
  /** Runs one statement with `$1`-style parameters. */
  query(text: string, values?: unknown[]): Promise<PgQueryResultLike>;
  /** Returns the client to its pool; with an error, the pool discards it. */
  release(err?: Error | boolean): void;
}

/**
 * A connection pool, typed structurally: a `pg.Pool` fits, and so does any pool whose
 * `connect()` hands out clients with `query(text, values)` and `release(err?)`.
 */
export interface PgPoolLike {
  /** Checks a client out; the store releases it after each transaction. */
  connect(): Promise<PgPoolClientLike>;
}

/** Options of {@link PostgresSessionStore}: a pool of yours, or a connection string. */
export type PostgresSessionStoreOptions =
  | {
      /** Your pool. The store never ends it: `store.close()` leaves it open. */
      readonly pool: PgPoolLike;
    }
  | {
      /** A PostgreSQL URL (`postgres://user@host:5432/db`); the store makes a `pg.Pool` and ends it on `close()`. */
      readonly connectionString: string;
      /** Size of that pool (default 10). */
      readonly max?: number;
    };

/**
 * A {@link SessionStore} in a PostgreSQL database, shared by any number of processes on
 * any number of machines. Leases are rows taken with a conditional `UPDATE … RETURNING` on
 * the database's clock (never the process's), and every write is one transaction fenced by
 * the lease's epoch; no session-level advisory locks are used (they pin a pooled connection
 * per session, break under transaction pooling and give no fencing token), so it works
 * behind PgBouncer in transaction mode. The tables (`polestar_*`, in the connection's
 * `search_path`) are created or migrated on first use under an advisory transaction lock;
 * a schema or rows written by a newer polestar-di are refused with `UNSUPPORTED_FORMAT`.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #core: SqlSessionStoreCore;

  /** @param options - `{ pool }` or `{ connectionString, max? }`. */
  constructor(options: PostgresSessionStoreOptions) {
    const o = checkObject<{ pool: PgPoolLike; connectionString: string; max: number }>(options, 'new PostgresSessionStore(options)', false);
    if (o.pool !== undefined) {
      if (o.connectionString !== undefined) throw new TypeError('new PostgresSessionStore(options): give either pool or connectionString, not both.');
      if (o.pool === null || typeof o.pool !== 'object' || typeof (o.pool as { connect?: unknown }).connect !== 'function') {
        throw new TypeError('options.pool must be a pool with connect() (e.g. a pg.Pool).');
      }
      const pool = o.pool;
      this.#core = new SqlSessionStoreCore(new PgDriver(() => Promise.resolve(pool), undefined, 'the PostgreSQL pool given to PostgresSessionStore'));
      return;
    }
    if (o.connectionString === undefined) throw new TypeError('new PostgresSessionStore(options): give pool (a pg.Pool) or connectionString.');
    const url = checkName(o.connectionString, 'options.connectionString');
    const max = o.max === undefined ? 10 : checkInt(o.max, 'options.max', 1, 10_000);
    let made: Promise<OwnedPool> | undefined;
    const make = (): Promise<OwnedPool> => (made ??= makePool(url, max));
    this.#core = new SqlSessionStoreCore(new PgDriver(make, () => made, `the PostgreSQL database at ${redact(url)}`));
  }

  /** See {@link SessionStore.create}. */
  create(input: CreateSessionInput): Promise<Lease> {
    return this.#core.create(input);
  }
  /** See {@link SessionStore.acquire}. */
  acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
    return this.#core.acquire(sessionId, options);
  }
  /** See {@link SessionStore.renew}. */
  renew(lease: Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    return this.#core.renew(lease, options);
  }
  /** See {@link SessionStore.release}. */
  release(lease: Lease): Promise<boolean> {
    return this.#core.release(lease);
  }
  /** See {@link SessionStore.begin}. */
  begin(lease: Lease): Promise<BegunAttempt> {
    return this.#core.begin(lease);
  }
  /** See {@link SessionStore.append}. */
  append(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[]): Promise<void> {
    return this.#core.append(lease, attempt, events);
  }
  /** See {@link SessionStore.commit}. */
  commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
    return this.#core.commit(lease, input);
  }
  /** See {@link SessionStore.abort}. */
  abort(lease: Lease, input: AbortInput): Promise<void> {
    return this.#core.abort(lease, input);
  }
  /** See {@link SessionStore.rollback}. */
  rollback(lease: Lease, turn: number): Promise<void> {
    return this.#core.rollback(lease, turn);
  }
  /** See {@link SessionStore.pin}. */
  pin(lease: Lease, turn: number, label?: string): Promise<void> {
    return this.#core.pin(lease, turn, label);
  }
  /** See {@link SessionStore.load}. */
  load(sessionId: string, options?: { readonly turn?: number }): Promise<LoadedSession> {
    return this.#core.load(sessionId, options);
  }
  /** See {@link SessionStore.checkpoints}. */
  checkpoints(sessionId: string): Promise<readonly CheckpointInfo[]> {
    return this.#core.checkpoints(sessionId);
  }
  /** See {@link SessionStore.list}. */
  list(query?: ListQuery): Promise<SessionPage> {
    return this.#core.list(query);
  }
  /** See {@link SessionStore.delete}. */
  delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
    return this.#core.delete(sessionId, options);
  }
  /** See {@link SessionStore.events}. */
  events(sessionId: string, query?: EventsQuery): AsyncIterable<StoredSessionEvent> {
    return this.#core.events(sessionId, query);
  }
  /** See {@link SessionStore.close}. */
  close(): Promise<void> {
    return this.#core.close();
  }
}

interface OwnedPool extends PgPoolLike {
  end(): Promise<void>;
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

async function makePool(connectionString: string, max: number): Promise<OwnedPool> {
  let pg: { Pool: new (config: { connectionString: string; max: number }) => OwnedPool & { on(event: 'error', fn: (err: Error) => void): unknown } };
  try {
    pg = ((await import('pg')) as unknown as { default: typeof pg }).default;
  } catch (err) {
    throw new SessionError('STORE_ERROR', 'store error: PostgresSessionStore({ connectionString }) needs the pg package: npm install pg (or pass your own pool).', { cause: err });
  }
  const pool = new pg.Pool({ connectionString, max });
  // An idle client's connection error is emitted on the pool; without a listener it would
  // crash the process. The next checkout fails instead, and that failure is reported.
  pool.on('error', () => undefined);
  return pool;
}

/** @internal The PostgreSQL driver: one pooled client per transaction. */
class PgDriver implements SqlDriver {
  readonly dialect = 'postgres';
  readonly label: string;
  readonly #pool: () => Promise<PgPoolLike>;
  readonly #owned: (() => Promise<OwnedPool> | undefined) | undefined;

  constructor(pool: () => Promise<PgPoolLike>, owned: (() => Promise<OwnedPool> | undefined) | undefined, label: string) {
    this.#pool = pool;
    this.#owned = owned;
    this.label = label;
  }

  async #tx<T>(begin: string, fn: (c: SqlConn) => Promise<T>): Promise<T> {
    const client = await (await this.#pool()).connect();
    let broken: Error | undefined;
    try {
      await client.query(begin);
      const result = await fn({
        run: async (sql, params) => {
          const r = await client.query(sql, params === undefined ? undefined : [...params]);
          return { rows: r.rows, changes: (r as { rowCount?: number | null }).rowCount ?? 0 };
        },
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (e) {
        broken = e instanceof Error ? e : new Error(String(e));
      }
      throw err;
    } finally {
      client.release(broken);
    }
  }

  read<T>(fn: (c: SqlConn) => Promise<T>): Promise<T> {
    return this.#tx('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn);
  }

  write<T>(fn: (c: SqlConn) => Promise<T>): Promise<T> {
    return this.#tx('BEGIN', fn);
  }

  migrate<T>(fn: (c: SqlConn) => Promise<T>): Promise<T> {
    return this.#tx('BEGIN', fn);
  }

  async close(): Promise<void> {
    const owned = this.#owned?.();
    // A pool that could not be made (pg missing) has nothing to end.
    if (owned !== undefined) await owned.then((pool) => pool.end(), () => undefined);
  }
}
