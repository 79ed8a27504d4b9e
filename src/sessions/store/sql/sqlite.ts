/**
 * The SQLite session store, on `@libsql/client` (an optional
 * peer dependency: `npm install @libsql/client`).
 *
 * Embedded, durable, one file. Several processes on one host may share the file: SQLite's
 * file locks serialize writers, and a write that waits longer than `busyTimeoutMs` for the
 * lock fails with `STORE_LOCKED`. Network filesystems are not supported (SQLite's locks and
 * its WAL shared memory need a local filesystem).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient, type Client, type InValue, type Transaction } from '@libsql/client';
import { SessionError } from '../../errors.js';
import { checkInt, checkName, checkObject, checkPollMs } from '../input.js';
import type { StoreBounds } from '../store-bound.js';
import { SqlSessionStore } from './base.js';
import type { SqlConn, SqlDriver } from './driver.js';
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
 * its operations one at a time.
 */
export class SqliteSessionStore extends SqlSessionStore implements SessionStore {
  /** The absolute path of the database file. */
  readonly path: string;
  readonly #driver: LibsqlDriver;

  /** @param options - `path` of the file, `busyTimeoutMs`, `pollMs`. */
  constructor(options: SqliteSessionStoreOptions) {
    const o = checkObject<SqliteSessionStoreOptions>(options, 'new SqliteSessionStore(options)', false);
    const path = checkName(o.path, 'options.path');
    if (path === ':memory:' || path.startsWith('file:')) {
      throw new TypeError(`options.path must be a filesystem path, got ${JSON.stringify(path)}; use MemorySessionStore for a store in memory.`);
    }
    const busy = o.busyTimeoutMs === undefined ? DEFAULT_SQLITE_BUSY_TIMEOUT_MS : checkInt(o.busyTimeoutMs, 'options.busyTimeoutMs', 0, 2 ** 31 - 1);
    const pollMs = checkPollMs(o.pollMs, 'options.pollMs');
    const driver = new LibsqlDriver(resolve(path), busy);
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
}

const isBusy = (err: unknown): boolean => {
  const e = err as { code?: unknown; rawCode?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (typeof e.rawCode === 'number') return (e.rawCode & 0xff) === 5 || (e.rawCode & 0xff) === 6;
  return e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED';
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One turn of the event loop. libsql's file driver is synchronous: its promises resolve
 * without ever reaching the timer phase, so a loop of back-to-back transactions would
 * starve every timer of the process (the lease renewal first).
 */
const yieldToTimers = (): Promise<void> => new Promise((r) => setImmediate(r));

/** @internal The libsql driver: one connection, operations one at a time, busy waits retried asynchronously. */
class LibsqlDriver implements SqlDriver {
  readonly dialect = 'sqlite';
  readonly label: string;
  /** The absolute path of the file. */
  readonly path: string;
  readonly #busyTimeoutMs: number;
  #client: Client | undefined;
  /** True when the open connection's database is in WAL mode. */
  #wal = false;
  #queue: Promise<unknown> = Promise.resolve();
  /** Calls queued or running on the connection. */
  #pending = 0;
  /** The bound on one store call (`SessionsPlugin({ storeTimeoutMs })`), once a plugin gave it. */
  #callTimeoutMs: number | undefined;
  beforeCommit: (() => Promise<void>) | undefined;

  constructor(path: string, busyTimeoutMs: number) {
    this.path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.label = `the SQLite file ${JSON.stringify(path)}`;
  }

  setBounds(bounds: StoreBounds): void {
    this.#callTimeoutMs = bounds.callTimeoutMs;
  }

  /**
   * Runs `fn` after every operation queued before it. With a call bound, a call still
   * queued when it passes never runs: it rejects with `STORE_ERROR` at the bound. `fn` is
   * given the call's deadline (`Infinity` without a bound). `close()` is never bounded.
   */
  #exclusive<T>(call: string, fn: (deadline: number) => Promise<T>, bounded = true): Promise<T> {
    const bound = bounded ? this.#callTimeoutMs : undefined;
    const deadline = bound === undefined ? Infinity : Date.now() + bound;
    const waits = this.#pending > 0;
    this.#pending += 1;
    const done = (): void => {
      this.#pending -= 1;
    };
    if (bound === undefined || !waits) {
      // Nothing ahead of it (or no bound): it starts at once, with no timer to arm.
      const run = this.#queue.then(
        () => fn(deadline),
        () => fn(deadline),
      );
      run.then(done, done);
      this.#queue = run.catch(() => undefined);
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
      this.#queue = run.catch(() => undefined);
    });
  }

  /**
   * Runs `attempt` until it does not fail with SQLITE_BUSY, or `STORE_LOCKED` after the busy
   * timeout or the call's deadline, whichever comes first. A statement that failed with
   * SQLITE_BUSY stays active on its connection (SQLite keeps it resumable, and libsql
   * finalizes it only when it is garbage-collected), and a connection with an active
   * statement can not COMMIT ("SQL statements in progress"): so after a busy failure the
   * connection is dropped and the next attempt opens a fresh one.
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
        this.#drop();
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

  /** The connection, opened on first use (and again after a busy failure dropped it). */
  async #open(): Promise<Client> {
    if (this.#client !== undefined) return this.#client;
    const client = createClient({ url: pathToFileURL(this.path).href, concurrency: 1 });
    this.#client = client;
    // WAL: readers never block the writer; FULL: the WAL is fsync'd at every commit.
    const mode = await client.execute('PRAGMA journal_mode = WAL');
    this.#wal = String(mode.rows[0]?.[0] ?? '').toLowerCase() === 'wal';
    await client.execute('PRAGMA synchronous = FULL');
    return client;
  }

  /**
   * Sets the connection back to `synchronous=FULL` after a relaxed write; a connection that
   * can not be set back is dropped (the next call opens a fresh one, at FULL).
   */
  async #restoreFull(client: Client): Promise<void> {
    try {
      await client.execute('PRAGMA synchronous = FULL');
    } catch {
      if (this.#client === client) this.#drop();
    }
  }

  #drop(): void {
    this.#client?.close();
    this.#client = undefined;
  }

  /**
   * One transaction on the connection. `relaxed` (a write whose durability may wait, in WAL
   * mode only): it runs at `synchronous=NORMAL`, so its commit is not fsync'd; the WAL keeps
   * write order, and the next commit at FULL fsyncs it with its own. A PRAGMA can not change
   * inside a transaction: it is set just before BEGIN and set back after COMMIT or ROLLBACK,
   * while this call holds the store's one connection (no other transaction runs in between).
   * In rollback-journal mode every write stays at FULL.
   */
  #tx<T>(mode: 'write' | 'deferred', fn: (c: SqlConn) => Promise<T>, call: string, relaxed = false): Promise<T> {
    return this.#exclusive(call, async (deadline) => {
      try {
        return await this.#retry(call, deadline, async () => {
          const client = await this.#open();
          const normal = relaxed && this.#wal;
          let tx: Transaction | undefined;
          try {
            if (normal) await client.execute('PRAGMA synchronous = NORMAL');
            tx = await client.transaction(mode);
            const t = tx;
            const result = await fn({
              run: async (sql, params) => {
                const r = await t.execute({ sql, args: (params ?? []) as InValue[] });
                return { rows: r.rows as unknown as Record<string, unknown>[], changes: r.rowsAffected };
              },
            });
            if (mode === 'write' && this.beforeCommit !== undefined) await this.beforeCommit();
            await tx.commit();
            return result;
          } finally {
            tx?.close();
            if (normal) await this.#restoreFull(client);
          }
        });
      } finally {
        // Let timers run between transactions (see yieldToTimers).
        await yieldToTimers();
      }
    });
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
      const r = await (await this.#open()).execute(`PRAGMA ${name}`);
      return Number(r.rows[0]?.[0]);
    });
  }

  close(): Promise<void> {
    return this.#exclusive(
      'store.close()',
      async () => {
        this.#client?.close();
        this.#client = undefined;
      },
      false,
    );
  }
}
