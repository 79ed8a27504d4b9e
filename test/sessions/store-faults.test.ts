/**
 * The store side of the fault rules, on all three stores (memory, SQLite, PostgreSQL — see
 * pg-target.ts for when the PostgreSQL part runs): `begin({ replaceOpen })`,
 * `attemptStatus`, incarnations and the owner-reused takeover, idempotent commits and aborts
 * (after the lease expired too), and hostile input that rejects on every method.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore, SessionError, type SessionStore } from '../../src/index.js';
import type { Lease } from '../../src/sessions.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-store-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const target = await pgTarget();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let seq = 0;
const newId = (tag: string): string => `${tag}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
const msg = (content: string) => ({ kind: 'history/append', body: { role: 'user', content } });

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

/** The checks every store must pass; `make` gives a store object on the one shared backend. */
function storeFaults(make: () => SessionStore): void {
  const open: SessionStore[] = [];
  const store = (): SessionStore => {
    const s = make();
    open.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
  });
  const create = (s: SessionStore, extra: { owner?: string; incarnation?: string; ttlMs?: number } = {}): Promise<Lease> =>
    s.create({ sessionId: newId('s'), agentId: 'a', owner: extra.owner ?? 'o1', ttlMs: extra.ttlMs ?? 60_000, locals: [], ...(extra.incarnation ? { incarnation: extra.incarnation } : {}) });

  describe('begin({ replaceOpen })', () => {
    test('ends the attempt this lease left open as aborted and opens the next attempt of the same turn', async () => {
      const s = store();
      const lease = await create(s);
      const first = await s.begin(lease);
      await s.append(lease, first, [msg('flushed before the reply was lost')]);
      await expect(s.begin(lease)).rejects.toMatchObject({ code: 'SESSION_BUSY' });
      await expect(s.begin(lease, { replaceOpen: false })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
      const next = await s.begin(lease, { replaceOpen: true });
      expect([next.turn, next.attempt]).toEqual([1, 2]);
      expect(await s.attemptStatus?.(lease.sessionId, first)).toBe('aborted');
      expect(await s.attemptStatus?.(lease.sessionId, next)).toBe('open');
      const loaded = await s.load(lease.sessionId);
      expect(loaded.open).toMatchObject({ turn: 1, attempt: 2, events: [] });
      expect((await collect(s.events(lease.sessionId))).map((e) => e.status)).toEqual(['aborted']);
      const c = await s.commit(lease, { ...next, events: [msg('second try')], locals: [] });
      expect([c.turn, c.attempt, c.lastSeq]).toEqual([1, 2, 2]);
      // with nothing open, replaceOpen just begins
      expect(await s.begin(lease, { replaceOpen: true })).toMatchObject({ turn: 2, attempt: 1 });
    });

    test('an attempt open under another epoch stays SESSION_BUSY, and the failed call writes nothing', async () => {
      const s = store();
      const old = await create(s, { ttlMs: 150 });
      const a = await s.begin(old);
      await sleep(250);
      const next = await s.acquire(old.sessionId, { owner: 'o2', ttlMs: 60_000 });
      const before = await s.load(old.sessionId);
      await expect(s.begin(next, { replaceOpen: true })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
      expect(await s.attemptStatus?.(old.sessionId, a)).toBe('open');
      expect((await s.load(old.sessionId)).info.updatedAt).toEqual(before.info.updatedAt);
      // the stale lease can not use it either
      await expect(s.begin(old, { replaceOpen: true })).rejects.toMatchObject({ code: 'LEASE_LOST' });
    });

    test.each([
      ['a number', 5],
      ['null', null],
      ['an array', []],
      ['a string replaceOpen', { replaceOpen: 'yes' }],
      ['a throwing getter', Object.defineProperty({}, 'replaceOpen', { get: () => { throw new Error('boom'); } })],
    ])('options that are %s reject with a TypeError naming them (nothing is begun)', async (_name, options) => {
      const s = store();
      const lease = await create(s);
      let p: Promise<unknown> | undefined;
      expect(() => {
        p = s.begin(lease, options as never);
      }).not.toThrow();
      const err = await caught(p as Promise<unknown>);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(/options/);
      expect((await s.load(lease.sessionId)).open).toBeUndefined();
    });
  });

  describe('attemptStatus', () => {
    test('reports committed, aborted, open and absent, without a lease; SESSION_NOT_FOUND for an unknown session', async () => {
      const s = store();
      const reader = store();
      const lease = await create(s);
      const a1 = await s.begin(lease);
      expect(await reader.attemptStatus?.(lease.sessionId, a1)).toBe('open');
      await s.abort(lease, { ...a1, reason: 'failed' });
      const a2 = await s.begin(lease);
      await s.commit(lease, { ...a2, events: [], locals: [] });
      expect(await reader.attemptStatus?.(lease.sessionId, { turn: 1, attempt: 1 })).toBe('aborted');
      expect(await reader.attemptStatus?.(lease.sessionId, { turn: 1, attempt: 2 })).toBe('committed');
      expect(await reader.attemptStatus?.(lease.sessionId, { turn: 1, attempt: 3 })).toBe('absent');
      expect(await reader.attemptStatus?.(lease.sessionId, { turn: 7, attempt: 1 })).toBe('absent');
      await expect(reader.attemptStatus?.('no-such-session', { turn: 1, attempt: 1 })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', sessionId: 'no-such-session' });
      // works after the lease is gone
      await s.release(lease);
      expect(await reader.attemptStatus?.(lease.sessionId, a2)).toBe('committed');
    });
  });

  describe('incarnations', () => {
    test('create and acquire record the incarnation; the lease carries it only when one was given', async () => {
      const s = store();
      const withIt = await create(s, { incarnation: 'i1' });
      expect(withIt).toEqual({ sessionId: withIt.sessionId, owner: 'o1', epoch: 1, incarnation: 'i1' });
      const without = await create(s);
      expect('incarnation' in without).toBe(false);
      await s.release(without);
      const again = await s.acquire(without.sessionId, { owner: 'o1', incarnation: 'i9', ttlMs: 60_000 });
      expect(again).toEqual({ sessionId: without.sessionId, owner: 'o1', epoch: 2, incarnation: 'i9' });
      // a lease with its incarnation is accepted by every fenced call
      await s.renew(again);
      const a = await s.begin(again);
      await s.commit(again, { ...a, events: [], locals: [] });
    });

    test('another incarnation of the same owner takes a live lease over at once; the old one gets LEASE_LOST owner-reused', async () => {
      const s = store();
      const other = store();
      const old = await create(s, { owner: 'svc', incarnation: 'boot-1' });
      const open = await s.begin(old);
      const taken = await other.acquire(old.sessionId, { owner: 'svc', incarnation: 'boot-2', ttlMs: 60_000 });
      expect(taken).toEqual({ sessionId: old.sessionId, owner: 'svc', epoch: 2, incarnation: 'boot-2' });
      const calls: [string, () => Promise<unknown>][] = [
        ['renew', () => s.renew(old)],
        ['begin', () => s.begin(old)],
        ['append', () => s.append(old, open, [msg('late')])],
        ['commit', () => s.commit(old, { ...open, events: [msg('late')], locals: [] })],
        ['abort', () => s.abort(old, open)],
        ['rollback', () => s.rollback(old, 0)],
        ['pin', () => s.pin(old, 0)],
      ];
      for (const [name, call] of calls) {
        const err = await caught(call());
        expect(err).toBeInstanceOf(SessionError);
        expect(err).toMatchObject({ code: 'LEASE_LOST', sessionId: old.sessionId });
        expect((err as Error).cause).toEqual({ reason: 'owner-reused', owner: 'svc', epoch: 2 });
        expect((err as Error).message).toMatch(/another process started with the same owner id "svc" took session/);
        expect((err as Error).message).toContain(`store.${name}()`);
      }
      expect(await s.release(old)).toBe(false);
      // the new incarnation owns the session, the old attempt included
      await other.abort(taken, { ...open, reason: 'interrupted' });
      expect(await other.begin(taken)).toMatchObject({ turn: 1, attempt: 2 });
    });

    test('the same incarnation, or an incarnation missing on either side, is SESSION_BUSY as before', async () => {
      const s = store();
      const a = await create(s, { owner: 'svc', incarnation: 'boot-1' });
      await expect(s.acquire(a.sessionId, { owner: 'svc', incarnation: 'boot-1', ttlMs: 1000 })).rejects.toMatchObject({ code: 'SESSION_BUSY', holder: { owner: 'svc', epoch: 1 } });
      await expect(s.acquire(a.sessionId, { owner: 'svc', ttlMs: 1000 })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
      await expect(s.acquire(a.sessionId, { owner: 'someone-else', incarnation: 'boot-2', ttlMs: 1000 })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
      const b = await create(s, { owner: 'svc' });
      await expect(s.acquire(b.sessionId, { owner: 'svc', incarnation: 'boot-2', ttlMs: 1000 })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
      // a plain stale lease (another owner took over after expiry) is not owner-reused
      const c = await create(s, { owner: 'svc', incarnation: 'boot-1', ttlMs: 100 });
      await sleep(200);
      await s.acquire(c.sessionId, { owner: 'other', incarnation: 'x', ttlMs: 60_000 });
      const err = await caught(s.renew(c));
      expect(err).toMatchObject({ code: 'LEASE_LOST' });
      expect((err as Error).cause).toBeUndefined();
    });

    test.each([
      ['create', (s: SessionStore) => s.create({ sessionId: newId('bad'), agentId: 'a', owner: 'o', incarnation: 5 as never, ttlMs: 1000, locals: [] })],
      ['acquire', (s: SessionStore) => s.acquire('x', { owner: 'o', incarnation: '' as never, ttlMs: 1000 })],
      ['renew', (s: SessionStore) => s.renew({ sessionId: 'x', owner: 'o', epoch: 1, incarnation: {} as never })],
      ['begin', (s: SessionStore) => s.begin({ sessionId: 'x', owner: 'o', epoch: 1, incarnation: null as never })],
    ])('a malformed incarnation given to %s is a TypeError naming it', async (_name, call) => {
      const err = await caught(call(store()));
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(/incarnation/);
    });
  });

  describe('idempotent commits and aborts', () => {
    test('a repeated commit resolves to the same CommittedTurn and writes nothing, also after the lease expired; after a takeover it is LEASE_LOST', async () => {
      const s = store();
      const lease = await create(s, { ttlMs: 200 });
      const a = await s.begin(lease);
      const input = { ...a, events: [msg('once')], locals: [{ key: 'k', scope: 'session' as const, version: 1, data: 1 }] };
      const first = await s.commit(lease, input);
      const again = await s.commit(lease, input);
      expect(again).toEqual(first);
      await sleep(300);
      // expired, not taken over: the same answer, nothing written
      expect(await s.commit(lease, input)).toEqual(first);
      // but no new write with the expired lease
      await expect(s.begin(lease)).rejects.toMatchObject({ code: 'LEASE_LOST' });
      const loaded = await s.load(lease.sessionId);
      expect([loaded.info.committedTurn, loaded.info.lastSeq, loaded.checkpoints.length]).toEqual([1, 1, 2]);
      // taken over: LEASE_LOST (the caller asks attemptStatus, which needs no lease)
      await s.acquire(lease.sessionId, { owner: 'o2', ttlMs: 60_000 });
      await expect(s.commit(lease, input)).rejects.toMatchObject({ code: 'LEASE_LOST' });
      expect(await s.attemptStatus?.(lease.sessionId, a)).toBe('committed');
      expect((await s.load(lease.sessionId)).info.lastSeq).toBe(1);
    });

    test('a repeated abort of an aborted attempt resolves, also after the lease expired; other attempts stay a TypeError', async () => {
      const s = store();
      const lease = await create(s, { ttlMs: 200 });
      const a = await s.begin(lease);
      await s.abort(lease, { ...a, events: [msg('x')], reason: 'failed' });
      await s.abort(lease, { ...a, events: [msg('x')], reason: 'failed' });
      await sleep(300);
      await expect(s.abort(lease, { ...a, events: [msg('x')] })).resolves.toBeUndefined();
      expect((await s.load(lease.sessionId)).info.lastSeq).toBe(1);
      // a commit of the aborted attempt is not a repeat: the expired lease is LEASE_LOST
      await expect(s.commit(lease, { ...a, events: [], locals: [] })).rejects.toMatchObject({ code: 'LEASE_LOST' });
      const next = await s.acquire(lease.sessionId, { owner: 'o1', ttlMs: 60_000 });
      await expect(s.commit(next, { ...a, events: [], locals: [] })).rejects.toBeInstanceOf(TypeError);
      await expect(s.abort(lease, a)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    });
  });

  describe('hostile input rejects on every method, never throws', () => {
    const hostile = (): [string, unknown][] => {
      const revocable = Proxy.revocable({}, {});
      revocable.revoke();
      return [
        ['null', null],
        ['a fractional number', 1.5],
        ['an empty string', ''],
        ['a symbol', Symbol('x')],
        ['an empty object', {}],
        ['an object with throwing getters', new Proxy({}, { get: () => { throw new Error('getter boom'); } })],
        [
          'a proxy whose every trap throws',
          new Proxy(
            {},
            {
              get: () => { throw new RangeError('trap'); },
              has: () => { throw new RangeError('trap'); },
              ownKeys: () => { throw new RangeError('trap'); },
              getPrototypeOf: () => { throw new RangeError('trap'); },
              getOwnPropertyDescriptor: () => { throw new RangeError('trap'); },
            },
          ),
        ],
        ['a revoked proxy', revocable.proxy],
        ['an array with a throwing element', Object.defineProperty([], 0, { get: () => { throw new Error('element boom'); }, enumerable: true })],
      ];
    };

    test('every method of the store rejects with a TypeError (naming what it read) for each hostile argument, and writes nothing', async () => {
      const s = store();
      const lease = await create(s);
      const a = await s.begin(lease);
      const sid = lease.sessionId;
      const okAttempt = { turn: a.turn, attempt: a.attempt };
      for (const [name, h] of hostile()) {
        const x = h as never;
        const calls: [string, () => Promise<unknown>][] = [
          ['create(input)', () => s.create(x)],
          ['create(input.locals)', () => s.create({ sessionId: newId('h'), agentId: 'a', owner: 'o', ttlMs: 1000, locals: x })],
          ['acquire(sessionId)', () => s.acquire(x, { owner: 'o', ttlMs: 1000 })],
          ['acquire(options)', () => s.acquire(sid, x)],
          ['renew(lease)', () => s.renew(x)],
          ['release(lease)', () => s.release(x)],
          ['begin(lease)', () => s.begin(x)],
          ['append(lease)', () => s.append(x, okAttempt, [])],
          ['append(attempt)', () => s.append(lease, x, [])],
          ['append(events)', () => s.append(lease, okAttempt, x)],
          ['commit(lease)', () => s.commit(x, { ...okAttempt, events: [], locals: [] })],
          ['commit(input)', () => s.commit(lease, x)],
          ['commit(input.events)', () => s.commit(lease, { ...okAttempt, events: x, locals: [] })],
          ['abort(lease)', () => s.abort(x, okAttempt)],
          ['abort(input)', () => s.abort(lease, x)],
          ['rollback(lease)', () => s.rollback(x, 0)],
          ['rollback(turn)', () => s.rollback(lease, x)],
          ['pin(lease)', () => s.pin(x, 0)],
          ['pin(turn)', () => s.pin(lease, x)],
          ['pin(label)', () => s.pin(lease, 0, x)],
          ['load(sessionId)', () => s.load(x)],
          ['checkpoints(sessionId)', () => s.checkpoints(x)],
          ['attemptStatus(sessionId)', () => (s.attemptStatus as NonNullable<SessionStore['attemptStatus']>).call(s, x, okAttempt)],
          ['attemptStatus(attempt)', () => (s.attemptStatus as NonNullable<SessionStore['attemptStatus']>).call(s, sid, x)],
          ['delete(sessionId)', () => s.delete(x)],
          ['events(sessionId)', () => collect(s.events(x))],
        ];
        // optional options objects: an empty one is valid, every other hostile value is not
        if (name !== 'an empty object') {
          calls.push(
            ['renew(lease, options)', () => s.renew(lease, x)],
            ['begin(lease, options)', () => s.begin(lease, x)],
            ['load(sessionId, options)', () => s.load(sid, x)],
            ['delete(sessionId, options)', () => s.delete(sid, x)],
            ['list(query)', () => s.list(x)],
            ['events(sessionId, query)', () => collect(s.events(sid, x))],
          );
        }
        for (const [call, f] of calls) {
          let p: Promise<unknown> | undefined;
          try {
            p = f();
          } catch (err) {
            throw new Error(`store.${call} threw synchronously for ${name}: ${String(err)}`);
          }
          const err = await p.then(
            () => new Error(`store.${call} with ${name} resolved`),
            (e: unknown) => e,
          );
          if (!(err instanceof TypeError)) throw new Error(`store.${call} with ${name} rejected with ${String(err)} instead of a TypeError`);
        }
      }
      const loaded = await s.load(sid);
      expect(loaded.open).toMatchObject(okAttempt);
      expect(loaded.info.lastSeq).toBe(0);
      expect(loaded.info.lease).toMatchObject({ owner: 'o1', epoch: 1 });
    });

    test('a throwing getter is reported as a TypeError whose cause is what it threw', async () => {
      const s = store();
      const boom = new Error('boom');
      const lease = new Proxy({ sessionId: 'x', owner: 'o', epoch: 1 }, { get: () => { throw boom; } });
      const err = await caught(s.renew(lease as never));
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(/lease could not be read: boom/);
      expect((err as Error).cause).toBe(boom);
    });
  });
}

describe('MemorySessionStore', () => {
  const shared = new MemorySessionStore();
  storeFaults(() => shared);
});

describe('SqliteSessionStore', () => {
  const path = join(dir, 'faults.db');
  storeFaults(() => new SqliteSessionStore({ path }));
});

describePg(target)('PostgresSessionStore', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'faults');
  });
  afterAll(async () => {
    await db?.drop();
  });
  storeFaults(() => new PostgresSessionStore({ connectionString: (db as { url: string }).url, max: 3 }));
});
