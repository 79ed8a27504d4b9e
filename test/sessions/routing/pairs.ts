/**
 * Two servers of different owners on one store, standing in for two processes: the memory
 * store shared, two SQLite store objects on one file (polling every 20 ms), two PostgreSQL
 * stores on one database of their own (LISTEN/NOTIFY). PostgreSQL is skipped when unreachable, unless it
 * is required (CI): then one failing test says why.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore, Sessions, type DurableSession, type SessionStore, type SessionsPluginOptions } from '../../../src/index.js';
import { PostgresSessionStore } from '../../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../../src/sessions/sqlite.js';
import { serverOn, type Harness } from '../harness.js';
import { createTestDatabase, pgTarget } from '../pg-target.js';

/** One kind of store, able to make two store objects on one backing store. */
export interface StoreKind {
  readonly name: 'memory' | 'SQLite' | 'PostgreSQL';
  pair(): Promise<[SessionStore, SessionStore]>;
}

/** The kinds to run on, plus the cleanup of what they made (call it in afterAll). */
export async function storeKinds(tag: string): Promise<{ kinds: StoreKind[]; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `polestar-${tag}-`));
  const target = await pgTarget();
  const dbs: { url: string; drop(): Promise<void> }[] = [];
  let files = 0;
  const kinds: StoreKind[] = [
    {
      name: 'memory',
      pair: async () => {
        const s = new MemorySessionStore();
        return [s, s];
      },
    },
    {
      name: 'SQLite',
      pair: async () => {
        const path = join(dir, `${tag}-${++files}.db`);
        return [new SqliteSessionStore({ path, pollMs: 20 }), new SqliteSessionStore({ path, pollMs: 20 })];
      },
    },
  ];
  if (target.ok) {
    kinds.push({
      name: 'PostgreSQL',
      // A database per pair: each test starts from empty tables.
      pair: async () => {
        const db = await createTestDatabase(target.adminUrl, tag);
        dbs.push(db);
        return [new PostgresSessionStore({ connectionString: db.url, max: 4 }), new PostgresSessionStore({ connectionString: db.url, max: 4 })];
      },
    });
  } else if (target.required) {
    test('PostgreSQL is reachable', () => {
      throw new Error(target.reason);
    });
  }
  return {
    kinds,
    cleanup: async () => {
      rmSync(dir, { recursive: true, force: true });
      for (const db of dbs) await db.drop();
    },
  };
}

/** Makes pairs of "processes" on one kind of store, and disposes them after each test. */
export class Pairs {
  readonly #kind: StoreKind;
  #harnesses: Harness[] = [];
  #stores: SessionStore[] = [];

  constructor(kind: StoreKind) {
    this.#kind = kind;
  }

  /** Servers with owners `a` and `b` on one store. */
  async two(a: SessionsPluginOptions = {}, b: SessionsPluginOptions = {}): Promise<[Sessions, Sessions]> {
    const [sa, sb] = await this.#kind.pair();
    this.#stores.push(sa, sb);
    const ha = await serverOn(sa, { owner: 'a', leaseTtlMs: 10_000, ...a });
    const hb = await serverOn(sb, { owner: 'b', leaseTtlMs: 10_000, ...b });
    this.#harnesses.push(ha, hb);
    return [ha.ctx.get(Sessions), hb.ctx.get(Sessions)];
  }

  async dispose(): Promise<void> {
    for (const h of this.#harnesses) await h.server.dispose();
    for (const s of new Set(this.#stores)) await s.close();
    this.#harnesses = [];
    this.#stores = [];
  }
}

/** One turn appending a user message. */
export const say = (d: DurableSession, text: string): Promise<void> => d.turn((_t, s) => void s.history.append({ role: 'user', content: text }));
