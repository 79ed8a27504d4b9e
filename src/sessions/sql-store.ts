/**
 * @internal The SQL session store: one implementation of `SessionStore` over a `SqlDriver`,
 * shared by `SqliteSessionStore` and `PostgresSessionStore`.
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
import type { JsonValue } from '../tools/lossless-json.js';
import { SessionError } from './errors.js';
import {
  ROW_FORMAT,
  alreadyCommitted,
  busyAttempt,
  busyLease,
  checkAbort,
  checkAcquire,
  checkAttempt,
  checkBegin,
  checkCommit,
  checkCreate,
  checkDelete,
  checkEvents,
  checkEventsQuery,
  checkInt,
  checkLabel,
  checkLease,
  checkList,
  checkLoad,
  checkName,
  checkRenew,
  corrupt,
  decodeJson,
  decodeLocals,
  encodeCursor,
  encodeJson,
  leaseLost,
  leaseOf,
  newerRow,
  noCheckpoint,
  notFound,
  notOpen,
  storeClosed,
} from './input.js';
import { migrate } from './sql-schema.js';
import { STORE_BOUND, mergeBounds, type StoreBounds } from './store-bound.js';
import { numberPlaceholders, type SqlConn, type SqlDriver, type SqlRow, type SqlValue } from './sql-driver.js';
import type {
  AbortInput,
  AcquireOptions,
  AttemptStatus,
  BeginOptions,
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
  OpenAttempt,
  SessionEventStatus,
  SessionInfo,
  SessionPage,
  SessionStore,
  StoredSessionEvent,
  TurnAttempt,
} from './store.js';

const NOW: Record<SqlDriver['dialect'], string> = {
  postgres: '(extract(epoch from now()) * 1000)::bigint',
  sqlite: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
};

/** Events per INSERT statement. */
const EVENT_CHUNK = 200;
/** Events per page read by `events()`. */
const EVENT_PAGE = 500;

const FENCE = 'session_id = ? AND lease_owner = ? AND lease_epoch = ? AND lease_expires_at > {now}';
const fenceParams = (l: Lease): SqlValue[] => [l.sessionId, l.owner, l.epoch];

const EVENT_COLUMNS = 'e.seq, e.turn, e.attempt, e.kind, e.format, e.body, e.at';

/**
 * The attempts `k` of session row `p` that hold a committed turn of the current timeline
 * among the last `?` (keyWindow) turns, begun with the key `?`: committed, at most
 * `committed_turn`, and not superseded by a rollback made after the commit to an earlier turn.
 */
const KEYED_CONDITION = `k.turn <= p.committed_turn AND k.turn > p.committed_turn - ? AND k.turn_key = ? AND k.status = 'committed'
  AND NOT EXISTS (SELECT 1 FROM polestar_rollbacks r WHERE r.session_id = k.session_id AND r.rev > k.end_rev AND r.to_turn < k.turn)`;

/** {@link KEYED_CONDITION} as a subquery of an UPDATE of `polestar_sessions`. */
const KEYED_TURN = `SELECT 1 FROM polestar_attempts k WHERE k.session_id = polestar_sessions.session_id AND ${KEYED_CONDITION.replaceAll('p.committed_turn', 'polestar_sessions.committed_turn')}`;

/** @internal */
export class SqlSessionStoreCore implements SessionStore {
  /** {@inheritDoc SessionStore.turnKeys} */
  readonly turnKeys = true;
  readonly #driver: SqlDriver;
  readonly #text = new Map<string, string>();
  #ready: Promise<void> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  readonly #inflight = new Set<Promise<unknown>>();
  #bounds: StoreBounds | undefined;

  constructor(driver: SqlDriver) {
    this.#driver = driver;
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

  /** A write transaction of the store call `store.<what>()`. */
  #write<T>(what: string, fn: (c: SqlConn) => Promise<T>): Promise<T> {
    return this.#driver.write((c) => fn(this.#conn(c)), `store.${what}()`);
  }

  /** Runs one operation: refused after close, after the tables are ready, tracked for close(), driver errors wrapped. */
  async #op<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.#closed) throw storeClosed(`store.${what}()`);
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
    const message = err instanceof Error ? err.message : String(err);
    return new SessionError('STORE_ERROR', `store error: store.${what}() failed on ${this.#driver.label}: ${message}`, { cause: err });
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

  /** The reason a fenced statement matched nothing: LEASE_LOST, or the session row for further checks. */
  async #diagnose(c: SqlConn, l: Lease, what: string): Promise<SqlRow> {
    const row = await this.#fenceRow(c, l);
    this.#fence(row, l, what);
    return row as SqlRow;
  }

  /** The session row as the fence sees it (`undefined` when the session is gone). */
  async #fenceRow(c: SqlConn, l: Lease): Promise<SqlRow | undefined> {
    const { rows } = await c.run(
      'SELECT lease_owner, lease_epoch, lease_expires_at, lease_incarnation, open_turn, open_attempt, open_epoch, committed_turn, {now} AS now FROM polestar_sessions WHERE session_id = ?',
      [l.sessionId],
    );
    return rows[0];
  }

  /** True when `l` is still the session's recorded lease (live or expired: no acquire or release replaced it). */
  #recorded(row: SqlRow | undefined, l: Lease): boolean {
    return row !== undefined && row.lease_owner === l.owner && int(row.lease_epoch, `polestar_sessions row of session "${l.sessionId}"`, l.sessionId) === l.epoch;
  }

  /** Throws the `LEASE_LOST` of `l` against `row`, unless the lease is current and unexpired. */
  #fence(row: SqlRow | undefined, l: Lease, what: string): void {
    const where = `polestar_sessions row of session "${l.sessionId}"`;
    const lost = leaseLost(
      l,
      row === undefined
        ? { exists: false, owner: null, epoch: 0, expiresAt: null, now: 0, incarnation: null }
        : {
            exists: true,
            owner: (row.lease_owner as string | null) ?? null,
            epoch: int(row.lease_epoch, where, l.sessionId),
            expiresAt: intOrNull(row.lease_expires_at, where, l.sessionId),
            now: int(row.now, where, l.sessionId),
            incarnation: (row.lease_incarnation as string | null | undefined) ?? null,
          },
      `store.${what}()`,
    );
    if (lost !== undefined) throw lost;
  }

  #openOf(row: SqlRow, sessionId: string): { turn: number; attempt: number; epoch: number } | undefined {
    const where = `polestar_sessions row of session "${sessionId}"`;
    const turn = intOrNull(row.open_turn, where, sessionId);
    if (turn === null) return undefined;
    return { turn, attempt: int(row.open_attempt, where, sessionId), epoch: int(row.open_epoch, where, sessionId) };
  }

  async #insertEvents(c: SqlConn, sessionId: string, a: TurnAttempt, events: readonly NewSessionEvent[], firstSeq: number, at: number): Promise<void> {
    for (let i = 0; i < events.length; i += EVENT_CHUNK) {
      const chunk = events.slice(i, i + EVENT_CHUNK);
      const params: SqlValue[] = [];
      chunk.forEach((e, j) => params.push(sessionId, firstSeq + i + j, a.turn, a.attempt, e.kind, ROW_FORMAT, encodeJson(e.body), at));
      await c.run(
        `INSERT INTO polestar_events (session_id, seq, turn, attempt, kind, format, body, at) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        params,
      );
    }
  }

  // ---- leases ---------------------------------------------------------------------------

  /** {@inheritDoc SessionStore.create} */
  create(input: CreateSessionInput): Promise<Lease> {
    return this.#op('create', async () => {
      const c = checkCreate(input);
      const meta = encodeJson(c.meta);
      const locals = encodeJson(c.locals as unknown as JsonValue);
      return this.#write('create', async (db) => {
        const { rows } = await db.run(
          `INSERT INTO polestar_sessions (session_id, agent_id, format, meta, created_at, updated_at, committed_turn, last_seq, rev,
             lease_owner, lease_epoch, lease_expires_at, lease_ttl_ms, lease_incarnation, open_turn, open_attempt, open_epoch)
           VALUES (?, ?, ?, ?, {now}, {now}, 0, 0, 1, ?, 1, {now} + ?, ?, ?, NULL, NULL, NULL)
           ON CONFLICT (session_id) DO NOTHING
           RETURNING created_at`,
          [c.sessionId, c.agentId, ROW_FORMAT, meta, c.owner, c.ttlMs, c.ttlMs, c.incarnation ?? null],
        );
        if (rows.length === 0) {
          throw new SessionError('SESSION_ALREADY_EXISTS', `session already exists: "${c.sessionId}" is stored already; resume it, or pick another id.`, {
            sessionId: c.sessionId,
          });
        }
        await db.run('INSERT INTO polestar_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, 0, ?, ?, NULL, 0, ?)', [
          c.sessionId,
          ROW_FORMAT,
          locals,
          int(rows[0].created_at, 'the new session row', c.sessionId),
        ]);
        return leaseOf(c.sessionId, c.owner, 1, c.incarnation);
      });
    });
  }

  /** {@inheritDoc SessionStore.acquire} */
  acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
    return this.#op('acquire', async () => {
      const a = checkAcquire(sessionId, options);
      return this.#write('acquire', async (db) => {
        const where = `polestar_sessions row of session "${a.sessionId}"`;
        // On PostgreSQL (READ COMMITTED) an acquire that waited for another one's row lock
        // re-checks the row and finds it leased; by the time the diagnosis reads it, the
        // winner may have released it again. Then the session is free: try again.
        for (;;) {
          // A live lease is taken over at once only by another incarnation of its own owner
          // (`<>` is never true when either incarnation is NULL).
          const incarnation = a.incarnation ?? null;
          const { rows } = await db.run(
            `UPDATE polestar_sessions SET lease_owner = ?, lease_epoch = lease_epoch + 1, lease_expires_at = {now} + ?, lease_ttl_ms = ?, lease_incarnation = ?
             WHERE session_id = ? AND format <= ? AND (lease_owner IS NULL OR lease_expires_at <= {now} OR (lease_owner = ? AND lease_incarnation <> ?))
             RETURNING lease_epoch`,
            [a.owner, a.ttlMs, a.ttlMs, incarnation, a.sessionId, ROW_FORMAT, a.owner, incarnation],
          );
          if (rows.length > 0) return leaseOf(a.sessionId, a.owner, int(rows[0].lease_epoch, where, a.sessionId), a.incarnation);
          const found = await db.run('SELECT format, lease_owner, lease_epoch, lease_expires_at, lease_incarnation, {now} AS now FROM polestar_sessions WHERE session_id = ?', [
            a.sessionId,
          ]);
          const row = found.rows[0];
          if (row === undefined) throw notFound(a.sessionId);
          const format = int(row.format, where, a.sessionId);
          if (format > ROW_FORMAT) throw newerRow(`session "${a.sessionId}"`, format, a.sessionId);
          const holder = liveHolder(row, where, a.sessionId);
          const reused = holder !== undefined && holder.owner === a.owner && incarnation !== null && row.lease_incarnation !== null && row.lease_incarnation !== undefined && row.lease_incarnation !== incarnation;
          // (taken by another incarnation of this owner in between: take it over in turn)
          if (holder !== undefined && !reused) throw busyLease(a.sessionId, holder);
        }
      });
    });
  }

  /** {@inheritDoc SessionStore.renew} */
  renew(lease: Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    return this.#op('renew', async () => {
      const l = checkLease(lease);
      const ttl = checkRenew(options) ?? null;
      await this.#write('renew', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET lease_ttl_ms = COALESCE(?, lease_ttl_ms), lease_expires_at = {now} + COALESCE(?, lease_ttl_ms)
           WHERE ${FENCE} RETURNING lease_epoch`,
          [ttl, ttl, ...fenceParams(l)],
        );
        if (rows.length === 0) await this.#diagnose(db, l, 'renew');
      });
    });
  }

  /** {@inheritDoc SessionStore.release} */
  release(lease: Lease): Promise<boolean> {
    return this.#op('release', async () => {
      const l = checkLease(lease);
      return this.#write('release', async (db) => {
        const { rows } = await db.run(
          'UPDATE polestar_sessions SET lease_owner = NULL, lease_expires_at = NULL, lease_incarnation = NULL WHERE session_id = ? AND lease_owner = ? AND lease_epoch = ? RETURNING lease_epoch',
          fenceParams(l),
        );
        return rows.length > 0;
      });
    });
  }

  // ---- turns ----------------------------------------------------------------------------

  /** {@inheritDoc SessionStore.begin} */
  begin(lease: Lease, options?: BeginOptions): Promise<BegunAttempt> {
    return this.#op('begin', async () => {
      const l = checkLease(lease);
      const o = checkBegin(options);
      return this.#write('begin', async (db) => {
        const postgres = this.#driver.dialect === 'postgres';
        const keyed = o.key !== undefined;
        // A keyed begin opens nothing when a committed turn of the current timeline among
        // the last keyWindow ones has the key (checked in the same statement: no round trip
        // of its own). The only commit of this session that could run concurrently is one of
        // this same lease, whose outcome the sessions plugin finds out before its next begin.
        const opening = `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, open_turn = committed_turn + 1, open_epoch = lease_epoch,
               open_attempt = (SELECT COALESCE(MAX(a.attempt), 0) + 1 FROM polestar_attempts a
                               WHERE a.session_id = polestar_sessions.session_id AND a.turn = polestar_sessions.committed_turn + 1)
             WHERE ${FENCE} AND open_turn IS NULL${keyed ? ` AND NOT EXISTS (${KEYED_TURN})` : ''}`;
        const params = keyed ? [...fenceParams(l), o.keyWindow, o.key as string] : fenceParams(l);
        let rows: readonly SqlRow[];
        for (;;) {
          // PostgreSQL: the started record in the same statement (one round trip fewer).
          ({ rows } = await db.run(
            postgres
              ? `WITH u AS (${opening} RETURNING session_id, open_turn, open_attempt, lease_epoch, updated_at)
                 INSERT INTO polestar_attempts (session_id, turn, attempt, status, epoch, started_at, turn_key)
                 SELECT session_id, open_turn, open_attempt, 'started', lease_epoch, updated_at, CAST(? AS text) FROM u
                 RETURNING turn AS open_turn, attempt AS open_attempt, started_at AS updated_at`
              : `${opening} RETURNING open_turn, open_attempt, updated_at`,
            postgres ? [...params, o.key ?? null] : params,
          ));
          if (rows.length > 0) break;
          const row = await this.#diagnose(db, l, 'begin');
          if (keyed) {
            const found = await db.run(
              `SELECT k.turn FROM polestar_sessions p JOIN polestar_attempts k ON k.session_id = p.session_id
               WHERE p.session_id = ? AND ${KEYED_CONDITION} ORDER BY k.turn DESC LIMIT 1`,
              [l.sessionId, o.keyWindow, o.key as string],
            );
            if (found.rows.length > 0) throw alreadyCommitted(l.sessionId, o.key as string, int(found.rows[0].turn, `polestar_attempts row of session "${l.sessionId}"`, l.sessionId));
          }
          const open = this.#openOf(row, l.sessionId);
          // (an attempt ended by a concurrent call of the same holder in between: try again)
          if (open === undefined) continue;
          if (!o.replaceOpen || open.epoch !== l.epoch) throw busyAttempt(l.sessionId, open, 'beginning another');
          // Begun with this very lease by a begin (or left by an abort) whose reply was lost:
          // end it as aborted in this transaction, then open the next attempt.
          await this.#endOpen(db, l, open, 'begin outcome unknown');
        }
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        const turn = int(rows[0].open_turn, where, l.sessionId);
        const attempt = int(rows[0].open_attempt, where, l.sessionId);
        const now = int(rows[0].updated_at, where, l.sessionId);
        if (!postgres) {
          await db.run("INSERT INTO polestar_attempts (session_id, turn, attempt, status, epoch, started_at, turn_key) VALUES (?, ?, ?, 'started', ?, ?, ?)", [
            l.sessionId,
            turn,
            attempt,
            l.epoch,
            now,
            o.key ?? null,
          ]);
        }
        return { turn, attempt, startedAt: new Date(now) };
      });
    });
  }

  /** {@inheritDoc SessionStore.append} */
  append(lease: Lease, attempt: TurnAttempt, events: readonly NewSessionEvent[]): Promise<void> {
    return this.#op('append', async () => {
      const l = checkLease(lease);
      const a = checkAttempt(attempt, 'attempt');
      const evs = checkEvents(events, 'events');
      await this.#write('append', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, last_seq = last_seq + ?
           WHERE ${FENCE} AND open_turn = ? AND open_attempt = ? AND open_epoch = lease_epoch
           RETURNING last_seq, updated_at`,
          [evs.length, ...fenceParams(l), a.turn, a.attempt],
        );
        if (rows.length === 0) {
          const row = await this.#diagnose(db, l, 'append');
          throw notOpen(l.sessionId, a, this.#openOf(row, l.sessionId), 'append');
        }
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        const last = int(rows[0].last_seq, where, l.sessionId);
        await this.#insertEvents(db, l.sessionId, a, evs, last - evs.length + 1, int(rows[0].updated_at, where, l.sessionId));
      });
    });
  }

  /** {@inheritDoc SessionStore.commit} */
  commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
    return this.#op('commit', async () => {
      const l = checkLease(lease);
      const c = checkCommit(input);
      const locals = encodeJson(c.locals as unknown as JsonValue);
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
          const row = await this.#fenceRow(db, l);
          const done = await this.#attemptRow(db, l.sessionId, c);
          if (done !== undefined && done.status === 'committed' && done.epoch === l.epoch && this.#recorded(row, l)) {
            return { turn: c.turn, attempt: c.attempt, committedAt: new Date(done.endedAt), lastSeq: done.endSeq };
          }
          this.#fence(row, l, 'commit');
          throw notOpen(l.sessionId, c, this.#openOf(row as SqlRow, l.sessionId), 'commit');
        }
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        const last = int(rows[0].last_seq, where, l.sessionId);
        const now = int(rows[0].updated_at, where, l.sessionId);
        const rev = int(rows[0].rev, where, l.sessionId);
        if (this.#driver.dialect === 'postgres' && c.events.length <= EVENT_CHUNK) {
          // PostgreSQL: events, the committed record, the checkpoint and the retention in one
          // statement (its parts see one snapshot and touch disjoint rows): three round trips fewer.
          const params: SqlValue[] = [];
          const parts: string[] = [];
          if (c.events.length > 0) {
            const first = last - c.events.length + 1;
            c.events.forEach((e, j) => params.push(l.sessionId, first + j, c.turn, c.attempt, e.kind, ROW_FORMAT, encodeJson(e.body), now));
            parts.push(`e AS (INSERT INTO polestar_events (session_id, seq, turn, attempt, kind, format, body, at) VALUES ${c.events.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')})`);
          }
          parts.push("a AS (UPDATE polestar_attempts SET status = 'committed', ended_at = ?, end_rev = ?, end_seq = ? WHERE session_id = ? AND turn = ? AND attempt = ?)");
          params.push(now, rev, last, l.sessionId, c.turn, c.attempt);
          parts.push('d AS (DELETE FROM polestar_checkpoints WHERE session_id = ? AND turn > 0 AND turn < ? AND turn <= ? AND pinned = 0)');
          params.push(l.sessionId, c.turn, c.turn - c.keepCheckpoints);
          params.push(l.sessionId, c.turn, ROW_FORMAT, locals, now);
          await db.run(
            `WITH ${parts.join(', ')} INSERT INTO polestar_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, ?, ?, ?, NULL, 0, ?)`,
            params,
          );
          return { turn: c.turn, attempt: c.attempt, committedAt: new Date(now), lastSeq: last };
        }
        await this.#insertEvents(db, l.sessionId, c, c.events, last - c.events.length + 1, now);
        await db.run(
          "UPDATE polestar_attempts SET status = 'committed', ended_at = ?, end_rev = ?, end_seq = ? WHERE session_id = ? AND turn = ? AND attempt = ?",
          [now, rev, last, l.sessionId, c.turn, c.attempt],
        );
        await db.run('INSERT INTO polestar_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, ?, ?, ?, NULL, 0, ?)', [
          l.sessionId,
          c.turn,
          ROW_FORMAT,
          locals,
          now,
        ]);
        await db.run('DELETE FROM polestar_checkpoints WHERE session_id = ? AND turn > 0 AND turn < ? AND turn <= ? AND pinned = 0', [
          l.sessionId,
          c.turn,
          c.turn - c.keepCheckpoints,
        ]);
        return { turn: c.turn, attempt: c.attempt, committedAt: new Date(now), lastSeq: last };
      });
    });
  }

  /** {@inheritDoc SessionStore.abort} */
  abort(lease: Lease, input: AbortInput): Promise<void> {
    return this.#op('abort', async () => {
      const l = checkLease(lease);
      const a = checkAbort(input);
      await this.#write('abort', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, last_seq = last_seq + ?, open_turn = NULL, open_attempt = NULL, open_epoch = NULL
           WHERE ${FENCE} AND open_turn = ? AND open_attempt = ?
           RETURNING last_seq, updated_at, rev`,
          [a.events.length, ...fenceParams(l), a.turn, a.attempt],
        );
        if (rows.length === 0) {
          const row = await this.#fenceRow(db, l);
          if (this.#recorded(row, l) && (await this.#attemptRow(db, l.sessionId, a))?.status === 'aborted') return;
          this.#fence(row, l, 'abort');
          throw notOpen(l.sessionId, a, this.#openOf(row as SqlRow, l.sessionId), 'abort');
        }
        const where = `polestar_sessions row of session "${l.sessionId}"`;
        const last = int(rows[0].last_seq, where, l.sessionId);
        const now = int(rows[0].updated_at, where, l.sessionId);
        await this.#insertEvents(db, l.sessionId, a, a.events, last - a.events.length + 1, now);
        await db.run(
          "UPDATE polestar_attempts SET status = 'aborted', ended_at = ?, end_rev = ?, end_seq = ?, reason = ? WHERE session_id = ? AND turn = ? AND attempt = ?",
          [now, int(rows[0].rev, where, l.sessionId), last, a.reason === undefined ? null : encodeJson(a.reason), l.sessionId, a.turn, a.attempt],
        );
      });
    });
  }

  /** Ends `open` (begun with `l`) as aborted with `reason`, writing no event; no-op when it is no longer the open one. */
  async #endOpen(db: SqlConn, l: Lease, open: TurnAttempt, reason: string): Promise<void> {
    const { rows } = await db.run(
      `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}, open_turn = NULL, open_attempt = NULL, open_epoch = NULL
       WHERE ${FENCE} AND open_turn = ? AND open_attempt = ? AND open_epoch = lease_epoch
       RETURNING last_seq, updated_at, rev`,
      [...fenceParams(l), open.turn, open.attempt],
    );
    if (rows.length === 0) return;
    const where = `polestar_sessions row of session "${l.sessionId}"`;
    await db.run(
      "UPDATE polestar_attempts SET status = 'aborted', ended_at = ?, end_rev = ?, end_seq = ?, reason = ? WHERE session_id = ? AND turn = ? AND attempt = ?",
      [int(rows[0].updated_at, where, l.sessionId), int(rows[0].rev, where, l.sessionId), int(rows[0].last_seq, where, l.sessionId), encodeJson(reason), l.sessionId, open.turn, open.attempt],
    );
  }

  async #attemptRow(db: SqlConn, sessionId: string, a: TurnAttempt): Promise<{ status: string; epoch: number; endedAt: number; endSeq: number } | undefined> {
    const { rows } = await db.run('SELECT status, epoch, ended_at, end_seq FROM polestar_attempts WHERE session_id = ? AND turn = ? AND attempt = ?', [
      sessionId,
      a.turn,
      a.attempt,
    ]);
    const row = rows[0];
    if (row === undefined) return undefined;
    const where = `polestar_attempts row (turn ${a.turn}, attempt ${a.attempt}) of session "${sessionId}"`;
    return {
      status: String(row.status),
      epoch: int(row.epoch, where, sessionId),
      endedAt: intOrNull(row.ended_at, where, sessionId) ?? 0,
      endSeq: intOrNull(row.end_seq, where, sessionId) ?? 0,
    };
  }

  /** {@inheritDoc SessionStore.rollback} */
  rollback(lease: Lease, turn: number): Promise<void> {
    return this.#op('rollback', async () => {
      const l = checkLease(lease);
      const t = checkInt(turn, 'turn', 0);
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
          const row = await this.#diagnose(db, l, 'rollback');
          const open = this.#openOf(row, l.sessionId);
          if (open !== undefined) throw busyAttempt(l.sessionId, open, 'rolling back');
          throw noCheckpoint(l.sessionId, t, int(row.committed_turn, where, l.sessionId));
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

  /** {@inheritDoc SessionStore.pin} */
  pin(lease: Lease, turn: number, label?: string): Promise<void> {
    return this.#op('pin', async () => {
      const l = checkLease(lease);
      const t = checkInt(turn, 'turn', 0);
      const lb = checkLabel(label);
      await this.#write('pin', async (db) => {
        const { rows } = await db.run(
          `UPDATE polestar_sessions SET rev = rev + 1, updated_at = {now}
           WHERE ${FENCE} AND EXISTS (SELECT 1 FROM polestar_checkpoints c WHERE c.session_id = polestar_sessions.session_id AND c.turn = ?)
           RETURNING rev`,
          [...fenceParams(l), t],
        );
        if (rows.length === 0) {
          const row = await this.#diagnose(db, l, 'pin');
          throw noCheckpoint(l.sessionId, t, int(row.committed_turn, `polestar_sessions row of session "${l.sessionId}"`, l.sessionId));
        }
        await db.run('UPDATE polestar_checkpoints SET pinned = 1, label = COALESCE(?, label) WHERE session_id = ? AND turn = ?', [lb ?? null, l.sessionId, t]);
      });
    });
  }

  // ---- reads ----------------------------------------------------------------------------

  async #sessionRow(db: SqlConn, sessionId: string): Promise<{ info: SessionInfo; row: SqlRow }> {
    const { rows } = await db.run(
      `SELECT session_id, agent_id, format, meta, created_at, updated_at, committed_turn, last_seq,
              lease_owner, lease_epoch, lease_expires_at, open_turn, open_attempt, open_epoch, {now} AS now
       FROM polestar_sessions WHERE session_id = ?`,
      [sessionId],
    );
    const row = rows[0];
    if (row === undefined) throw notFound(sessionId);
    const where = `polestar_sessions row of session "${sessionId}"`;
    const format = int(row.format, where, sessionId);
    if (format > ROW_FORMAT) throw newerRow(`session "${sessionId}"`, format, sessionId);
    const now = int(row.now, where, sessionId);
    const expires = intOrNull(row.lease_expires_at, where, sessionId);
    const owner = row.lease_owner as string | null;
    const epoch = int(row.lease_epoch, where, sessionId);
    const info: SessionInfo = {
      sessionId,
      agentId: String(row.agent_id),
      meta: decodeJson(row.meta, `${where}: meta`, sessionId),
      createdAt: new Date(int(row.created_at, where, sessionId)),
      updatedAt: new Date(int(row.updated_at, where, sessionId)),
      committedTurn: nat(row.committed_turn, where, sessionId),
      lastSeq: nat(row.last_seq, where, sessionId),
      lease: owner !== null && expires !== null && expires > now ? { owner, epoch, remainingMs: expires - now, expiresAt: new Date(expires) } : undefined,
    };
    return { info, row };
  }

  #event(row: SqlRow, sessionId: string, status: SessionEventStatus): StoredSessionEvent {
    const seq = int(row.seq, `an event row of session "${sessionId}"`, sessionId);
    const where = `polestar_events row ${seq} of session "${sessionId}"`;
    const format = int(row.format, where, sessionId);
    if (format > ROW_FORMAT) throw newerRow(`event ${seq} of session "${sessionId}"`, format, sessionId);
    return {
      seq,
      turn: nat(row.turn, where, sessionId),
      attempt: nat(row.attempt, where, sessionId),
      kind: String(row.kind),
      body: decodeJson(row.body, `${where}: body`, sessionId),
      status,
      at: new Date(int(row.at, where, sessionId)),
    };
  }

  async #checkpointList(db: SqlConn, sessionId: string): Promise<CheckpointInfo[]> {
    const { rows } = await db.run('SELECT turn, label, pinned, created_at FROM polestar_checkpoints WHERE session_id = ? ORDER BY turn', [sessionId]);
    return rows.map((row) => this.#checkpointInfo(row, sessionId));
  }

  #checkpointInfo(row: SqlRow, sessionId: string): CheckpointInfo {
    const where = `polestar_checkpoints row of session "${sessionId}"`;
    const turn = nat(row.turn, where, sessionId);
    const pinned = Number(row.pinned) === 1;
    const createdAt = new Date(int(row.created_at, where, sessionId));
    const label = row.label;
    return label === null || label === undefined ? { turn, pinned, createdAt } : { turn, label: String(label), pinned, createdAt };
  }

  /** {@inheritDoc SessionStore.load} */
  load(sessionId: string, options?: { readonly turn?: number }): Promise<LoadedSession> {
    return this.#op('load', async () => {
      const id = checkName(sessionId, 'sessionId');
      const wanted = checkLoad(options);
      return this.#read('load', async (db) => {
        const { info, row } = await this.#sessionRow(db, id);
        const turn = wanted ?? info.committedTurn;
        if (turn > info.committedTurn) throw noCheckpoint(id, turn, info.committedTurn);
        const cps = await db.run('SELECT turn, format, locals, label, pinned, created_at FROM polestar_checkpoints WHERE session_id = ? AND turn = ?', [id, turn]);
        const cpRow = cps.rows[0];
        if (cpRow === undefined) {
          if (wanted !== undefined) throw noCheckpoint(id, turn, info.committedTurn);
          throw corrupt(`session "${id}" has committed turn ${turn} but no checkpoint for it`, id);
        }
        const cpWhere = `polestar_checkpoints row (turn ${turn}) of session "${id}"`;
        const cpFormat = int(cpRow.format, cpWhere, id);
        if (cpFormat > ROW_FORMAT) throw newerRow(`the checkpoint of turn ${turn} of session "${id}"`, cpFormat, id);
        const checkpoint = { ...this.#checkpointInfo(cpRow, id), locals: decodeLocals(cpRow.locals, `${cpWhere}: locals`, id) };

        const counts = await db.run('SELECT COUNT(*) AS n, COALESCE(MAX(seq), 0) AS last FROM polestar_events WHERE session_id = ?', [id]);
        const n = int(counts.rows[0].n, 'polestar_events', id);
        const last = int(counts.rows[0].last, 'polestar_events', id);
        if (n !== info.lastSeq || last !== info.lastSeq) {
          throw corrupt(`the log of session "${id}" holds ${n} event(s) up to seq ${last}, but its row says the last seq is ${info.lastSeq} (a gap or a lost row)`, id);
        }

        const hist = await db.run(
          `SELECT ${EVENT_COLUMNS} FROM polestar_events e
           JOIN polestar_attempts a ON a.session_id = e.session_id AND a.turn = e.turn AND a.attempt = e.attempt
           WHERE e.session_id = ? AND e.turn <= ? AND a.status = 'committed' AND substr(e.kind, 1, 8) = 'history/'
             AND NOT EXISTS (SELECT 1 FROM polestar_rollbacks r WHERE r.session_id = e.session_id AND r.rev > a.end_rev AND r.to_turn < e.turn)
           ORDER BY e.seq`,
          [id, turn],
        );
        const history = hist.rows.map((r) => this.#event(r, id, 'committed'));

        let open: OpenAttempt | undefined;
        const o2 = this.#openOf(row, id);
        if (o2 !== undefined) {
          const started = await db.run('SELECT started_at FROM polestar_attempts WHERE session_id = ? AND turn = ? AND attempt = ?', [id, o2.turn, o2.attempt]);
          if (started.rows[0] === undefined) throw corrupt(`session "${id}" has turn ${o2.turn} attempt ${o2.attempt} open but no polestar_attempts row for it`, id);
          const evs = await db.run(
            `SELECT ${EVENT_COLUMNS} FROM polestar_events e WHERE e.session_id = ? AND e.turn = ? AND e.attempt = ? ORDER BY e.seq`,
            [id, o2.turn, o2.attempt],
          );
          open = {
            ...o2,
            startedAt: new Date(int(started.rows[0].started_at, `polestar_attempts row of session "${id}"`, id)),
            events: evs.rows.map((r) => this.#event(r, id, 'pending')),
          };
        }
        return { info, checkpoint, history, open, checkpoints: await this.#checkpointList(db, id) };
      });
    });
  }

  /** {@inheritDoc SessionStore.attemptStatus} */
  attemptStatus(sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
    return this.#op('attemptStatus', async () => {
      const id = checkName(sessionId, 'sessionId');
      const a = checkAttempt(attempt, 'attempt');
      // A write transaction: it reads only after any write of the session in flight ended
      // (PostgreSQL: under the session's row lock; SQLite: queued behind the write in flight
      // on this connection, and behind another connection's write lock by the busy retry).
      return this.#write('attemptStatus', async (db) => {
        const lock = this.#driver.dialect === 'postgres' ? ' FOR UPDATE' : '';
        const { rows } = await db.run(`SELECT format FROM polestar_sessions WHERE session_id = ?${lock}`, [id]);
        const row = rows[0];
        if (row === undefined) throw notFound(id);
        const format = int(row.format, `polestar_sessions row of session "${id}"`, id);
        if (format > ROW_FORMAT) throw newerRow(`session "${id}"`, format, id);
        const rec = await this.#attemptRow(db, id, a);
        if (rec === undefined) return 'absent';
        switch (rec.status) {
          case 'started':
            return 'open';
          case 'committed':
          case 'aborted':
            return rec.status;
          default:
            throw corrupt(`polestar_attempts row (turn ${a.turn}, attempt ${a.attempt}) of session "${id}" holds the status ${JSON.stringify(rec.status)}`, id);
        }
      });
    });
  }

  /** {@inheritDoc SessionStore.checkpoints} */
  checkpoints(sessionId: string): Promise<readonly CheckpointInfo[]> {
    return this.#op('checkpoints', async () => {
      const id = checkName(sessionId, 'sessionId');
      return this.#read('checkpoints', async (db) => {
        await this.#sessionRow(db, id);
        return this.#checkpointList(db, id);
      });
    });
  }

  /** {@inheritDoc SessionStore.list} */
  list(query?: ListQuery): Promise<SessionPage> {
    return this.#op('list', async () => {
      const q = checkList(query);
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
      const items = rows.slice(0, q.limit).map((row) => {
        const id = String(row.session_id);
        const w = `polestar_sessions row of session "${id}"`;
        const format = int(row.format, w, id);
        if (format > ROW_FORMAT) throw newerRow(`session "${id}"`, format, id);
        return {
          sessionId: id,
          agentId: String(row.agent_id),
          committedTurn: nat(row.committed_turn, w, id),
          updatedAt: new Date(int(row.updated_at, w, id)),
          meta: decodeJson(row.meta, `${w}: meta`, id),
        };
      });
      return rows.length > q.limit ? { items, cursor: encodeCursor(items[items.length - 1].sessionId) } : { items };
    });
  }

  /** {@inheritDoc SessionStore.delete} */
  delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
    return this.#op('delete', async () => {
      const id = checkName(sessionId, 'sessionId');
      const d = checkDelete(options);
      const mine = d.lease !== undefined && d.lease.sessionId === id ? d.lease : undefined;
      return this.#write('delete', async (db) => {
        const w = `polestar_sessions row of session "${id}"`;
        for (;;) {
          const { rows } = await db.run(
            `DELETE FROM polestar_sessions
             WHERE session_id = ? AND (? = 1 OR lease_owner IS NULL OR lease_expires_at <= {now} OR (lease_owner = ? AND lease_epoch = ?))
             RETURNING session_id`,
            [id, d.force ? 1 : 0, mine?.owner ?? null, mine?.epoch ?? null],
          );
          if (rows.length > 0) break;
          const found = await db.run('SELECT lease_owner, lease_epoch, lease_expires_at, {now} AS now FROM polestar_sessions WHERE session_id = ?', [id]);
          const row = found.rows[0];
          if (row === undefined) return false;
          const holder = liveHolder(row, w, id);
          // freed between the two statements (see acquire): try again
          if (holder !== undefined) throw busyLease(id, holder);
        }
        for (const table of ['polestar_events', 'polestar_attempts', 'polestar_checkpoints', 'polestar_rollbacks']) {
          await db.run(`DELETE FROM ${table} WHERE session_id = ?`, [id]);
        }
        return true;
      });
    });
  }

  /** {@inheritDoc SessionStore.events} */
  events(sessionId: string, query?: EventsQuery): AsyncIterable<StoredSessionEvent> {
    return { [Symbol.asyncIterator]: () => this.#iterate(sessionId, query) };
  }

  async *#iterate(sessionId: string, query: EventsQuery | undefined): AsyncGenerator<StoredSessionEvent> {
    const { id, afterSeq, limit } = await this.#op('events', async () => {
      const q = checkEventsQuery(query);
      return { id: checkName(sessionId, 'sessionId'), ...q };
    });
    let seq = afterSeq;
    let left = limit;
    let first = true;
    while (left > 0) {
      const page = await this.#op('events', () =>
        this.#read('events', async (db) => {
          if (first) await this.#sessionRow(db, id);
          const { rows } = await db.run(
            `SELECT ${EVENT_COLUMNS}, a.status AS status,
               CASE WHEN a.status = 'committed' AND EXISTS (SELECT 1 FROM polestar_rollbacks r
                 WHERE r.session_id = e.session_id AND r.rev > a.end_rev AND r.to_turn < e.turn) THEN 1 ELSE 0 END AS superseded
             FROM polestar_events e
             LEFT JOIN polestar_attempts a ON a.session_id = e.session_id AND a.turn = e.turn AND a.attempt = e.attempt
             WHERE e.session_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
            [id, seq, Math.min(left, EVENT_PAGE)],
          );
          return rows.map((row) => {
            const n = int(row.seq, `an event row of session "${id}"`, id);
            const status = statusOf(row.status, Number(row.superseded) === 1);
            if (status === undefined) throw corrupt(`polestar_events row ${n} of session "${id}" belongs to turn ${String(row.turn)} attempt ${String(row.attempt)}, which has no valid polestar_attempts row`, id);
            return this.#event(row, id, status);
          });
        }),
      );
      first = false;
      for (const e of page) {
        if (e.seq !== seq + 1) throw corrupt(`the log of session "${id}" jumps from seq ${seq} to ${e.seq}`, id);
        seq = e.seq;
        left -= 1;
        yield e;
      }
      if (page.length < EVENT_PAGE) return;
    }
  }

  /** {@inheritDoc SessionStore.close} */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#closed = true;
      this.#closing = (async () => {
        await Promise.allSettled([...this.#inflight]);
        await this.#driver.close();
      })();
    }
    return this.#closing;
  }
}

/** The live lease of a session row, or `undefined` when it is free or expired. */
function liveHolder(row: SqlRow, where: string, sessionId: string): { owner: string; epoch: number; remainingMs: number } | undefined {
  const expires = intOrNull(row.lease_expires_at, where, sessionId);
  const now = int(row.now, where, sessionId);
  if (row.lease_owner === null || row.lease_owner === undefined || expires === null || expires <= now) return undefined;
  return { owner: String(row.lease_owner), epoch: int(row.lease_epoch, where, sessionId), remainingMs: expires - now };
}

function statusOf(status: unknown, superseded: boolean): SessionEventStatus | undefined {
  switch (status) {
    case 'started':
      return 'pending';
    case 'aborted':
      return 'aborted';
    case 'committed':
      return superseded ? 'superseded' : 'committed';
    default:
      return undefined;
  }
}

/** An integer column (`pg` reads bigint as text), or `CORRUPT_ROW`. */
function int(value: unknown, where: string, sessionId: string | undefined): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?[0-9]+$/.test(value) ? Number(value) : typeof value === 'bigint' ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw corrupt(`${where} holds ${JSON.stringify(String(value))} where an integer belongs`, sessionId);
  return n;
}

function intOrNull(value: unknown, where: string, sessionId: string | undefined): number | null {
  return value === null || value === undefined ? null : int(value, where, sessionId);
}

function nat(value: unknown, where: string, sessionId: string | undefined): number {
  const n = int(value, where, sessionId);
  if (n < 0) throw corrupt(`${where} holds the negative number ${n}`, sessionId);
  return n;
}
