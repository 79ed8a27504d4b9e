/**
 * @internal The SQLite store's worker thread: it holds the store's one connection (the
 * `libsql` binding that `@libsql/client` is built on) and runs the statements the main
 * thread sends it, so that no statement, and no fsync, runs on the main thread's event loop.
 *
 * Each statement is prepared once per connection and cached by its SQL text. A transaction
 * starts with its first statement (the `begin` of that message) and ends with an `end`
 * message (COMMIT or ROLLBACK), so a transaction of n statements is n + 1 round trips.
 *
 * This file imports nothing of polestar's: it is started from its own file (or, when the
 * package runs from its TypeScript sources, from their transpiled text).
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

/** @internal A bound parameter. */
export type WorkerValue = string | number | null;

/** @internal What the main thread sends. */
export type WorkerRequest =
  | {
      readonly id: number;
      readonly op: 'run';
      /** The statement (`''` when `sid` names one sent before). */
      readonly sql: string;
      /** The statement's number on this worker: sent with its SQL the first time, alone afterwards. */
      readonly sid?: number;
      readonly params: readonly WorkerValue[];
      /** Starts the transaction before the statement: BEGIN IMMEDIATE (`write`) or BEGIN DEFERRED (`deferred`). */
      readonly begin?: 'write' | 'deferred';
      /** With `begin`: the transaction commits at `synchronous=NORMAL` (in WAL mode only). */
      readonly relaxed?: boolean;
    }
  | { readonly id: number; readonly op: 'end'; readonly commit: boolean; readonly reset?: boolean }
  | { readonly id: number; readonly op: 'pragma'; readonly name: string }
  | { readonly id: number; readonly op: 'close' };

/** @internal A failure, as the main thread sees it. */
export interface WorkerFailure {
  readonly message: string;
  readonly code?: string;
  readonly rawCode?: number;
}

/** @internal What the worker answers, one reply per request, in order. */
export interface WorkerReply {
  readonly id: number;
  /** The column names of the rows (a statement that returns rows). */
  readonly columns?: readonly string[];
  /** The rows, each its values in column order (cheaper to copy between threads than objects). */
  readonly rows?: readonly (readonly unknown[])[];
  readonly changes?: number;
  readonly value?: number;
  readonly error?: WorkerFailure;
}

/** @internal What the worker is started with. */
export interface WorkerData {
  /** Marks a worker started by the SQLite store (importing this file elsewhere serves nothing). */
  readonly polestarSqliteWorker: true;
  /** The database file. */
  readonly path: string;
  /** The file of the `libsql` package (resolved next to `@libsql/client`). */
  readonly libsql: string;
}

interface Statement {
  readonly reader: boolean;
  raw(on?: boolean): Statement;
  columns(): readonly { readonly name: string }[];
  run(params: readonly WorkerValue[]): { changes: number };
  all(params: readonly WorkerValue[]): unknown[][];
}

interface Database {
  readonly inTransaction: boolean;
  prepare(sql: string): Statement;
  exec(sql: string): void;
  close(): void;
}

/** @internal The `libsql` binding's database class. */
export type DatabaseClass = new (path: string, options: { timeout: number }) => Database;

/** @internal Loads the `libsql` binding from its file. */
export function loadLibsql(file: string): DatabaseClass {
  return createRequire(file)(file) as DatabaseClass;
}

/** A cached statement: `columns` when it returns rows (it is then in raw mode: rows as arrays). */
interface Prepared {
  readonly s: Statement;
  readonly columns: readonly string[] | undefined;
}

const DML = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** @internal The connection and its statements, one transaction at a time. */
export class Connection {
  readonly #path: string;
  readonly #Database: DatabaseClass;
  #db: Database | undefined;
  #wal = false;
  /** True while the open transaction runs at synchronous=NORMAL. */
  #normal = false;
  /** Prepared statements by SQL text, with whether each returns rows. */
  readonly #cache = new Map<string, Prepared>();

  constructor(path: string, Database: DatabaseClass) {
    this.#path = path;
    this.#Database = Database;
  }

  #open(): Database {
    if (this.#db !== undefined) return this.#db;
    // No busy handler (timeout 0): a busy database is retried by the main thread, asynchronously.
    const db = new this.#Database(this.#path, { timeout: 0 });
    try {
      // WAL: readers never block the writer; FULL: the WAL is fsync'd at every commit.
      const mode = db.prepare('PRAGMA journal_mode = WAL').all([]);
      this.#wal = String(Object.values(mode[0] ?? {})[0] ?? '').toLowerCase() === 'wal';
      db.exec('PRAGMA synchronous = FULL');
    } catch (err) {
      db.close();
      throw err;
    }
    this.#db = db;
    return db;
  }

  #statement(db: Database, sql: string): Prepared {
    let c = this.#cache.get(sql);
    if (c === undefined) {
      const s = db.prepare(sql);
      c = s.reader ? { s: s.raw(true), columns: s.columns().map((col) => col.name) } : { s, columns: undefined };
      this.#cache.set(sql, c);
    }
    return c;
  }

  run(sql: string, params: readonly WorkerValue[], begin: 'write' | 'deferred' | undefined, relaxed: boolean): WorkerReply & { id: 0 } {
    const db = this.#open();
    if (begin !== undefined) {
      if (relaxed && this.#wal) {
        db.exec('PRAGMA synchronous = NORMAL');
        this.#normal = true;
      }
      try {
        db.exec(begin === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN DEFERRED');
      } catch (err) {
        this.#restoreFull();
        throw err;
      }
    }
    const { s, columns } = this.#statement(db, sql);
    try {
      if (columns !== undefined) {
        const rows = s.all(params);
        return { id: 0, columns, rows, changes: DML.test(sql) ? rows.length : 0 };
      }
      return { id: 0, rows: [], changes: s.run(params).changes };
    } catch (err) {
      // a statement that failed may stay active until it is finalized: never reuse it
      this.#cache.delete(sql);
      throw err;
    }
  }

  /** COMMIT (or ROLLBACK), then back to synchronous=FULL. A failed COMMIT rolls back. */
  end(commit: boolean, reset: boolean): void {
    const db = this.#db;
    try {
      if (db !== undefined && db.inTransaction) {
        if (commit) {
          try {
            db.exec('COMMIT');
          } catch (err) {
            if (db.inTransaction) this.#rollback(db);
            throw err;
          }
        } else this.#rollback(db);
      }
    } finally {
      this.#restoreFull();
      if (reset) this.close();
    }
  }

  #rollback(db: Database): void {
    try {
      db.exec('ROLLBACK');
    } catch {
      // a connection that can not roll back is dropped (closing it rolls back)
      this.close();
    }
  }

  /** Sets the connection back to FULL after a relaxed transaction; one that can not be set back is dropped. */
  #restoreFull(): void {
    if (!this.#normal) return;
    this.#normal = false;
    try {
      this.#db?.exec('PRAGMA synchronous = FULL');
    } catch {
      this.close();
    }
  }

  pragma(name: string): number {
    const rows = this.#statement(this.#open(), `PRAGMA ${name}`).s.all([]);
    return Number(rows[0]?.[0]);
  }

  close(): void {
    this.#cache.clear();
    const db = this.#db;
    this.#db = undefined;
    this.#normal = false;
    try {
      db?.close();
    } catch {
      // closed already
    }
  }
}

function failure(err: unknown): WorkerFailure {
  const e = err as { message?: unknown; code?: unknown; rawCode?: unknown } | null;
  if (e === null || typeof e !== 'object') return { message: String(err) };
  return {
    message: typeof e.message === 'string' ? e.message : String(err),
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.rawCode === 'number' ? { rawCode: e.rawCode } : {}),
  };
}

/** @internal Answers one request on `conn` (never throws: a failure is the reply's `error`). */
export function answer(conn: Connection, m: WorkerRequest): WorkerReply {
  try {
    switch (m.op) {
      case 'run': {
        const r = conn.run(m.sql, m.params, m.begin, m.relaxed === true);
        return r.columns === undefined ? { id: m.id, changes: r.changes } : { id: m.id, columns: r.columns, rows: r.rows, changes: r.changes };
      }
      case 'end':
        conn.end(m.commit, m.reset === true);
        return { id: m.id };
      case 'pragma':
        return { id: m.id, value: conn.pragma(m.name) };
      case 'close':
        conn.close();
        return { id: m.id };
    }
  } catch (err) {
    return { id: m.id, error: failure(err) };
  }
}

/** @internal Serves the main thread's requests (the worker's entry point). */
export function serve(): void {
  const port = parentPort;
  const data = workerData as WorkerData | null;
  if (port === null || data?.polestarSqliteWorker !== true) return;
  const conn = new Connection(data.path, loadLibsql(data.libsql));
  const texts = new Map<number, string>();
  port.on('message', (m: WorkerRequest) => {
    if (m.op === 'run' && m.sid !== undefined) {
      if (m.sql !== '') texts.set(m.sid, m.sql);
      else m = { ...m, sql: texts.get(m.sid) ?? '' };
    }
    port.postMessage(answer(conn, m));
  });
  port.postMessage({ id: 0 } satisfies WorkerReply);
}

serve();
