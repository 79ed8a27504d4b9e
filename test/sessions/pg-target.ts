/**
 * Where the PostgreSQL tests run. `POLESTAR_TEST_PG_URL` names a server (any database on it:
 * each test file creates its own `polestar_<random>` database there and drops it after).
 * Without it, the default postgres://postgres@127.0.0.1:5432/postgres is tried. The tests are
 * mandatory when CI is set or the variable is given (an unreachable server fails them), and
 * skipped with a line saying how to run them otherwise.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_URL_ENV = 'POLESTAR_TEST_PG_URL';
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export type PgTarget =
  | { readonly ok: true; readonly adminUrl: string }
  | { readonly ok: false; readonly required: boolean; readonly reason: string };

const isCi = (): boolean => {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

/** Probes the server once (3 s connect timeout). */
export async function pgTarget(): Promise<PgTarget> {
  const given = process.env[PG_URL_ENV];
  const adminUrl = given !== undefined && given !== '' ? given : DEFAULT_PG_URL;
  const required = isCi() || (given !== undefined && given !== '');
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true, adminUrl };
  } catch (err) {
    const why = err instanceof Error ? err.message || err.name : String(err);
    return {
      ok: false,
      required,
      reason: required
        ? `PostgreSQL is required (${isCi() ? 'CI is set' : `${PG_URL_ENV} is set`}) but ${adminUrl} is unreachable: ${why}`
        : `PostgreSQL store tests skipped: no PostgreSQL at ${adminUrl} (${why}). Run them with ${PG_URL_ENV}=postgres://user@host:5432/db npm test (CI=true makes them mandatory).`,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh database on the target server; `drop()` removes it (and its connections). */
export async function createTestDatabase(adminUrl: string, tag: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `polestar_${tag}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * `describe` when PostgreSQL is reachable; otherwise `describe.skip` with the line saying
 * how to run the tests, or (when they are required) one failing test naming the reason.
 */
export function describePg(target: PgTarget): (name: string, fn: () => void) => void {
  if (target.ok) return describe;
  if (!target.required) {
    console.warn(target.reason);
    return describe.skip;
  }
  return (name: string) =>
    describe(name, () => {
      test('PostgreSQL is reachable', () => {
        throw new Error(target.reason);
      });
    });
}
