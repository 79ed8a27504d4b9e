/**
 * What the SQL session store needs from a database driver: transactions and a clock. The
 * SQLite and PostgreSQL stores each implement it on their own client; a driver of your own
 * gives `new SqlSessionStore(driver)` a database that speaks one of the two dialects.
 */
import type { StoreBounds } from '../store-bound.js';

/** A bound parameter of a statement. */
export type SqlValue = string | number | null;

/** A result row, by column name. */
export type SqlRow = Readonly<Record<string, unknown>>;

/** One statement's result. */
export interface SqlResult {
  /** The rows the statement returned (empty for a statement without RETURNING). */
  readonly rows: readonly SqlRow[];
  /** Rows changed by an INSERT / UPDATE / DELETE without RETURNING (0 for queries). */
  readonly changes: number;
}

/**
 * A connection inside a transaction. The statements it is given are already in the driver's
 * dialect (`$1` placeholders and the dialect's clock expression on PostgreSQL).
 */
export interface SqlConn {
  /** Runs one statement with its parameters. */
  run(sql: string, params?: readonly SqlValue[]): Promise<SqlResult>;
}

/** The dialects the SQL store speaks. */
export type SqlDialect = 'sqlite' | 'postgres';

/** A database driver: the transactions of one SQL session store. */
export interface SqlDriver {
  /** The SQL the store writes: `'sqlite'` or `'postgres'`. */
  readonly dialect: SqlDialect;
  /** Where the data lives, for messages (e.g. `the SQLite file "/data/s.db"`). */
  readonly label: string;
  /**
   * Runs `fn` in a read-only transaction that sees one consistent snapshot. `call` names the
   * store call for messages (e.g. `store.load()`).
   */
  read<T>(fn: (c: SqlConn) => Promise<T>, call?: string): Promise<T>;
  /**
   * Runs `fn` in one write transaction: committed when `fn` resolves, rolled back when it
   * rejects (the rejection is passed on). `fn` may run again if the driver retries a
   * transaction that could not start (SQLite's busy database): it must only touch the database.
   * `call` names the store call for messages (e.g. `store.commit()`).
   *
   * With `relaxed` true (only the started record of a turn), the driver may resolve before
   * the transaction is durable, as long as it keeps write order: once any later write of the
   * same database resolves, this one is durable too. A driver that ignores it, committing
   * every write durably, is correct.
   */
  write<T>(fn: (c: SqlConn) => Promise<T>, call?: string, relaxed?: boolean): Promise<T>;
  /** Like `write`, serialized against every other process migrating the same database. */
  migrate<T>(fn: (c: SqlConn) => Promise<T>, call?: string): Promise<T>;
  /**
   * The sessions plugin's bounds on every store call (already merged: the smallest of every
   * server sharing the store), given at build and again whenever they shrink. A driver
   * without it ignores them. A call still waiting for a connection when its
   * `callTimeoutMs` passes never runs; a lock wait ends before `callTimeoutMs`
   * (`STORE_LOCKED`); a transaction idle longer than `leaseTtlMs` may be ended.
   */
  setBounds?(bounds: StoreBounds): void;
  /** Closes what the driver opened. */
  close(): Promise<void>;
}

/** @internal Rewrites `?` placeholders to `$1`, `$2`… (PostgreSQL). The SQL here has no `?` in literals. */
export function numberPlaceholders(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}
