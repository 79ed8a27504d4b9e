/**
 * @internal The tables of the SQL session stores and their migration. One schema for
 * SQLite and PostgreSQL: times are integer milliseconds on the store's clock, bodies,
 * meta and locals are JSON text (never `jsonb`: it refuses `\u0000` and lone surrogates and
 * reorders keys).
 */
import { SessionError } from '../../errors.js';
import { corrupt } from '../failures.js';
import type { SqlConn, SqlDialect } from './driver.js';

/**
 * @internal The schema version this code writes and reads. Older code refuses a newer
 * schema (`UNSUPPORTED_FORMAT`), so every change that older code would misread bumps it.
 */
export const SCHEMA_VERSION = 2;

/** @internal Key of the PostgreSQL advisory transaction lock that serializes migrations. */
const MIGRATION_LOCK = "hashtext('polestar-di/sessions/migrate')";

function v1(dialect: SqlDialect): string[] {
  const id = dialect === 'postgres' ? 'text COLLATE "C" NOT NULL' : 'text NOT NULL';
  return [
    `CREATE TABLE polestar_sessions (
      session_id ${id} PRIMARY KEY,
      agent_id text NOT NULL,
      format integer NOT NULL,
      meta text NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      committed_turn integer NOT NULL,
      last_seq bigint NOT NULL,
      rev bigint NOT NULL,
      lease_owner text,
      lease_epoch bigint NOT NULL,
      lease_expires_at bigint,
      lease_ttl_ms bigint,
      open_turn integer,
      open_attempt integer,
      open_epoch bigint
    )`,
    `CREATE INDEX polestar_sessions_by_agent ON polestar_sessions (agent_id, session_id)`,
    `CREATE TABLE polestar_events (
      session_id ${id},
      seq bigint NOT NULL,
      turn integer NOT NULL,
      attempt integer NOT NULL,
      kind text NOT NULL,
      format integer NOT NULL,
      body text NOT NULL,
      at bigint NOT NULL,
      PRIMARY KEY (session_id, seq)
    )`,
    `CREATE INDEX polestar_events_by_attempt ON polestar_events (session_id, turn, attempt, seq)`,
    `CREATE TABLE polestar_attempts (
      session_id ${id},
      turn integer NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL,
      epoch bigint NOT NULL,
      started_at bigint NOT NULL,
      ended_at bigint,
      end_rev bigint,
      end_seq bigint,
      reason text,
      PRIMARY KEY (session_id, turn, attempt)
    )`,
    `CREATE TABLE polestar_checkpoints (
      session_id ${id},
      turn integer NOT NULL,
      format integer NOT NULL,
      locals text NOT NULL,
      label text,
      pinned integer NOT NULL,
      created_at bigint NOT NULL,
      PRIMARY KEY (session_id, turn)
    )`,
    `CREATE TABLE polestar_rollbacks (
      session_id ${id},
      rev bigint NOT NULL,
      from_turn integer NOT NULL,
      to_turn integer NOT NULL,
      epoch bigint NOT NULL,
      at bigint NOT NULL,
      PRIMARY KEY (session_id, rev)
    )`,
  ];
}

/**
 * Version 2: the incarnation of the lease's owner, recorded with the lease (`NULL` for a
 * lease taken without one, and for every lease of a version 1 database); the application's
 * key of a turn, recorded with its attempt by `begin` (`NULL` for a turn without one, and for
 * every attempt of a version 1 database). A keyed `begin` looks the key up among the attempts
 * of a few turns of one session: the primary key `(session_id, turn, attempt)` bounds that
 * scan, so no index of its own.
 */
function v2(): string[] {
  return ['ALTER TABLE polestar_sessions ADD COLUMN lease_incarnation text', 'ALTER TABLE polestar_attempts ADD COLUMN turn_key text'];
}

/**
 * The handoff and cancel requests (one of each kind per session at most), read by the lease
 * holder: created when missing, without raising the schema version, so a process of the
 * previous version keeps working on the same database (it never reads them: it never hands a
 * session off). `holder` and `epoch` name the lease a request was addressed to (a handoff:
 * the live lease asked; a cancel: the lease owner when it was recorded and the epoch that
 * began the attempt), so a request left behind by a process that does not clean them up
 * never applies to a later lease.
 */
function requestsTable(dialect: SqlDialect): string {
  const id = dialect === 'postgres' ? 'text COLLATE "C" NOT NULL' : 'text NOT NULL';
  return `CREATE TABLE IF NOT EXISTS polestar_requests (
    session_id ${id},
    kind text NOT NULL,
    holder text,
    epoch bigint,
    requester text,
    until_at bigint,
    turn integer,
    attempt integer,
    reason text,
    at bigint NOT NULL,
    PRIMARY KEY (session_id, kind)
  )`;
}

/** Creates the requests table when it is missing (looked up first: a role that may not create tables works on a database that has it). */
async function ensureRequestsTable(c: SqlConn, dialect: SqlDialect): Promise<void> {
  const { rows } = await c.run(
    dialect === 'postgres'
      ? "SELECT to_regclass('polestar_requests') IS NOT NULL AS present"
      : "SELECT COUNT(*) AS present FROM sqlite_master WHERE type = 'table' AND name = 'polestar_requests'",
  );
  const present = rows[0]?.present;
  if (present === true || present === 1 || present === '1' || present === 1n) return;
  await c.run(requestsTable(dialect));
}

/** @internal Migrations by the version they lead to. */
const migrations: Record<number, (dialect: SqlDialect) => string[]> = { 1: v1, 2: v2 };

/**
 * @internal Creates or upgrades the tables in one transaction (PostgreSQL: under an advisory
 * transaction lock, so processes starting together do not race). A schema written by a
 * newer polestar-di is refused with `UNSUPPORTED_FORMAT` before anything is written.
 */
export async function migrate(c: SqlConn, dialect: SqlDialect, label: string): Promise<void> {
  if (dialect === 'postgres') await c.run(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
  await c.run('CREATE TABLE IF NOT EXISTS polestar_meta (key text PRIMARY KEY, value text NOT NULL)');
  const { rows } = await c.run("SELECT value FROM polestar_meta WHERE key = 'schema'");
  let current = 0;
  if (rows.length > 0) {
    const raw = rows[0].value;
    current = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(current) || current < 1) throw corrupt(`polestar_meta.schema of ${label} holds ${JSON.stringify(raw)}`, undefined);
  }
  if (current > SCHEMA_VERSION) {
    throw new SessionError(
      'UNSUPPORTED_FORMAT',
      `unsupported format: the session tables of ${label} are at schema ${current}, written by a newer polestar-di; this version knows schema ${SCHEMA_VERSION} at most. Upgrade polestar-di in this process (nothing was written).`,
    );
  }
  if (current < SCHEMA_VERSION) {
    for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
      for (const statement of migrations[v](dialect)) await c.run(statement);
    }
    if (current === 0) await c.run("INSERT INTO polestar_meta (key, value) VALUES ('schema', ?)", [String(SCHEMA_VERSION)]);
    else await c.run("UPDATE polestar_meta SET value = ? WHERE key = 'schema'", [String(SCHEMA_VERSION)]);
  }
  await ensureRequestsTable(c, dialect);
}
