/**
 * The SQLite session store, on `@libsql/client` (an optional
 * peer dependency: `npm install @libsql/client`), whose connection runs in a worker thread.
 *
 * Embedded, durable, one file. Several processes on one host may share the file: SQLite's
 * file locks serialize writers, and a write that waits longer than `busyTimeoutMs` for the
 * lock fails with `STORE_LOCKED`. Network filesystems are not supported (SQLite's locks and
 * its WAL shared memory need a local filesystem).
 */
import { resolve } from 'node:path';
import { SessionError } from '../../errors.js';
import { checkInt, checkName, checkObject, checkPollMs } from '../input.js';
import type { StoreBounds } from '../store-bound.js';
import { SqlSessionStore } from './base.js';
import type { SqlConn, SqlDriver, SqlRow } from './driver.js';
import { LocalLink, startWorker, type Link, type WorkerLink } from './sqlite-thread.js';
import type { SessionStore } from '../contract.js';

/** Options of {@link SqliteSessionStore}. */
export interface SqliteSessionStoreOptions {
  /** The database file (created when missing; its directory must exist). Relative paths resolve against the working directory. */
  readonly path: string;
  /**
   * How long a transaction waits for another connection's write lock before it fails with
   * `STORE_LOCKED`, in milliseconds (default 5,000). The wait is asynchronous: the event
   * loop keeps running.
   */
  readonly busyTimeoutMs?: number;
  /**
   * How often the sessions plugin polls for releases, handoff requests and cancels of other
   * processes on the file, in milliseconds (a finite number >= 1, default 250): SQLite can
   * not notify another process, so `watch()` is in `'poll'` mode (wake-ups of this store
   * object itself are delivered in-process).
   */
  readonly pollMs?: number;
}

/** Default of {@link SqliteSessionStoreOptions.busyTimeoutMs}. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * A {@link SessionStore} in one SQLite file (WAL journal, `synchronous=FULL`: every commit
 * is fsync'd before it resolves, so a resolved write survives a crash of the process or of
 * the machine). The tables are created, or migrated, on first use; a file written by a newer
 * polestar-di is refused with `UNSUPPORTED_FORMAT`.
 *
 * Several processes on one host may open the same file: writers are serialized by SQLite's
 * file lock, waited for asynchronously up to `busyTimeoutMs` (then `STORE_LOCKED`); leases
 * expire on the host's clock, which every process sharing a local file shares. Network
 * filesystems (NFS, SMB) are not supported. One store object uses one connection and runs
 * its operations one at a time. The connection lives in a worker thread of its own, so no
 * statement (and no fsync) runs on the event loop of your process: other agents, timers and
 * requests keep running while a session commits. The thread is started with the store; the
 * calls made while it boots (tens of milliseconds) run on a connection in the main thread,
 * as do those made while a thread that ended is replaced. The thread does not keep the
 * process alive while the store is idle, and `close()` ends it. A thread that dies fails the
 * call it was serving with `STORE_ERROR` (a commit's outcome is then found out as for any
 * lost reply) and never the process.
 */
export class SqliteSessionStore extends SqlSessionStore implements SessionStore {
  /** The absolute path of the database file. */
  readonly path: string;
  readonly #driver: WorkerDriver;

  /** @param options - `path` of the file, `busyTimeoutMs`, `pollMs`. */
  constructor(options: SqliteSessionStoreOptions) {
    const o = checkObject<SqliteSessionStoreOptions>(options, 'new SqliteSessionStore(options)', false);
    const path = checkName(o.path, 'options.path');
    if (path === ':memory:' || path.startsWith('file:')) {
      throw new TypeError(`options.path must be a filesystem path, got ${JSON.stringify(path)}; use MemorySessionStore for a store in memory.`);
    }
    const busy = o.busyTimeoutMs === undefined ? DEFAULT_SQLITE_BUSY_TIMEOUT_MS : checkInt(o.busyTimeoutMs, 'options.busyTimeoutMs', 0, 2 ** 31 - 1);
    const pollMs = checkPollMs(o.pollMs, 'options.pollMs');
    const driver = new WorkerDriver(resolve(path), busy);
    super(driver, { pollMs });
    this.path = driver.path;
    this.#driver = driver;
  }

  /**
   * @internal Test hook: called inside every write transaction before it commits (the
   * process-level tests hang here to be killed or to hold the lock).
   */
  set _beforeCommit(fn: (() => Promise<void>) | undefined) {
    this.#driver.beforeCommit = fn;
  }

  /**
   * @internal Test hook: the `synchronous` setting of the store's connection between
   * transactions (`2` is FULL), read in the store's turn like any other call.
   */
  _synchronous(): Promise<number> {
    return this.#driver.pragma('synchronous');
  }

  /**
   * @internal Test hook: ends the store's worker thread as a crash would (a transaction in
   * flight on it is rolled back by SQLite); the next call starts a fresh one.
   */
  _terminateWorker(): Promise<void> {
    return this.#driver.terminateWorker();
  }

  /** @internal Test hook: resolves once the store's worker thread serves its next call (until then, calls run on the main thread). */
  _workerReady(): Promise<void> {
    return this.#driver.workerReady();
  }
}

const isBusy = (err: unknown): boolean => {
  const e = err as { code?: unknown; rawCode?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (typeof e.rawCode === 'number') return (e.rawCode & 0xff) === 5 || (e.rawCode & 0xff) === 6;
  return e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED';
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const ignore = (): void => undefined;

/** Rows by column name, from the worker's rows of values (made here, in the caller's realm). */
function rowsOf(columns: readonly string[], values: readonly (readonly unknown[])[]): SqlRow[] {
  const rows: SqlRow[] = [];
  for (const v of values) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]] = v[i];
    rows.push(row);
  }
  return rows;
}

/**
 * @internal The driver of the SQLite store: one connection in a worker thread, operations one
 * at a time, busy waits retried asynchronously. A transaction is sent statement by statement
 * (its BEGIN with the first one) and ended by one COMMIT or ROLLBACK message.
 */
class WorkerDriver implements SqlDriver {
  readonly dialect = 'sqlite';
  readonly label: string;
  /** The absolute path of the file. */
  readonly path: string;
  readonly #busyTimeoutMs: number;
  /** The worker thread, once it is ready (and again after one ended). */
  #worker: WorkerLink | undefined;
  /** The worker thread being started. */
  #starting: Promise<WorkerLink> | undefined;
  /** When the last start of a worker failed (the next is tried a second later). */
  #failedAt = -Infinity;
  /** The connection on the main thread that serves calls while the worker boots. */
  #local: LocalLink | undefined;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();
  /** Calls queued or running on the connection: while there is one, the worker keeps the process alive. */
  #pending = 0;
  /** The bound on one store call (`SessionsPlugin({ storeTimeoutMs })`), once a plugin gave it. */
  #callTimeoutMs: number | undefined;
  beforeCommit: (() => Promise<void>) | undefined;

  constructor(path: string, busyTimeoutMs: number) {
    this.path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.label = `the SQLite file ${JSON.stringify(path)}`;
    // Started at once (unref'd), so the first call does not wait for the thread to boot.
    this.#start().catch(ignore);
  }

  #start(): Promise<WorkerLink> {
    const starting = startWorker(this.path, this.label).then(
      (link) => {
        if (this.#starting === starting) this.#starting = undefined;
        if (this.#closed) {
          void link.terminate();
          return link;
        }
        this.#worker = link;
        if (this.#pending > 0) link.ref();
        return link;
      },
      (err: unknown) => {
        if (this.#starting === starting) this.#starting = undefined;
        this.#failedAt = Date.now();
        throw err;
      },
    );
    this.#starting = starting;
    return starting;
  }

  setBounds(bounds: StoreBounds): void {
    this.#callTimeoutMs = bounds.callTimeoutMs;
  }

  /**
   * Runs `fn` after every operation queued before it. With a call bound, a call still
   * queued when it passes never runs: it rejects with `STORE_ERROR` at the bound. `fn` is
   * given the call's deadline (`Infinity` without a bound). `close()` is never bounded.
   * A call that started is never abandoned here: its answer is awaited.
   */
  #exclusive<T>(call: string, fn: (deadline: number) => Promise<T>, bounded = true): Promise<T> {
    const bound = bounded ? this.#callTimeoutMs : undefined;
    const deadline = bound === undefined ? Infinity : Date.now() + bound;
    const waits = this.#pending > 0;
    if (this.#pending++ === 0) this.#worker?.ref();
    const done = (): void => {
      if (--this.#pending === 0) this.#worker?.unref();
    };
    if (bound === undefined || !waits) {
      // Nothing ahead of it (or no bound): it starts at once, with no timer to arm.
      const run = this.#queue.then(
        () => fn(deadline),
        () => fn(deadline),
      );
      run.then(done, done);
      this.#queue = run.catch(ignore);
      return run;
    }
    return new Promise<T>((resolve, reject) => {
      let expired = false;
      const timer = setTimeout(() => {
        expired = true;
        reject(
          new SessionError(
            'STORE_ERROR',
            `store error: ${call} did not start within storeTimeoutMs (${bound} ms): it waited all that time for the one connection of ${this.label}, busy with earlier calls of this store object. It never ran (nothing was written); retry, or raise storeTimeoutMs.`,
          ),
        );
      }, bound);
      const start = async (): Promise<void> => {
        if (expired) return;
        clearTimeout(timer);
        await fn(deadline).then(resolve, reject);
      };
      const run = this.#queue.then(start, start);
      run.then(done, done);
      this.#queue = run.catch(ignore);
    });
  }

  /**
   * Runs `attempt` until it does not fail with SQLITE_BUSY, or `STORE_LOCKED` after the busy
   * timeout or the call's deadline, whichever comes first. (After a busy failure the worker
   * drops its connection and opens a fresh one: a statement that failed with SQLITE_BUSY
   * stays active on its connection until it is finalized, and blocks a later COMMIT.)
   */
  async #retry<T>(call: string, callDeadline: number, attempt: () => Promise<T>): Promise<T> {
    const busyDeadline = Date.now() + this.#busyTimeoutMs;
    const deadline = Math.min(busyDeadline, callDeadline);
    let delay = 2;
    for (;;) {
      try {
        return await attempt();
      } catch (err) {
        if (!isBusy(err)) throw err;
        const left = deadline - Date.now();
        if (left <= 0) {
          const bound =
            callDeadline < busyDeadline
              ? `storeTimeoutMs (${this.#callTimeoutMs ?? 0} ms, the bound on one store call)`
              : `busyTimeoutMs (${this.#busyTimeoutMs} ms)`;
          throw new SessionError(
            'STORE_LOCKED',
            `store locked: ${call} waited more than ${bound} for the write lock of ${this.label}, held by another connection (another process, or another store object on the same file). Nothing was written; retry, raise ${callDeadline < busyDeadline ? 'storeTimeoutMs' : 'busyTimeoutMs'}, or find the long transaction.`,
            { cause: err },
          );
        }
        await sleep(Math.max(1, Math.min(delay * (0.5 + Math.random()), left)));
        delay = Math.min(delay * 2, 50);
      }
    }
  }

  /**
   * Where the next transaction runs (called inside the queue only, between transactions):
   * the worker thread once it is ready; while it boots (at first, and after one ended), a
   * connection on the main thread, closed as soon as the worker serves.
   */
  #thread(): Link {
    const worker = this.#worker;
    if (worker !== undefined && !worker.gone) {
      if (this.#local !== undefined) {
        void this.#local.terminate();
        this.#local = undefined;
      }
      return worker;
    }
    if (this.#closed) throw new Error(`${this.label} is closed.`);
    this.#worker = undefined;
    if (this.#starting === undefined && Date.now() - this.#failedAt >= 1000) this.#start().catch(ignore);
    return (this.#local ??= new LocalLink(this.path, this.label));
  }

  /**
   * One transaction in the worker. `relaxed` (a write whose durability may wait, in WAL mode
   * only): the worker runs it at `synchronous=NORMAL`, so its commit is not fsync'd; the WAL
   * keeps write order, and the next commit at FULL fsyncs it with its own. The worker sets
   * the PRAGMA just before BEGIN and back after COMMIT or ROLLBACK, while this call holds the
   * store's one connection. A read's COMMIT is not waited for in the worker: it runs requests
   * in order, and a read has nothing to make durable.
   */
  #tx<T>(mode: 'write' | 'deferred', fn: (c: SqlConn) => Promise<T>, call: string, relaxed = false): Promise<T> {
    return this.#exclusive(call, (deadline) =>
      this.#retry(call, deadline, async () => {
        const link = this.#thread();
        let begun = false;
        const conn: SqlConn = {
          run: async (sql, params) => {
            const first = !begun;
            begun = true;
            const r = await link.send(first ? { op: 'run', sql, params: params ?? [], begin: mode, relaxed } : { op: 'run', sql, params: params ?? [] });
            return { rows: r.rows === undefined ? [] : rowsOf(r.columns ?? [], r.rows), changes: r.changes ?? 0 };
          },
        };
        let result: T;
        try {
          result = await fn(conn);
          if (mode === 'write' && this.beforeCommit !== undefined) await this.beforeCommit();
        } catch (err) {
          if (begun) await link.send({ op: 'end', commit: false, reset: isBusy(err) }).catch(ignore);
          throw err;
        }
        if (!begun) return result;
        if (mode === 'deferred') {
          const ended = link.send({ op: 'end', commit: true }).catch(ignore);
          if (link.local) await ended;
          return result;
        }
        try {
          await link.send({ op: 'end', commit: true });
        } catch (err) {
          // the worker rolled back the failed COMMIT; a busy one drops the connection too
          if (isBusy(err)) await link.send({ op: 'end', commit: false, reset: true }).catch(ignore);
          throw err;
        }
        return result;
      }),
    );
  }

  read<T>(fn: (c: SqlConn) => Promise<T>, call = 'a read'): Promise<T> {
    return this.#tx('deferred', fn, call);
  }

  write<T>(fn: (c: SqlConn) => Promise<T>, call = 'a write', relaxed = false): Promise<T> {
    return this.#tx('write', fn, call, relaxed);
  }

  migrate<T>(fn: (c: SqlConn) => Promise<T>, call = 'the migration of the session tables'): Promise<T> {
    return this.#tx('write', fn, call);
  }

  /** @internal The value of `PRAGMA <name>` on the connection, queued like a transaction. */
  pragma(name: 'synchronous'): Promise<number> {
    return this.#exclusive(`PRAGMA ${name}`, async () => {
      const r = await this.#thread().send({ op: 'pragma', name });
      return r.value ?? NaN;
    });
  }

  /** @internal Resolves once the worker thread is ready (it serves the next transaction). */
  async workerReady(): Promise<void> {
    if (this.#worker !== undefined && !this.#worker.gone) return;
    // The booting worker is unref'd: keep the process alive while the caller waits for it.
    const keep = setInterval(ignore, 1000);
    try {
      await (this.#starting ?? this.#start());
    } finally {
      clearInterval(keep);
    }
  }

  /** @internal Ends the worker thread at once, as a crash would (not queued). */
  async terminateWorker(): Promise<void> {
    const keep = setInterval(ignore, 1000);
    try {
      await this.#worker?.terminate();
    } finally {
      clearInterval(keep);
    }
  }

  close(): Promise<void> {
    return this.#exclusive(
      'store.close()',
      async () => {
        this.#closed = true;
        await this.#local?.terminate();
        this.#local = undefined;
        // A worker still booting, or one whose exit is awaited, is unref'd: keep the process
        // alive until the close is over (a program that awaits close() must not exit midway).
        const keep = setInterval(ignore, 1000);
        try {
          const link = this.#worker ?? (await this.#starting?.catch(ignore));
          this.#worker = undefined;
          if (link === undefined) return;
          await link.send({ op: 'close' }).catch(ignore);
          await link.terminate();
        } finally {
          clearInterval(keep);
        }
      },
      false,
    );
  }
}
