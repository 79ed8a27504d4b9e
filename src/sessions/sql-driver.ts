/**
 * @internal What the SQL session store needs from a database driver: transactions and a
 * clock. The SQLite and PostgreSQL entry points each implement it on their own driver.
 */

/** @internal A bound parameter. */
export type SqlValue = string | number | null;

/** @internal A result row, by column name. */
export type SqlRow = Readonly<Record<string, unknown>>;

/** @internal One statement's result. */
export interface SqlResult {
  readonly rows: readonly SqlRow[];
  /** Rows changed by an INSERT / UPDATE / DELETE without RETURNING (0 for queries). */
  readonly changes: number;
}

/** @internal A connection inside a transaction. SQL uses `?` placeholders and the `{now}` macro. */
export interface SqlConn {
  run(sql: string, params?: readonly SqlValue[]): Promise<SqlResult>;
}

/** @internal The dialects the SQL store speaks. */
export type SqlDialect = 'sqlite' | 'postgres';

/** @internal A database driver. */
export interface SqlDriver {
  readonly dialect: SqlDialect;
  /** Where the data lives, for messages (e.g. `the SQLite file "/data/s.db"`). */
  readonly label: string;
  /** Runs `fn` in a read-only transaction that sees one consistent snapshot. */
  read<T>(fn: (c: SqlConn) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in one write transaction: committed when `fn` resolves, rolled back when it
   * rejects (the rejection is passed on). `fn` may run again if the driver retries a
   * transaction that could not start (SQLite's busy database): it must only touch the database.
   */
  write<T>(fn: (c: SqlConn) => Promise<T>): Promise<T>;
  /** Like `write`, serialized against every other process migrating the same database. */
  migrate<T>(fn: (c: SqlConn) => Promise<T>): Promise<T>;
  /** Closes what the driver opened. */
  close(): Promise<void>;
}

/** @internal Rewrites `?` placeholders to `$1`, `$2`… (PostgreSQL). The SQL here has no `?` in literals. */
export function numberPlaceholders(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}
