/**
 * The PostgreSQL driver of the SQL session store: one pooled client per transaction, each
 * bounded by the plugin's `storeTimeoutMs`, with the server-side timeouts that keep a lock
 * wait or a frozen transaction inside that bound. The pool is `pg`'s, or any pool with the
 * same `connect()` / `query()` shape.
 */
import { createHash } from 'node:crypto';
import { branded } from '../../../util/brand.js';
import { SessionError } from '../../errors.js';
import type { StoreBounds } from '../store-bound.js';
import type { SqlConn, SqlDriver } from './driver.js';

/** What a query resolves to (the part of `pg`'s `QueryResult` the store reads). */
export interface PgQueryResultLike {
  /** The rows, by column name. */
  readonly rows: readonly Record<string, unknown>[];
}

/**
 * A named statement as `pg` takes it: `pg` prepares `text` under `name` on the connection
 * the first time it runs there, and from then on sends only the name and the values.
 */
export interface PgQueryConfig {
  /** The statement's name on its connection. */
  readonly name: string;
  /** The SQL, with `$1`-style parameters. */
  readonly text: string;
  /** The parameters. */
  readonly values: unknown[];
}

/** A client checked out of a pool (the part of `pg`'s `PoolClient` the store uses). */
export interface PgPoolClientLike {
  /**
   * Runs one statement with `$1`-style parameters: `(text, values)`, or, while the store's
   * `preparedStatements` is on, a {@link PgQueryConfig} `{ name, text, values }` (as `pg` does).
   */
  query(text: string | PgQueryConfig, values?: unknown[]): Promise<PgQueryResultLike>;
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

/** @internal A pool the store made itself (from a connection string): it ends it on close. */
export interface OwnedPool extends PgPoolLike {
  end(): Promise<void>;
}

/** @internal The part of an event emitter the store uses on pools and clients, when they have it. */
export interface Listenable {
  on(event: 'error', fn: (err: Error) => void): unknown;
  removeListener(event: 'error', fn: (err: Error) => void): unknown;
}

/** @internal Whether `o` has `on` / `removeListener` (a `pg` pool or client does). */
export function listenable(o: unknown): o is Listenable {
  return (
    o !== null &&
    typeof o === 'object' &&
    typeof (o as Partial<Listenable>).on === 'function' &&
    typeof (o as Partial<Listenable>).removeListener === 'function'
  );
}

/** @internal Listens to a connection error of an idle pooled client: the pool discards the client itself. */
export function ignore(): void {
  // intentionally empty
}

/**
 * Error listeners the store put on users' pools, counted per pool: the listener keeps a
 * user's pool without one of its own from crashing the process when an idle client's
 * connection fails (a server restart), and is removed when the last store on it closes.
 */
const hookedPools = new WeakMap<object, number>();

function hookPool(pool: unknown): void {
  if (!listenable(pool)) return;
  const n = hookedPools.get(pool) ?? 0;
  if (n === 0) pool.on('error', ignore);
  hookedPools.set(pool, n + 1);
}

function unhookPool(pool: unknown): void {
  if (!listenable(pool)) return;
  const n = hookedPools.get(pool) ?? 0;
  if (n <= 1) {
    hookedPools.delete(pool);
    if (n === 1) pool.removeListener('error', ignore);
  } else hookedPools.set(pool, n - 1);
}

/** The bounds used until the sessions plugin gives its own (its defaults). */
const DEFAULT_BOUNDS: StoreBounds = Object.freeze({ callTimeoutMs: 10_000, leaseTtlMs: 30_000 });

/**
 * The share of a bound the database's own timeout gets. `lock_timeout` is 80% of
 * `callTimeoutMs`, so a lock wait ends on the server (`STORE_LOCKED`, and time left to read
 * who holds the row) before the call's own bound destroys the connection; and
 * `idle_in_transaction_session_timeout` is 80% of `leaseTtlMs`, so the database ends the
 * transaction of a frozen holder, and frees its row locks, before its lease runs out and
 * another process may take the session over. Each is at least 1 ms (0 would disable it).
 */
const SERVER_SHARE = 0.8;
/** The largest value PostgreSQL accepts for a millisecond setting. */
const MAX_PG_MS = 2_147_483_647;

/** @internal What the driver sets in the first statement of every transaction. */
export function serverTimeouts(bounds: StoreBounds): { lockTimeoutMs: number; idleInTransactionMs: number } {
  const share = (ms: number): number => Math.min(MAX_PG_MS, Math.max(1, Math.floor(ms * SERVER_SHARE)));
  return { lockTimeoutMs: share(bounds.callTimeoutMs), idleInTransactionMs: share(bounds.leaseTtlMs) };
}

/**
 * The first statement of a transaction: `BEGIN` and the transaction-local timeouts as one
 * simple query, so the timeouts cost no round trip of their own. `set_config(…, true)` is
 * local to the transaction: it leaves a user's pooled connection as it found it and works
 * through PgBouncer in transaction mode.
 */
function firstStatement(begin: string, bounds: StoreBounds, relaxed: boolean): string {
  const t = serverTimeouts(bounds);
  return `${begin}; SELECT set_config('lock_timeout', '${t.lockTimeoutMs}ms', true), set_config('idle_in_transaction_session_timeout', '${t.idleInTransactionMs}ms', true)${relaxed ? RELAXED_COMMIT : ''}`;
}

/**
 * What a relaxed write adds to its first statement: its COMMIT returns without waiting for
 * the WAL flush. PostgreSQL flushes its WAL in order, so the next durable commit makes it
 * durable too; a crash of the server or the machine before then may lose it.
 */
const RELAXED_COMMIT = ", set_config('synchronous_commit', 'off', true)";

/** A SQLSTATE of a server error, when `err` is one. */
function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * True when `err` says the connection itself failed: a FATAL server error (a shutdown,
 * `idle_in_transaction_session_timeout`, a connection exception), a socket error, or `pg`
 * saying the connection ended or is not queryable. Such a client is discarded, never
 * returned to its pool.
 */
function connectionLevel(err: unknown): boolean {
  const state = sqlState(err);
  if (state !== undefined) {
    const severity = (err as { severity?: unknown }).severity;
    if (severity === 'FATAL' || severity === 'PANIC') return true;
    const cls = state.slice(0, 2);
    return cls === '08' || cls === '57' || state === '25P03';
  }
  if (isApplicationError(err)) return false;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true; // ECONNRESET, EPIPE…
  const message = err instanceof Error ? err.message : '';
  return /connection terminated|not queryable|connection ended|timeout expired/i.test(message);
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * @internal A failure of the PostgreSQL driver that is not a statement's own error: the
 * call's bound passed, or the connection failed. `outcome` says whether the transaction can
 * have committed: `'not-applied'` when COMMIT was never sent (the server rolls the
 * transaction back), `'unknown'` when COMMIT was sent and no answer came.
 */
export class PgDriverError extends Error {
  /** @internal */
  static readonly is = branded(this, 'PgDriverError');
  override readonly name = 'PgDriverError';
  /** What happened. */
  readonly reason: 'timeout' | 'connection';
  /** Whether the transaction can have committed. */
  readonly outcome: 'not-applied' | 'unknown';

  constructor(reason: 'timeout' | 'connection', outcome: 'not-applied' | 'unknown', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.reason = reason;
    this.outcome = outcome;
  }
}

/** The state of one transaction attempt. */
interface Tx {
  /** Set when the call's bound passed: the call was rejected with it, and nothing may run any more. */
  dead: PgDriverError | undefined;
  client: PgPoolClientLike | undefined;
  released: boolean;
  /** A connection error emitted by the client while it was checked out. */
  broken: Error | undefined;
  phase: 'connect' | 'begin' | 'body' | 'commit';
  /** The last statement sent (for naming the session of a lock wait). */
  last: { sql: string; params: readonly unknown[] | undefined } | undefined;
  readonly onError: (err: Error) => void;
}

/**
 * The name of the prepared statement of `sql`: a hash of its text, so the same text has the
 * same name on every connection and in every process (made once per text).
 */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `polestar_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * True for the errors of a prepared statement the server does not have as `pg` believes it
 * does (`26000`: it does not exist; `42P05`: it already exists): the connection behind the
 * client changed under it (PgBouncer before 1.21 in transaction mode, or with
 * `max_prepared_statements` at 0), or something ran `DEALLOCATE` / `DISCARD ALL` on it.
 */
function preparedStatementLost(err: unknown): boolean {
  const state = sqlState(err);
  return state === '26000' || state === '42P05';
}

/** Thrown inside a transaction whose prepared statement was lost: it is run again unnamed. */
class PreparedLost {
  constructor(readonly cause: unknown) {}
}

/** @internal The PostgreSQL driver: one pooled client per transaction, each bounded. */
export class PgDriver implements SqlDriver {
  readonly dialect = 'postgres';
  readonly label: string;
  readonly #pool: () => Promise<PgPoolLike>;
  readonly #owned: (() => Promise<OwnedPool> | undefined) | undefined;
  readonly #userPool: PgPoolLike | undefined;
  #bounds: StoreBounds = DEFAULT_BOUNDS;
  #closed = false;
  /** Whether statements with parameters run as named prepared statements (off for good once one was lost). */
  #prepared: boolean;

  /**
   * @param source - a user's pool (`{ pool }`), or the maker of the store's own pool.
   * @param label - where the data lives, for messages.
   * @param prepared - run the statements with parameters as named prepared statements.
   */
  constructor(
    source: { readonly pool: PgPoolLike } | { readonly make: () => Promise<OwnedPool>; readonly made: () => Promise<OwnedPool> | undefined },
    label: string,
    prepared = true,
  ) {
    this.#prepared = prepared;
    if ('pool' in source) {
      const pool = source.pool;
      this.#pool = () => Promise.resolve(pool);
      this.#owned = undefined;
      this.#userPool = pool;
      hookPool(pool);
    } else {
      this.#pool = source.make;
      this.#owned = source.made;
      this.#userPool = undefined;
    }
    this.label = label;
  }

  /** Takes the plugin's bounds (already the smallest of every server sharing the store). */
  setBounds(bounds: StoreBounds): void {
    const ok = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;
    if (bounds === null || typeof bounds !== 'object' || !ok(bounds.callTimeoutMs) || !ok(bounds.leaseTtlMs)) return;
    this.#bounds = Object.freeze({ callTimeoutMs: bounds.callTimeoutMs, leaseTtlMs: bounds.leaseTtlMs });
  }

  /** The bounds in use (for tests and messages). */
  get bounds(): StoreBounds {
    return this.#bounds;
  }

  /** Whether statements run as named prepared statements (false once the server lost one: see `preparedStatements`). */
  get preparedStatements(): boolean {
    return this.#prepared;
  }

  read<T>(fn: (c: SqlConn) => Promise<T>, call?: string): Promise<T> {
    return this.#tx('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn, call, false);
  }

  write<T>(fn: (c: SqlConn) => Promise<T>, call?: string, relaxed = false): Promise<T> {
    return this.#tx('BEGIN', fn, call, relaxed);
  }

  migrate<T>(fn: (c: SqlConn) => Promise<T>, call?: string): Promise<T> {
    return this.#tx('BEGIN', fn, call, false);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#userPool !== undefined) unhookPool(this.#userPool);
    const owned = this.#owned?.();
    // A pool that could not be made (pg missing) has nothing to end.
    if (owned !== undefined) await owned.then((pool) => pool.end(), () => undefined);
  }

  /**
   * One transaction, bounded by `callTimeoutMs` from the moment it asks for a connection.
   * When the bound passes, the call rejects at once and its client is released with an error
   * (the pool ends it: `pg` destroys the socket of a client with a query in flight), so no
   * work of it goes on and it is never handed out again; a client that arrives after the
   * bound is returned unused.
   */
  async #tx<T>(begin: string, fn: (c: SqlConn) => Promise<T>, call: string | undefined, relaxed: boolean): Promise<T> {
    const bounds = this.#bounds;
    const first = firstStatement(begin, bounds, relaxed);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let tx: Tx = this.#newTx();
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = timeoutError(tx, bounds);
        tx.dead = err;
        discard(tx, err);
        reject(err);
      }, bounds.callTimeoutMs);
    });
    const attempt = async (): Promise<T> => {
      try {
        return await this.#attempt(tx, first, fn, bounds, call);
      } catch (err) {
        // A pooled connection found dead at BEGIN (the server restarted, the network was
        // cut while it was idle): nothing of the transaction was sent, so it runs once more
        // on a fresh connection, within the same bound.
        if (tx.dead === undefined && tx.phase === 'begin' && err instanceof PgDriverError && err.reason === 'connection') {
          tx = this.#newTx();
          return this.#attempt(tx, first, fn, bounds, call);
        }
        // A prepared statement the server did not have: the transaction failed before its
        // COMMIT (nothing of it applied), and its client was discarded. The store stops
        // naming statements and runs the transaction once more, unnamed, within the same bound.
        if (err instanceof PreparedLost) {
          if (tx.dead !== undefined) throw tx.dead;
          this.#prepared = false;
          tx = this.#newTx();
          return this.#attempt(tx, first, fn, bounds, call);
        }
        throw err;
      }
    };
    try {
      return await Promise.race([attempt(), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  #newTx(): Tx {
    const tx: Tx = {
      dead: undefined,
      client: undefined,
      released: false,
      broken: undefined,
      phase: 'connect',
      last: undefined,
      onError: (err: Error) => {
        tx.broken ??= asError(err);
      },
    };
    return tx;
  }

  async #attempt<T>(tx: Tx, first: string, fn: (c: SqlConn) => Promise<T>, bounds: StoreBounds, call: string | undefined): Promise<T> {
    const pool = await this.#pool();
    const client = await pool.connect();
    if (tx.dead !== undefined) {
      // Checked out after the bound passed: nothing ran on it, so it goes back healthy.
      try {
        client.release();
      } catch {
        // A structural pool's release threw: nothing more can be done with that client.
      }
      throw tx.dead;
    }
    tx.client = client;
    // A checked-out client's connection error is emitted on the client (the pool listens
    // only to idle ones); without a listener it would crash the process.
    if (listenable(client)) client.on('error', tx.onError);
    tx.phase = 'begin';
    try {
      await client.query(first);
    } catch (err) {
      if (tx.dead !== undefined) throw tx.dead;
      const e = tx.broken ?? asError(err);
      // Nothing of the transaction ran: whatever failed, this client is not trusted again.
      discard(tx, e);
      throw connectionLevel(err) || tx.broken !== undefined ? connectionError(e, 'not-applied') : err;
    }
    tx.phase = 'body';
    const prepared = this.#prepared;
    let lost: unknown;
    let result: T;
    try {
      result = await fn({
        run: async (sql, params) => {
          if (tx.dead !== undefined) throw tx.dead;
          tx.last = { sql, params };
          const values = params === undefined ? undefined : [...params];
          let r: PgQueryResultLike;
          try {
            r = await (prepared && values !== undefined ? client.query({ name: statementName(sql), text: sql, values }) : client.query(sql, values));
          } catch (err) {
            if (prepared && preparedStatementLost(err)) lost ??= err;
            throw err;
          }
          return { rows: r.rows, changes: (r as { rowCount?: number | null }).rowCount ?? 0 };
        },
      });
      if (tx.dead !== undefined) throw tx.dead;
      tx.phase = 'commit';
      await client.query('COMMIT');
    } catch (err) {
      if (tx.dead !== undefined) throw tx.dead;
      if (lost !== undefined && tx.phase === 'body') {
        // pg's record of what this connection has prepared is wrong: the client is not
        // reused (its pool ends it), and the transaction is not applied (never committed).
        discard(tx, asError(lost));
        throw new PreparedLost(lost);
      }
      throw await this.#failed(tx, client, err, bounds, call);
    }
    release(tx);
    return result;
  }

  /** The error a failed transaction rejects with; the client is rolled back and released, or discarded. */
  async #failed(tx: Tx, client: PgPoolClientLike, err: unknown, bounds: StoreBounds, call: string | undefined): Promise<unknown> {
    const commitSent = tx.phase === 'commit';
    const outcome = commitSent ? 'unknown' : 'not-applied';
    if (tx.broken !== undefined || connectionLevel(err)) {
      const e = tx.broken ?? asError(err);
      discard(tx, e);
      return connectionError(e, outcome);
    }
    // A statement's own error, or the store's logic refusing (fn threw): roll back on the
    // same connection, which stays healthy if that works.
    try {
      await client.query('ROLLBACK');
    } catch (e) {
      if (tx.dead !== undefined) return tx.dead;
      // The connection failed too: the first error was probably its symptom.
      discard(tx, asError(e));
      return isApplicationError(err) ? err : connectionError(asError(err), outcome);
    }
    if (tx.dead !== undefined) return tx.dead;
    if (sqlState(err) === '55P03') {
      const locked = await this.#locked(tx, client, err, bounds, call);
      if (tx.dead !== undefined) return tx.dead;
      release(tx);
      return locked;
    }
    release(tx);
    return err;
  }

  /** `STORE_LOCKED` for a lock wait that passed `lock_timeout`, naming the holder when a non-locking read can tell. */
  async #locked(tx: Tx, client: PgPoolClientLike, err: unknown, bounds: StoreBounds, call: string | undefined): Promise<SessionError> {
    const t = serverTimeouts(bounds);
    const what = call ?? 'a store call';
    const after = `the wait passed lock_timeout (${t.lockTimeoutMs} ms, kept below storeTimeoutMs of ${bounds.callTimeoutMs} ms)`;
    const advice = `Retry later; if it persists, a process may be frozen inside a transaction (PostgreSQL ends such a transaction after idle_in_transaction_session_timeout, ${t.idleInTransactionMs} ms, below leaseTtlMs).`;
    const sql = tx.last?.sql ?? '';
    if (sql.includes('pg_advisory_xact_lock')) {
      return new SessionError('STORE_LOCKED', `store locked: ${what} waited for the lock that serializes creating or migrating the tables of ${this.label}, held by another process migrating the same database, and ${after}. ${advice}`, { cause: err });
    }
    const sessionId = sessionIdOf(tx.last);
    if (sessionId === undefined) {
      return new SessionError('STORE_LOCKED', `store locked: ${what}: a row in ${this.label} is held by another transaction, and ${after}. ${advice}`, { cause: err });
    }
    let holder = '';
    try {
      // A plain read never waits for row locks: it sees the last committed lease.
      const { rows } = await client.query(
        'SELECT lease_owner, lease_epoch, lease_expires_at - (extract(epoch from now()) * 1000)::bigint AS remaining_ms FROM polestar_sessions WHERE session_id = $1',
        [sessionId],
      );
      const row = rows[0];
      if (row !== undefined) {
        const owner = row.lease_owner;
        const remaining = Number(row.remaining_ms);
        holder =
          typeof owner === 'string' && remaining > 0
            ? ` (its lease is held by owner "${owner}", epoch ${String(row.lease_epoch)}, for another ${remaining} ms)`
            : typeof owner === 'string'
              ? ` (its last lease, of owner "${owner}", epoch ${String(row.lease_epoch)}, has expired)`
              : ' (no lease is held on it)';
      }
    } catch {
      // Who holds it is only a hint; the lock wait is the error.
    }
    return new SessionError(
      'STORE_LOCKED',
      `store locked: ${what} on session "${sessionId}": the session's row in ${this.label} is held by another transaction${holder}, and ${after}. ${advice}`,
      { sessionId, cause: err },
    );
  }
}

/** True for errors the store's own logic throws inside a transaction (they are not the connection's). */
function isApplicationError(err: unknown): boolean {
  return err instanceof SessionError || err instanceof TypeError || err instanceof RangeError;
}

/** The session a statement is about: the parameter compared with `session_id`. */
function sessionIdOf(last: Tx['last']): string | undefined {
  if (last === undefined || !last.sql.includes('polestar_sessions')) return undefined;
  const m = /\bsession_id\s*=\s*\$(\d+)/.exec(last.sql);
  const v = m === null ? undefined : last.params?.[Number(m[1]) - 1];
  return typeof v === 'string' ? v : undefined;
}

function timeoutError(tx: Tx, bounds: StoreBounds): PgDriverError {
  if (tx.phase === 'commit') {
    return new PgDriverError(
      'timeout',
      'unknown',
      `it did not answer within storeTimeoutMs (${bounds.callTimeoutMs} ms): its COMMIT was sent but not answered, so whether it committed is unknown, and its connection was closed. Find out before retrying anything else (repeating the same commit is safe), or raise storeTimeoutMs.`,
    );
  }
  const where = tx.phase === 'connect' ? 'while waiting for a connection' : 'inside its transaction';
  return new PgDriverError(
    'timeout',
    'not-applied',
    `it did not answer within storeTimeoutMs (${bounds.callTimeoutMs} ms) ${where}: it was cancelled and its connection closed, so nothing of it was committed. Retry, or raise storeTimeoutMs.`,
  );
}

function connectionError(err: Error, outcome: 'not-applied' | 'unknown'): PgDriverError {
  const what =
    outcome === 'unknown'
      ? 'the connection failed after COMMIT was sent, so whether the transaction committed is unknown'
      : 'the connection failed before COMMIT was sent, so nothing of the transaction was committed (retry: the next call uses a fresh connection)';
  return new PgDriverError('connection', outcome, `${what}: ${err.message}`, err);
}

/** Returns the client to its pool, healthy, unless it was already released. */
function release(tx: Tx): void {
  if (tx.broken !== undefined) {
    discard(tx, tx.broken);
    return;
  }
  finish(tx, undefined);
}

/** Releases the client with an error, so its pool discards it (and `pg` closes its socket). */
function discard(tx: Tx, err: Error): void {
  finish(tx, err);
}

function finish(tx: Tx, err: Error | undefined): void {
  const client = tx.client;
  if (tx.released || client === undefined) return;
  tx.released = true;
  if (listenable(client)) client.removeListener('error', tx.onError);
  try {
    client.release(err);
  } catch {
    // A structural pool's release threw: the client is lost either way.
  }
}
