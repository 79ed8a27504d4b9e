/**
 * The PostgreSQL store's named prepared statements (`preparedStatements`, on by default): the
 * same statement on every connection of a pool, a statement the server lost behind the
 * client's back (as PgBouncer before 1.21 does in transaction mode) failing nothing, and
 * `preparedStatements: false` naming nothing. Also the attempt numbers `begin` gives without
 * looking for the highest attempt first, on SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { SessionStore } from '../../src/index.js';
import { PostgresSessionStore, type PgPoolClientLike, type PgPoolLike } from '../../src/sessions/postgres.js';
import type { PgQueryConfig } from '../../src/sessions/store/sql/pg-driver.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
const url = (): string => (db as { url: string }).url;
let n = 0;
const sid = (tag: string): string => `prep-${tag}-${++n}`;
const create = (store: SessionStore, sessionId: string) => store.create({ sessionId, agentId: 'a', owner: 'me', ttlMs: 60_000, locals: [] });

interface Sent {
  /** The proxy's number of the client that ran it (1, 2, … in connect order of new clients). */
  readonly client: number;
  /** The statement's name, for a named one. */
  readonly name: string | undefined;
  readonly text: string;
}

/**
 * A structural pool over a real pg.Pool that records every statement with the client that ran
 * it; `beforeHandOut` runs on a client each time it is checked out.
 */
function recordingPool(pool: pg.Pool, beforeHandOut?: (c: pg.PoolClient) => Promise<void>): PgPoolLike & { sent: Sent[] } {
  const ids = new WeakMap<object, number>();
  let next = 0;
  const sent: Sent[] = [];
  return {
    sent,
    async connect(): Promise<PgPoolClientLike> {
      const client = await pool.connect();
      if (!ids.has(client)) ids.set(client, ++next);
      const id = ids.get(client) as number;
      if (beforeHandOut !== undefined) await beforeHandOut(client);
      return {
        query(text: string | PgQueryConfig, values?: unknown[]) {
          if (typeof text === 'string') {
            sent.push({ client: id, name: undefined, text });
            return client.query(text, values);
          }
          sent.push({ client: id, name: text.name, text: text.text });
          return client.query({ name: text.name, text: text.text, values: text.values });
        },
        release: (err?: Error | boolean) => client.release(err),
      };
    },
  };
}

/** One turn through the store API: begin, commit with one event. */
async function turn(store: SessionStore, lease: Awaited<ReturnType<typeof create>>, body: string): Promise<void> {
  const a = await store.begin(lease);
  await store.commit(lease, { turn: a.turn, attempt: a.attempt, events: [{ kind: 'history/append', body: { role: 'user', content: body } }], locals: [] });
}

describePg(target)('PostgreSQL named prepared statements', () => {
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'prepared');
  });
  afterAll(async () => {
    await db?.drop();
  });

  test('a pool of 2 connections prepares the same statements on each, under the same names, and both commit', async () => {
    const raw = new pg.Pool({ connectionString: url(), max: 2 });
    raw.on('error', () => undefined);
    const pool = recordingPool(raw);
    const store = new PostgresSessionStore({ pool });
    try {
      const leases = await Promise.all([create(store, sid('a')), create(store, sid('b'))]);
      // Two sessions' turns at once hold both connections at once, again and again.
      for (let i = 1; i <= 4; i++) await Promise.all(leases.map((l) => turn(store, l, `m${i}`)));
      const commitNames = (client: number): Set<string> =>
        new Set(pool.sent.filter((s) => s.client === client && s.name !== undefined && s.text.includes('INSERT INTO polestar_checkpoints')).map((s) => s.name as string));
      expect(new Set(pool.sent.map((s) => s.client))).toEqual(new Set([1, 2]));
      const one = commitNames(1);
      expect(one.size).toBeGreaterThan(0);
      expect([...one].every((name) => /^polestar_[0-9a-f]{24}$/.test(name))).toBe(true);
      expect(commitNames(2)).toEqual(one);
      // Each server connection holds the statements it was sent (prepared there, by name).
      const held: string[][] = [];
      const clients = await Promise.all([raw.connect(), raw.connect()]);
      for (const c of clients) {
        held.push((await c.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'polestar\\_%'")).rows.map((r: { name: string }) => r.name));
        c.release();
      }
      for (const names of held) for (const name of one) expect(names).toContain(name);
      for (const l of leases) {
        const loaded = await store.load(l.sessionId);
        expect(loaded.info.committedTurn).toBe(4);
        expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['m1', 'm2', 'm3', 'm4']);
      }
    } finally {
      await store.close();
      await raw.end();
    }
  });

  test('a statement the server no longer has (a pooler handing out another connection) fails nothing: the store stops naming statements', async () => {
    const raw = new pg.Pool({ connectionString: url(), max: 1 });
    raw.on('error', () => undefined);
    // What PgBouncer before 1.21 does in transaction mode: the client keeps believing its
    // statements are prepared while its server connection is another one (here: the same
    // one, emptied).
    const pool = recordingPool(raw, async (c) => {
      await c.query('DEALLOCATE ALL');
    });
    const store = new PostgresSessionStore({ pool });
    try {
      const lease = await create(store, sid('lost'));
      await turn(store, lease, 'm1');
      await turn(store, lease, 'm2');
      await turn(store, lease, 'm3');
      const loaded = await store.load(lease.sessionId);
      expect(loaded.info.committedTurn).toBe(3);
      expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['m1', 'm2', 'm3']);
      expect(await store.attemptStatus(lease.sessionId, { turn: 2, attempt: 1 })).toBe('committed');
      expect(await store.attemptStatus(lease.sessionId, { turn: 2, attempt: 2 })).toBe('absent');
      // Once a statement was lost, every later statement goes unnamed.
      const lastNamed = pool.sent.map((s) => s.name !== undefined).lastIndexOf(true);
      expect(lastNamed).toBeGreaterThanOrEqual(0);
      expect(pool.sent.slice(lastNamed + 1).filter((s) => s.text.includes('polestar_checkpoints')).length).toBeGreaterThan(0);
    } finally {
      await store.close();
      await raw.end();
    }
  });

  test('preparedStatements: false sends every statement unnamed; a value that is not a boolean is a TypeError', async () => {
    const raw = new pg.Pool({ connectionString: url(), max: 1 });
    raw.on('error', () => undefined);
    const pool = recordingPool(raw);
    const store = new PostgresSessionStore({ pool, preparedStatements: false });
    try {
      const lease = await create(store, sid('off'));
      await turn(store, lease, 'm1');
      expect(pool.sent.length).toBeGreaterThan(3);
      expect(pool.sent.filter((s) => s.name !== undefined)).toEqual([]);
    } finally {
      await store.close();
      await raw.end();
    }
    expect(() => new PostgresSessionStore({ pool, preparedStatements: 'yes' as unknown as boolean })).toThrow(/options\.preparedStatements must be a boolean, got/);
  });
});

/** The attempt numbers of `begin`, whatever attempts the next turn has already. */
function attemptNumbers(name: string, make: () => Promise<{ store: SessionStore; end(): Promise<void> }>): void {
  test(`${name}: the next turn's begin opens attempt 1, or the one after the highest after aborts and rollbacks`, async () => {
    const { store, end } = await make();
    try {
      const lease = await create(store, sid(name));
      const first = await store.begin(lease);
      expect(first).toMatchObject({ turn: 1, attempt: 1 });
      await store.abort(lease, { turn: 1, attempt: 1, events: [], reason: 'failed' });
      const second = await store.begin(lease);
      expect(second).toMatchObject({ turn: 1, attempt: 2 });
      await store.commit(lease, { turn: 1, attempt: 2, events: [], locals: [] });
      expect(await store.begin(lease)).toMatchObject({ turn: 2, attempt: 1 });
      await store.commit(lease, { turn: 2, attempt: 1, events: [], locals: [] });
      // Back to turn 1: turn 2 comes again and takes the attempt after its superseded one.
      await store.rollback(lease, 1);
      const again = await store.begin(lease);
      expect(again).toMatchObject({ turn: 2, attempt: 2 });
      await store.commit(lease, { turn: 2, attempt: 2, events: [], locals: [] });
      expect(await store.attemptStatus?.(lease.sessionId, { turn: 2, attempt: 1 })).toBe('committed');
      expect(await store.attemptStatus?.(lease.sessionId, { turn: 2, attempt: 2 })).toBe('committed');
      expect(await store.begin(lease)).toMatchObject({ turn: 3, attempt: 1 });
    } finally {
      await end();
    }
  });
}

describe('begin without a look at the highest attempt', () => {
  attemptNumbers('sqlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'polestar-prepared-'));
    const store = new SqliteSessionStore({ path: join(dir, 's.db') });
    return {
      store,
      async end() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

describePg(target)('begin without a look at the highest attempt, on PostgreSQL', () => {
  let pgDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  beforeAll(async () => {
    if (target.ok) pgDb = await createTestDatabase(target.adminUrl, 'attempts');
  });
  afterAll(async () => {
    await pgDb?.drop();
  });
  attemptNumbers('postgres', async () => {
    const store = new PostgresSessionStore({ connectionString: (pgDb as { url: string }).url, max: 2 });
    return { store, end: () => store.close() };
  });
});
