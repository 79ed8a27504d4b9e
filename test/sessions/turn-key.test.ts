/**
 * `turn(fn, { key })`: a turn whose key is the key of a committed turn of the session (among
 * its last `keepCheckpoints` turns, on the current timeline) rejects with
 * `TURN_ALREADY_COMMITTED` without running `fn` and without changing the session or the
 * store; on the memory, SQLite and PostgreSQL stores (see pg-target.ts for when the
 * PostgreSQL tests run), through the sessions API and at the store level.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { MemorySessionStore, SessionError, Sessions, type DurableSession, type SessionStore, type SessionsPluginOptions } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { SESSION_STORE_CONFORMANCE_CHECKS, runSessionStoreConformance } from '../../src/testing/index.js';
import { serverOn } from './harness.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-turn-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const say = (content: string) => ({ role: 'user' as const, content });
const contents = (s: DurableSession): unknown[] => s.session.history.messages.map((m) => m.content);

/** A turn that appends `content` and counts its runs. */
function message(content: string, runs: { n: number }) {
  return (_c: unknown, session: DurableSession['session']) => {
    runs.n += 1;
    session.history.append(say(content));
    return content;
  };
}

async function caught(p: Promise<unknown>): Promise<SessionError & TypeError> {
  try {
    await p;
  } catch (err) {
    return err as SessionError & TypeError;
  }
  throw new Error('expected a rejection');
}

/** The store's view of a session: every event as [turn, attempt, status, content]. */
async function stored(store: SessionStore, id: string): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for await (const e of store.events(id)) out.push([e.turn, e.attempt, e.status, (e.body as { content?: unknown }).content]);
  return out;
}

/** A store (sharing `backend`'s data when `fresh` makes new objects on one backend). */
type Backend = { make: () => SessionStore; shared: boolean };

function keyTests(backend: () => Backend): void {
  let n = 0;
  const id = (tag: string) => `${tag}-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const open = async (store: SessionStore, options: SessionsPluginOptions = {}) => serverOn(store, options);

  test('a turn with the key of a committed turn rejects TURN_ALREADY_COMMITTED (with turn) without running fn, and changes nothing', async () => {
    const store = backend().make();
    const { server, ctx } = await open(store);
    const sid = id('dup');
    const s = await ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    const runs = { n: 0 };
    expect(await s.turn(message('refund my order', runs), { key: 'msg-1' })).toBe('refund my order');
    expect(await s.turn(message('thanks', runs), { key: 'msg-2' })).toBe('thanks');
    const before = await stored(store, sid);
    const err = await caught(s.turn(message('refund my order', runs), { key: 'msg-1' }));
    expect(err).toBeInstanceOf(SessionError);
    expect(err).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1, sessionId: sid });
    expect(err.message).toMatch(new RegExp(`turn 1 of session "${sid}" was committed with the key "msg-1".*do not send it again`));
    expect(runs.n).toBe(2);
    expect(s.committedTurn).toBe(2);
    expect(contents(s)).toEqual(['refund my order', 'thanks']);
    expect(await stored(store, sid)).toEqual(before);
    // no attempt was opened: the next turn is attempt 1 of turn 3
    expect(await s.turn(message('bye', runs), { key: 'msg-3' })).toBe('bye');
    expect((await stored(store, sid)).at(-1)).toEqual([3, 1, 'committed', 'bye']);
    // a turn without a key is never refused
    await s.turn(message('refund my order', runs));
    expect(contents(s)).toEqual(['refund my order', 'thanks', 'bye', 'refund my order']);
    await server.dispose();
    await store.close();
  });

  test('the key is stored with the turn: another process resuming the session refuses it too', async () => {
    const b = backend();
    const first = b.make();
    const one = await open(first, { owner: 'process-1' });
    const sid = id('resume');
    const s = await one.ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    const runs = { n: 0 };
    await s.turn(message('hello', runs), { key: 'client-42' });
    await one.server.dispose();
    const second = b.shared ? b.make() : first;
    const two = await open(second, { owner: 'process-2' });
    const again = await two.ctx.get(Sessions).resume({ agentId: sid, sessionId: sid });
    expect(await caught(again.turn(message('hello', runs), { key: 'client-42' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1 });
    expect(runs.n).toBe(1);
    expect(contents(again)).toEqual(['hello']);
    await two.server.dispose();
    await first.close();
    if (second !== first) await second.close();
  });

  test('only committed turns count: a keyed turn that failed runs again with its key', async () => {
    const store = backend().make();
    const { server, ctx } = await open(store);
    const sid = id('failed');
    const s = await ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    await expect(
      s.turn(
        () => {
          throw new Error('model timeout');
        },
        { key: 'k' },
      ),
    ).rejects.toThrow('model timeout');
    const runs = { n: 0 };
    expect(await s.turn(message('retried', runs), { key: 'k' })).toBe('retried');
    expect(runs.n).toBe(1);
    expect(await caught(s.turn(message('retried', runs), { key: 'k' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1 });
    await server.dispose();
    await store.close();
  });

  test('the key is matched among the last keepCheckpoints turns (at least the last one)', async () => {
    const store = backend().make();
    const { server, ctx } = await open(store, { keepCheckpoints: 2 });
    const sid = id('window');
    const s = await ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    const runs = { n: 0 };
    await s.turn(message('one', runs), { key: 'k1' });
    await s.turn(message('two', runs), { key: 'k2' });
    await s.turn(message('three', runs), { key: 'k3' });
    // turns 2 and 3 are the last two
    expect(await caught(s.turn(message('two', runs), { key: 'k2' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    expect(await caught(s.turn(message('three', runs), { key: 'k3' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 3 });
    // turn 1 is out of the window: its key runs again
    expect(await s.turn(message('one again', runs), { key: 'k1' })).toBe('one again');
    expect(s.committedTurn).toBe(4);
    await server.dispose();

    const zero = await open(store, { keepCheckpoints: 0 });
    const z = await zero.ctx.get(Sessions).resume({ agentId: sid, sessionId: sid });
    expect(await caught(z.turn(message('one again', runs), { key: 'k1' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 4 });
    expect(await z.turn(message('three again', runs), { key: 'k3' })).toBe('three again');
    await zero.server.dispose();
    await store.close();
  });

  test('a turn superseded by a rollback no longer counts; the turn that replaces it does', async () => {
    const store = backend().make();
    const { server, ctx } = await open(store);
    const sid = id('rollback');
    const s = await ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    const runs = { n: 0 };
    await s.turn(message('one', runs), { key: 'k1' });
    await s.turn(message('two', runs), { key: 'k2' });
    await s.rollback(1);
    expect(await s.turn(message('two, after the rollback', runs), { key: 'k2' })).toBe('two, after the rollback');
    expect(await caught(s.turn(message('two', runs), { key: 'k2' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    expect(await caught(s.turn(message('one', runs), { key: 'k1' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1 });
    // back before both: neither key counts any more
    await s.rollback(0);
    expect(await s.turn(message('two', runs), { key: 'k2' })).toBe('two');
    expect(await s.turn(message('one', runs), { key: 'k1' })).toBe('one');
    expect(contents(s)).toEqual(['two', 'one']);
    await server.dispose();
    await store.close();
  });

  test('a malformed key or options object rejects with a TypeError naming the option, runs nothing and writes nothing', async () => {
    const store = backend().make();
    const { server, ctx } = await open(store);
    const sid = id('hostile');
    const s = await ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    const runs = { n: 0 };
    const throwing = Object.defineProperty({}, 'key', {
      get() {
        throw new Error('boom');
      },
    });
    const cases: [unknown, RegExp][] = [
      [5, /options must be an object such as \{ key \}, got the number 5/],
      [null, /options must be an object/],
      [['k'], /options must be an object/],
      [{ key: 5 }, /options\.key must be a string, got the number 5/],
      [{ key: '' }, /options\.key must not be empty/],
      [{ key: 'a\u0000b' }, /options\.key must not contain NUL/],
      [{ key: 'x\ud800' }, /options\.key must be well-formed Unicode/],
      [{ key: 'x'.repeat(1025) }, /options\.key must be at most 1024 characters/],
      [{ key: new String('k') }, /options\.key must be a string/],
      [throwing, /options\.key could not be read: boom/],
    ];
    for (const [options, message_] of cases) {
      let p: Promise<unknown> | undefined;
      expect(() => (p = s.turn(message('x', runs), options as never))).not.toThrow();
      const err = await caught(p as Promise<unknown>);
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toMatch(new RegExp(`durableSession\\.turn\\(fn, options\\) on session "${sid}"`));
      expect(err.message).toMatch(message_);
    }
    expect(runs.n).toBe(0);
    expect(await stored(store, sid)).toEqual([]);
    expect((await store.load(sid)).info.committedTurn).toBe(0);
    // a key of 1024 characters, and one with any well-formed characters, are fine
    await s.turn(message('long', runs), { key: 'x'.repeat(1024) });
    await s.turn(message('emoji', runs), { key: '😀 \' " ; DROP TABLE' });
    expect(await caught(s.turn(message('emoji', runs), { key: '😀 \' " ; DROP TABLE' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    expect(await caught(s.turn(message('long', runs), { key: 'x'.repeat(1024) }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1 });
    await server.dispose();
    await store.close();
  });

  test('on a store that does not record keys (turnKeys not true), a keyed turn rejects with a TypeError and runs nothing', async () => {
    const inner = backend().make();
    // a store written before turn keys existed
    const store = new Proxy(inner, {
      get: (t, k) => {
        if (k === 'turnKeys') return undefined;
        const v: unknown = Reflect.get(t, k);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const { server, ctx } = await open(store);
    const sid = id('nokeys');
    const s = await ctx.get(Sessions).create({ agentId: sid, sessionId: sid });
    const runs = { n: 0 };
    const err = await caught(s.turn(message('x', runs), { key: 'k' }));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(/options\.key needs a store that records turn keys.*run the turn without a key/);
    expect(runs.n).toBe(0);
    await s.turn(message('x', runs));
    expect(runs.n).toBe(1);
    await server.dispose();
    await inner.close();
  });

  test('store level: begin records the key, refuses it after the commit (TURN_ALREADY_COMMITTED, nothing written, checked before an open attempt), within keyWindow', async () => {
    const store = backend().make();
    expect(store.turnKeys).toBe(true);
    const sid = id('store');
    const lease = await store.create({ sessionId: sid, agentId: sid, owner: 'o', ttlMs: 60_000, locals: [] });
    const t1 = await store.begin(lease, { key: 'k1' });
    // an open attempt's key does not count
    await expect(store.begin(lease, { key: 'k1' })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    await store.commit(lease, { ...t1, events: [{ kind: 'history/append', body: say('one') }], locals: [] });
    const seq = (await store.load(sid)).info.lastSeq;
    const err = await caught(store.begin(lease, { key: 'k1' }));
    expect(err).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1, sessionId: sid });
    expect((await store.load(sid)).open).toBeUndefined();
    expect((await store.load(sid)).info.lastSeq).toBe(seq);
    // replaceOpen with nothing open, and with an attempt open: the key is checked first, nothing is replaced
    await expect(store.begin(lease, { key: 'k1', replaceOpen: true })).rejects.toMatchObject({ code: 'TURN_ALREADY_COMMITTED' });
    const t2 = await store.begin(lease, { key: 'k2' });
    await expect(store.begin(lease, { key: 'k1', replaceOpen: true })).rejects.toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 1 });
    expect((await store.load(sid)).open).toMatchObject({ turn: 2, attempt: t2.attempt });
    await store.commit(lease, { ...t2, events: [], locals: [] });
    // keyWindow 1: only the last committed turn
    const t3 = await store.begin(lease, { key: 'k1', keyWindow: 1 });
    expect([t3.turn, t3.attempt]).toEqual([3, 1]);
    await store.abort(lease, { ...t3, reason: 'test' });
    await expect(store.begin(lease, { key: 'k2', keyWindow: 1 })).rejects.toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    // malformed key options are TypeErrors, with nothing written
    for (const options of [{ key: '' }, { key: 7 }, { key: 'a\u0000' }, { key: 'k', keyWindow: 0 }, { key: 'k', keyWindow: 1.5 }, { key: 'k', keyWindow: '3' }]) {
      await expect(store.begin(lease, options as never)).rejects.toBeInstanceOf(TypeError);
    }
    expect((await store.load(sid)).open).toBeUndefined();
    await store.close();
  });
}

describe('MemorySessionStore', () => {
  keyTests(() => ({ make: () => new MemorySessionStore(), shared: false }));
});

describe('runSessionStoreConformance and turn keys', () => {
  const KEY_CHECK = SESSION_STORE_CONFORMANCE_CHECKS.find((name) => name.startsWith('begin({ key })')) as string;

  test('a store without turnKeys passes, with the key check reported skipped and why', async () => {
    class Before extends MemorySessionStore {
      override readonly turnKeys = undefined as unknown as true;
    }
    const report = await runSessionStoreConformance(() => new Before(), { leaseTtlMs: 200 });
    expect(report.skipped).toEqual([{ name: KEY_CHECK, reason: expect.stringMatching(/does not record turn keys \(its turnKeys is not true; keys are optional\)/) as unknown as string }]);
    expect(report.passed).not.toContain(KEY_CHECK);
  });

  test('a store that claims turnKeys but ignores the key fails the key check (and only it)', async () => {
    class Ignoring extends MemorySessionStore {
      override async begin(...[lease, options]: Parameters<SessionStore['begin']>): ReturnType<SessionStore['begin']> {
        let plain = options;
        try {
          // what a store written before keys does: it reads replaceOpen only
          if (typeof options === 'object' && options !== null) plain = { replaceOpen: options.replaceOpen };
        } catch {
          // hostile options: the real begin reports them
        }
        return super.begin(lease, plain);
      }
    }
    const err = (await runSessionStoreConformance(() => new Ignoring(), { leaseTtlMs: 200 }).catch((e: unknown) => e)) as AggregateError;
    expect(err).toBeInstanceOf(AggregateError);
    expect(err.errors.map((e: Error) => e.message.slice(0, KEY_CHECK.length))).toEqual([KEY_CHECK]);
    expect((err.errors[0] as Error).message).toMatch(/TURN_ALREADY_COMMITTED/);
  });
});

describe('SqliteSessionStore', () => {
  keyTests(() => {
    const path = join(dir, `k-${Math.random().toString(36).slice(2)}.db`);
    return { make: () => new SqliteSessionStore({ path }), shared: true };
  });

  test('a database at schema 1 (no turn_key) migrates on first use: its turns have no key, and keyed turns work', async () => {
    const path = join(dir, 'schema-1.db');
    const old = new SqliteSessionStore({ path });
    const lease = await old.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 60_000, locals: [] });
    const a = await old.begin(lease);
    await old.commit(lease, { ...a, events: [{ kind: 'history/append', body: say('kept') }], locals: [] });
    await old.release(lease);
    await old.close();
    const db = createClient({ url: `file:${path}` });
    // what schema 1 looked like
    await db.execute('ALTER TABLE polestar_sessions DROP COLUMN lease_incarnation');
    await db.execute('ALTER TABLE polestar_attempts DROP COLUMN turn_key');
    await db.execute("UPDATE polestar_meta SET value = '1' WHERE key = 'schema'");
    const store = new SqliteSessionStore({ path });
    const { server, ctx } = await serverOn(store);
    const s = await ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(contents(s)).toEqual(['kept']);
    expect((await db.execute("SELECT value FROM polestar_meta WHERE key = 'schema'")).rows[0].value).toBe('2');
    expect((await db.execute('PRAGMA table_info(polestar_attempts)')).rows.map((r) => r.name)).toContain('turn_key');
    expect((await db.execute("SELECT turn_key FROM polestar_attempts WHERE session_id = 's'")).rows.map((r) => r.turn_key)).toEqual([null]);
    const runs = { n: 0 };
    await s.turn(message('new', runs), { key: 'k' });
    expect(await caught(s.turn(message('new', runs), { key: 'k' }))).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    await server.dispose();
    await store.close();
    db.close();
  });
});

const target = await pgTarget();

describePg(target)('PostgresSessionStore', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'turnkey');
  });
  afterAll(async () => {
    await db?.drop();
  });
  keyTests(() => ({ make: () => new PostgresSessionStore({ connectionString: (db as { url: string }).url, max: 3 }), shared: true }));
});
