/**
 * Bug: a store argument whose getter (or proxy trap) threw was reported by the SQL stores
 * as `STORE_ERROR` ("store.create() failed on the SQLite file …"), as if the database had
 * failed, and by the memory store as the getter's own error; and `commit` / `abort` took
 * `events: null` for "no events", so a malformed commit was written. Fixed: every store
 * reports hostile input as a `TypeError` naming the argument (its `cause` is what was
 * thrown), with nothing written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore } from '../../src/sessions/store/memory.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import type { SessionStore } from '../../src/sessions/store/contract.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-hostile-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: [string, () => SessionStore][] = [
  ['MemorySessionStore', () => new MemorySessionStore()],
  ['SqliteSessionStore', () => new SqliteSessionStore({ path: join(dir, `${Math.random().toString(36).slice(2)}.db`) })],
];

const throwing = (): object =>
  new Proxy(
    {},
    {
      get: () => {
        throw new Error('getter boom');
      },
    },
  );

describe.each(stores)('%s', (_name, make) => {
  test('an argument whose getter throws is a TypeError naming it, not a store failure', async () => {
    const store = make();
    const created = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 60_000, locals: [] });
    for (const [what, call] of [
      ['input', () => store.create(throwing() as never)],
      ['options', () => store.acquire('s', throwing() as never)],
      ['lease', () => store.renew(throwing() as never)],
      ['lease', () => store.begin(throwing() as never)],
      ['query', () => store.list(throwing() as never)],
    ] as const) {
      const err = await call().then(
        () => new Error('resolved'),
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toBe(`${what} could not be read: getter boom.`);
      expect((err.cause as Error).message).toBe('getter boom');
    }
    expect((await store.load('s')).info.lease).toMatchObject({ owner: created.owner, epoch: 1 });
    await store.close();
  });

  test('commit and abort with events: null are a TypeError and write nothing', async () => {
    const store = make();
    const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 60_000, locals: [] });
    const a = await store.begin(lease);
    await expect(store.commit(lease, { ...a, events: null as never, locals: [] })).rejects.toThrow(/input\.events must be an array/);
    await expect(store.abort(lease, { ...a, events: null as never })).rejects.toThrow(/input\.events must be an array/);
    const loaded = await store.load('s');
    expect(loaded.info.committedTurn).toBe(0);
    expect(loaded.open).toMatchObject({ turn: 1, attempt: 1 });
    await store.close();
  });
});
