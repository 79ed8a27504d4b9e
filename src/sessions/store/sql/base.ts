/**
 * The SQL session store: one implementation of `SessionStore` over a {@link SqlDriver},
 * which `SqliteSessionStore` and `PostgresSessionStore` extend with their own driver.
 *
 * Leases are taken with one conditional UPDATE … RETURNING on the store's clock (the
 * database's `now()` on PostgreSQL, the host's on SQLite). Every fenced write is one
 * transaction whose first statement is an UPDATE of the session row that matches only when
 * the lease is current and unexpired (and the attempt is the open one): it writes nothing
 * otherwise, and on PostgreSQL its row lock serializes every writer of the session, so a
 * concurrent acquire re-checks the lease after the write committed. The diagnosis of a
 * refusal (lease lost, attempt not open, checkpoint not kept) is a second query, run only
 * when the first matched nothing.
 */
import { errorText } from '../../../util/error-text.js';
import type { JsonValue } from '../../../util/lossless-json.js';
import { SessionError } from '../../errors.js';
import * as check from '../input.js';
import * as fail from '../failures.js';
import type { SessionStore } from '../contract.js';
import { migrate } from './schema.js';
import { STORE_BOUND, mergeBounds, type StoreBounds } from '../store-bound.js';
import { numberPlaceholders, type SqlConn, type SqlDriver, type SqlRow, type SqlValue } from './driver.js';
import { writeCommit } from './commit.js';
import { FENCE, attemptRow, beginIn, diagnose, fence, fenceParams, fenceRow, insertEvents, openOf, recorded } from './fence.js';
import { acquireIn, deleteIn } from './leases.js';
import { releaseIn, requestCancelIn, requestHandoffIn, requestsIn } from './requests.js';
import { WakeHub, type WakeSource } from './wakes.js';
import { attemptStatusIn, eventsPage, loadSession, summaryOf } from './reads.js';
import { checkpointList, int, sessionRow } from './rows.js';
import type * as store from '../contract.js';

const NOW: Record<SqlDriver['dialect'], string> = {
  postgres: '(extract(epoch from now()) * 1000)::bigint',
  sqlite: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
};

/** Events per page read by `events()`. */
const EVENT_PAGE = 500;

/** @internal The option key of a SQL store's wake-up source (the PostgreSQL store's `LISTEN` connection). */
export const WAKE_SOURCE: unique symbol = Symbol('polestar.sessions.wakeSource');

/** Options of {@link SqlSessionStore}. */
export interface SqlSessionStoreOptions {
  /**
   * How often a caller polls for wake-ups, in milliseconds (a finite number >= 1, default
   * 250): what `watch()` reports as `pollMs`. Wake-ups of this store object are delivered
   * in-process; those of other processes are polled.
   */
  readonly pollMs?: number;
  /** @internal Makes the source of the wake-ups of other processes. */
  readonly [WAKE_SOURCE]?: (hub: WakeHub) => WakeSource;
}

/**
 * A {@link SessionStore} in a SQL database, over a {@link SqlDriver} that runs its
 * transactions: the tables (`polestar_*`) are created or migrated on the first call, every
 * write is one transaction fenced by the lease's epoch, and every input is checked before
 * anything is written. `SqliteSessionStore` and `PostgresSessionStore` are this class with
 * their own driver; a driver of your own for a database that speaks one of the two dialects
 * (`'sqlite'` or `'postgres'`) makes a store of its own: `new SqlSessionStore(driver)`.
 */
export class SqlSessionStore implements SessionStore {
  readonly turnKeys = true;
  readonly #driver: SqlDriver;
  readonly #text = new Map<string, string>();
  #ready: Promise<void> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  readonly #inflight = new Set<Promise<unknown>>();
  #bounds: StoreBounds | undefined;
  readonly #hub: WakeHub;
  readonly #source: WakeSource | undefined;

  /**
   * @param driver - runs the store's transactions (see {@link SqlDriver}).
   * @param options - `pollMs`.
   */
  constructor(driver: SqlDriver, options: SqlSessionStoreOptions = {}) {
    const o = check.checkObject<SqlSessionStoreOptions>(options, 'new SqlSessionStore(driver, options)', true);
    this.#driver = driver;
    this.#hub = new WakeHub(check.checkPollMs(o.pollMs, 'options.pollMs'), () => this.#source?.mode ?? 'poll');
    this.#source = o[WAKE_SOURCE]?.(this.#hub);
  }

  /**
   * @internal The plugin's bounds on this store's calls: the smallest of every server's,
   * handed to the driver (a call queued past its bound never runs; lock waits end before it).
   */
  [STORE_BOUND](bounds: StoreBounds): void {
    this.#bounds = mergeBounds(this.#bounds, bounds);
    this.#driver.setBounds?.(this.#bounds);
  }

  // ---- plumbing -------------------------------------------------------------------------

  /** Dialect SQL of a statement written with `?` and `{now}`. */
  #sql(text: string): string {
    let out = this.#text.get(text);
    if (out === undefined) {
      out = text.replaceAll('{now}', NOW[this.#driver.dialect]);
      if (this.#driver.dialect === 'postgres') out = numberPlaceholders(out);
      this.#text.set(text, out);
    }
    return out;
  }

  #conn(c: SqlConn): SqlConn {
    return { run: (text, params) => c.run(this.#sql(text), params) };
  }

  /** A read transaction of the store call `store.<what>()`. */
  #read<T>(what: string, fn: (c: SqlConn) => Promise<T>): Promise<T> {
    return this.#driver.read((c) => fn(this.#conn(c)), `store.${what}()`);
  }

  /**
   * A write transaction of the store call `store.<what>()`; `relaxed`: it may resolve before
   * it is durable (see {@link SqlDriver.write}).
   */
  #write<T>(what: string, fn: (c: SqlConn) => Promise<T>, relaxed = false): Promise<T> {
    return this.#driver.write((c) => fn(this.#conn(c)), `store.${what}()`, relaxed);
  }

  /** Runs one operation: refused after close, after the tables are ready, tracked for close(), driver errors wrapped. */
  async #op<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.#closed) throw fail.storeClosed(`store.${what}()`);
    const p = (async () => {
      await this.#ensureReady();
      return fn();
    })();
    this.#inflight.add(p);
    try {
      return await p;
    } catch (err) {
      throw this.#wrap(err, what);
    } finally {
      this.#inflight.delete(p);
    }
  }

  #wrap(err: unknown, what: string): unknown {
    if (err instanceof SessionError || err instanceof TypeError) return err;
    return new SessionError('STORE_ERROR', `store error: store.${what}() failed on ${this.#driver.label}: ${errorText(err)}`, { cause: err });
  }

  #ensureReady(): Promise<void> {
    if (this.#ready === undefined) {
      const ready = this.#driver.migrate((c) => migrate(this.#conn(c), this.#driver.dialect, this.#driver.label), 'the first store call (creating or migrating the session tables)');
      this.#ready = ready;
      // A failed start (database down, newer schema) is retried by the next call.
      ready.catch(() => {
        if (this.#ready === ready) this.#ready = undefined;
      });
    }
    return this.#ready;
  }

  // ---- leases ---------------------------------------------------------------------------

  create(input: store.CreateSessionInput): Promise<store.Lease> {
    return this.#op('create', async () => {
      const c = check.checkCreate(input);
      const meta = check.encodeJson(c.meta);
      const locals = check.encodeJson(c.locals as unknown as JsonValue);
      return this.#write('create', async (db) => {
        const { rows } = await db.run(
          `INSERT INTO polestar_sessions (session_id, agent_id, format, meta, created_at, updated_at, committed_turn, last_seq, rev,
             lease_owner, lease_epoch, lease_expires_at, lease_ttl_ms, lease_incarnation, open_turn, open_attempt, open_epoch)
           VALUES (?, ?, ?, ?, {now}, {now}, 0, 0, 1, ?, 1, {now} + ?, ?, ?, NULL, NULL, NULL)
           ON CONFLICT (session_id) DO NOTHING
           RETURNING created_at`,
          [c.sessionId, c.agentId, check.ROW_FORMAT, meta, c.owner, c.ttlMs, c.ttlMs, c.incarnation ?? null],
        );
        if (rows.length === 0) {
          throw new SessionError('SESSION_ALREADY_EXISTS', `session already exists: "${c.sessionId}" is stored already; resume it, or pick another id.`, {
            sessionId: c.sessionId,
          });
        }
        await db.run('INSERT INTO polestar_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, 0, ?, ?, NULL, 0, ?)', [
          c.sessionId,
          check.ROW_FORMAT,
          locals,
          int(rows[0].created_at, 'the new session row', c.sessionId),
        ]);
        // requests left by a process that does not remove them at delete (an earlier version)
        await db.run('DELETE FROM polestar_requests WHERE session_id = ?', [c.sessionId]);
        return check.leaseOf(c.sessionId, c.owner, 1, c.incarnation);
      });
    });
  }

  acquire(sessionId: string, options: store.AcquireOptions): Promise<store.Lease> {
    return this.#op('acquire', async () => {
      const a = check.checkAcquire(sessionId, options);
      return this.#write('acquire', (db) => acquireIn(db, a));
    });
  }

  renew(lease: store.Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    return this.#op('renew', async () => {
      const l = check.checkLease(lease);
      const ttl = check.checkRenew(options) ?? null;
      await this.#write('renew', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET lease_ttl_ms = COALESCE(?, lease_ttl_ms), lease_expires_at = {now} + COALESCE(?, lease_ttl_ms)
           WHERE ${FENCE} RETURNING lease_epoch`,
          [ttl, ttl, ...fenceParams(l)],
        );
        if (rows.length === 0) await diagnose(db, l, 'renew');
      });
    });
  }

  release(lease: store.Lease): Promise<boolean> {
    return this.#op('release', async () => {
      const l = check.checkLease(lease);
      const released = await this.#write('release', (db) => releaseIn(db, this.#driver.dialect, l));
      if (released) this.#wake({ kind: 'release', sessionId: l.sessionId });
      return released;
    });
  }

  // ---- turns ----------------------------------------------------------------------------

  begin(lease: store.Lease, options?: store.BeginOptions): Promise<store.BegunAttempt> {
    return this.#op('begin', async () => {
      const l = check.checkLease(lease);
      const o = check.checkBegin(options);
      // The started record may resolve before it is durable: the next durable write of the
      // session (a flush, the commit, the abort) makes it durable with it.
      return this.#write('begin', (db) => beginIn(db, this.#driver.dialect, l, o), true);
    });
  }

  append(lease: store.Lease, attempt: store.TurnAttempt, events: readonly store.NewSessionEvent[]): Promise<void> {
    return this.#op('append', async () => {
      const l = check.checkLease(lease);
      const a = check.checkAttempt(attempt, 'attempt');
      const evs = check.checkEvents(events, 'events');
      await this.#write('append', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, last_seq = last_seq + ?
           WHERE ${FENCE} AND open_turn = ? AND open_attempt = ? AND open_epoch = lease_epoch
           RETURNING last_seq, updated_at`,
          [evs.length, ...fenceParams(l), a.turn, a.attempt],
        );
        if (rows.length === 0) {
          const row = await diagnose(db, l, 'append');
          throw fail.notOpen(l.sessionId, a, openOf(row, l.sessionId), 'append');
        }
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        const last = int(rows[0].last_seq, where, l.sessionId);
        await insertEvents(db, l.sessionId, a, evs, last - evs.length + 1, int(rows[0].updated_at, where, l.sessionId));
      });
    });
  }

  commit(lease: store.Lease, input: store.CommitInput): Promise<store.CommittedTurn> {
    return this.#op('commit', async () => {
      const l = check.checkLease(lease);
      const c = check.checkCommit(input);
      const locals = check.encodeJson(c.locals as unknown as JsonValue);
      return this.#write('commit', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, last_seq = last_seq + ?, committed_turn = open_turn,
             open_turn = NULL, open_attempt = NULL, open_epoch = NULL
           WHERE ${FENCE} AND open_turn = ? AND open_attempt = ? AND open_epoch = lease_epoch
           RETURNING last_seq, updated_at, rev`,
          [c.events.length, ...fenceParams(l), c.turn, c.attempt],
        );
        if (rows.length === 0) {
          // A repeat of a commit this lease made answers the same, writing nothing, even once
          // the lease expired (as long as no acquire or release replaced it).
          const row = await fenceRow(db, l);
          const done = await attemptRow(db, l.sessionId, c);
          if (done !== undefined && done.status === 'committed' && done.epoch === l.epoch && recorded(row, l)) {
            return { turn: c.turn, attempt: c.attempt, committedAt: new Date(done.endedAt), lastSeq: done.endSeq };
          }
          fence(row, l, 'commit');
          throw fail.notOpen(l.sessionId, c, openOf(row as SqlRow, l.sessionId), 'commit');
        }
        return writeCommit(db, this.#driver.dialect, l, c, locals, rows[0]);
      });
    });
  }

  abort(lease: store.Lease, input: store.AbortInput): Promise<void> {
    return this.#op('abort', async () => {
      const l = check.checkLease(lease);
      const a = check.checkAbort(input);
      await this.#write('abort', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, last_seq = last_seq + ?, open_turn = NULL, open_attempt = NULL, open_epoch = NULL
           WHERE ${FENCE} AND open_turn = ? AND open_attempt = ?
           RETURNING last_seq, updated_at, rev`,
          [a.events.length, ...fenceParams(l), a.turn, a.attempt],
        );
        if (rows.length === 0) {
          const row = await fenceRow(db, l);
          if (recorded(row, l) && (await attemptRow(db, l.sessionId, a))?.status === 'aborted') return;
          fence(row, l, 'abort');
          throw fail.notOpen(l.sessionId, a, openOf(row as SqlRow, l.sessionId), 'abort');
        }
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        const last = int(rows[0].last_seq, where, l.sessionId);
        const now = int(rows[0].updated_at, where, l.sessionId);
        await insertEvents(db, l.sessionId, a, a.events, last - a.events.length + 1, now);
        await db.run(
          "UPDATE polestar_attempts SET status = 'aborted', ended_at = ?, end_rev = ?, end_seq = ?, reason = ? WHERE session_id = ? AND turn = ? AND attempt = ?",
          [now, int(rows[0].rev, where, l.sessionId), last, a.reason === undefined ? null : check.encodeJson(a.reason), l.sessionId, a.turn, a.attempt],
        );
      });
    });
  }

  rollback(lease: store.Lease, turn: number): Promise<void> {
    return this.#op('rollback', async () => {
      const l = check.checkLease(lease);
      const t = check.checkInt(turn, 'turn', 0);
      await this.#write('rollback', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}
           WHERE ${FENCE} AND open_turn IS NULL AND committed_turn >= ?
             AND EXISTS (SELECT 1 FROM polestar_checkpoints c WHERE c.session_id = polestar_sessions.session_id AND c.turn = ?)
           RETURNING committed_turn, rev, updated_at`,
          [...fenceParams(l), t, t],
        );
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        if (rows.length === 0) {
          const row = await diagnose(db, l, 'rollback');
          const open = openOf(row, l.sessionId);
          if (open !== undefined) throw fail.busyAttempt(l.sessionId, open, 'rolling back');
          throw fail.noCheckpoint(l.sessionId, t, int(row.committed_turn, where, l.sessionId));
        }
        const from = int(rows[0].committed_turn, where, l.sessionId);
        await db.run('INSERT INTO polestar_rollbacks (session_id, rev, from_turn, to_turn, epoch, at) VALUES (?, ?, ?, ?, ?, ?)', [
          l.sessionId,
          int(rows[0].rev, where, l.sessionId),
          from,
          t,
          l.epoch,
          int(rows[0].updated_at, where, l.sessionId),
        ]);
        await db.run('DELETE FROM polestar_checkpoints WHERE session_id = ? AND turn > ?', [l.sessionId, t]);
        await db.run('UPDATE polestar_sessions SET committed_turn = ? WHERE session_id = ?', [t, l.sessionId]);
      });
    });
  }

  pin(lease: store.Lease, turn: number, label?: string): Promise<void> {
    return this.#op('pin', async () => {
      const l = check.checkLease(lease);
      const t = check.checkInt(turn, 'turn', 0);
      const lb = check.checkLabel(label);
      await this.#write('pin', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}
           WHERE ${FENCE} AND EXISTS (SELECT 1 FROM polestar_checkpoints c WHERE c.session_id = polestar_sessions.session_id AND c.turn = ?)
           RETURNING rev`,
          [...fenceParams(l), t],
        );
        if (rows.length === 0) {
          const row = await diagnose(db, l, 'pin');
          throw fail.noCheckpoint(l.sessionId, t, int(row.committed_turn, `polestar_sessions row of session "${l.sessionId}"`, l.sessionId));
        }
        await db.run('UPDATE polestar_checkpoints SET pinned = 1, label = COALESCE(?, label) WHERE session_id = ? AND turn = ?', [lb ?? null, l.sessionId, t]);
      });
    });
  }

  // ---- reads ----------------------------------------------------------------------------

  load(sessionId: string, options?: { readonly turn?: number }): Promise<store.LoadedSession> {
    return this.#op('load', async () => {
      const id = check.checkName(sessionId, 'sessionId');
      const wanted = check.checkLoad(options);
      return this.#read('load', (db) => loadSession(db, id, wanted));
    });
  }

  /**
   * See {@link SessionStore.attemptStatus}. It reads in a write transaction, so it waits for
   * a write of the session in flight: on PostgreSQL under the session's row lock
   * (`SELECT … FOR UPDATE`); on SQLite behind the transaction in flight on the store's
   * connection, and another connection's write lock up to `busyTimeoutMs` (then
   * `STORE_LOCKED`).
   */
  attemptStatus(sessionId: string, attempt: store.TurnAttempt): Promise<store.AttemptStatus> {
    return this.#op('attemptStatus', async () => {
      const id = check.checkName(sessionId, 'sessionId');
      const a = check.checkAttempt(attempt, 'attempt');
      // A write transaction: it reads only after any write of the session in flight ended
      // (PostgreSQL: under the session's row lock; SQLite: queued behind the write in flight
      // on this connection, and behind another connection's write lock by the busy retry).
      return this.#write('attemptStatus', (db) => attemptStatusIn(db, this.#driver.dialect, id, a));
    });
  }

  checkpoints(sessionId: string): Promise<readonly store.CheckpointInfo[]> {
    return this.#op('checkpoints', async () => {
      const id = check.checkName(sessionId, 'sessionId');
      return this.#read('checkpoints', async (db) => {
        await sessionRow(db, id);
        return checkpointList(db, id);
      });
    });
  }

  list(query?: store.ListQuery): Promise<store.SessionPage> {
    return this.#op('list', async () => {
      const q = check.checkList(query);
      const where: string[] = [];
      const params: SqlValue[] = [];
      if (q.agentId !== undefined) {
        where.push('agent_id = ?');
        params.push(q.agentId);
      }
      if (q.after !== undefined) {
        where.push('session_id > ?');
        params.push(q.after);
      }
      params.push(q.limit + 1);
      const { rows } = await this.#read('list', (db) =>
        db.run(
          `SELECT session_id, agent_id, format, committed_turn, updated_at, meta FROM polestar_sessions
           ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY session_id LIMIT ?`,
          params,
        ),
      );
      const items = rows.slice(0, q.limit).map(summaryOf);
      return rows.length > q.limit ? { items, cursor: check.encodeCursor(items[items.length - 1].sessionId) } : { items };
    });
  }

  delete(sessionId: string, options?: store.DeleteOptions): Promise<boolean> {
    return this.#op('delete', async () => {
      const id = check.checkName(sessionId, 'sessionId');
      const d = check.checkDelete(options);
      const mine = d.lease !== undefined && d.lease.sessionId === id ? d.lease : undefined;
      const deleted = await this.#write('delete', (db) => deleteIn(db, this.#driver.dialect, id, d.force, mine));
      if (deleted) this.#wake({ kind: 'release', sessionId: id });
      return deleted;
    });
  }

  // ---- routing: handoff and cancel requests, wake-ups -----------------------------------

  /** See {@link SessionStore.requestHandoff}. */
  requestHandoff(sessionId: string, request: { readonly owner: string; readonly until: Date }): Promise<boolean> {
    return this.#op('requestHandoff', async () => {
      const h = check.checkHandoffRequest(sessionId, request);
      const holder = await this.#write('requestHandoff', (db) => requestHandoffIn(db, this.#driver.dialect, h));
      if (holder !== undefined) this.#wake({ kind: 'handoff', sessionId: h.sessionId, owner: holder });
      return holder !== undefined;
    });
  }

  /** See {@link SessionStore.requestCancel}. */
  requestCancel(sessionId: string, reason: string): Promise<store.TurnAttempt | undefined> {
    return this.#op('requestCancel', async () => {
      const c = check.checkCancelRequest(sessionId, reason);
      const done = await this.#write('requestCancel', (db) => requestCancelIn(db, this.#driver.dialect, c.sessionId, c.reason));
      if (done === undefined) return undefined;
      if (done.holder !== null) this.#wake({ kind: 'cancel', sessionId: c.sessionId, owner: done.holder });
      return { turn: done.turn, attempt: done.attempt };
    });
  }

  /** See {@link SessionStore.requests}. */
  requests(owner: string): Promise<readonly store.HolderRequest[]> {
    return this.#op('requests', async () => {
      const o = check.checkName(owner, 'owner');
      return this.#read('requests', (db) => requestsIn(db, o));
    });
  }

  /** See {@link SessionStore.watch}. */
  watch(onWake: (wake: store.StoreWake) => void, onError?: (err: Error) => void): store.StoreWatch {
    check.checkWatch(onWake, onError);
    if (this.#closed) return this.#hub.subscribe(onWake, onError, fail.storeClosed('store.watch()'));
    const sub = this.#hub.subscribe(onWake, onError);
    this.#source?.start();
    return sub;
  }

  /** Delivers a wake-up of this store object to its own watchers, unless its source brings it back (PostgreSQL LISTEN). */
  #wake(wake: store.StoreWake): void {
    if (this.#source === undefined || this.#source.local) this.#hub.emit(wake);
  }

  events(sessionId: string, query?: store.EventsQuery): AsyncIterable<store.StoredSessionEvent> {
    return { [Symbol.asyncIterator]: () => this.#iterate(sessionId, query) };
  }

  async *#iterate(sessionId: string, query: store.EventsQuery | undefined): AsyncGenerator<store.StoredSessionEvent> {
    const { id, afterSeq, limit } = await this.#op('events', async () => {
      const q = check.checkEventsQuery(query);
      return { id: check.checkName(sessionId, 'sessionId'), ...q };
    });
    let seq = afterSeq;
    let left = limit;
    let first = true;
    while (left > 0) {
      const page = await this.#op('events', () =>
        this.#read('events', (db) => eventsPage(db, id, seq, Math.min(left, EVENT_PAGE), first)),
      );
      first = false;
      for (const e of page) {
        if (e.seq !== seq + 1) throw fail.corrupt(`the log of session "${id}" jumps from seq ${seq} to ${e.seq}`, id);
        seq = e.seq;
        left -= 1;
        yield e;
      }
      if (page.length < EVENT_PAGE) return;
    }
  }

  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#closed = true;
      this.#closing = (async () => {
        this.#hub.closeAll();
        await Promise.allSettled([...this.#inflight]);
        await this.#source?.close().catch(() => undefined);
        await this.#driver.close();
      })();
    }
    return this.#closing;
  }
}
