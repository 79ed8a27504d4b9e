/**
 * The session store conformance suite (SPEC §12.3): the single-process checks every
 * `SessionStore` passes. Several lease owners on one store object, and several store objects
 * when `makeStore` returns objects sharing one backend, stand in for processes; lease expiry
 * uses short real TTLs. Interleavings (concurrent acquires, racing owners with stale leases)
 * are driven by a seeded generator whose seed is in the failure message.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SessionError, type SessionErrorCode } from '../sessions/errors.js';
import type { JsonValue } from '../tools/lossless-json.js';
import type { Lease, NewSessionEvent, PersistedLocal, SessionStore, StoredSessionEvent } from '../sessions/store.js';

/** A test registrar: Jest's or Vitest's `test`, or `node:test`'s `it`. */
export type ConformanceTestFn = (name: string, fn: () => Promise<void>) => unknown;

/** Options of {@link runSessionStoreConformance}. */
export interface SessionStoreConformanceOptions {
  /** Register one test per check with this function instead of running them now. */
  readonly test?: ConformanceTestFn;
  /**
   * The short lease TTL of the expiry checks, in milliseconds (default 1,000). Every other
   * check uses a long TTL. Raise it on a slow machine or a remote database; a check waits a
   * few times this long, so the registrar's test timeout must allow ~4× it.
   */
  readonly leaseTtlMs?: number;
}

/** What {@link runSessionStoreConformance} resolves to when every check passed. */
export interface SessionStoreConformanceReport {
  /** The names of the checks, all passed. */
  readonly passed: readonly string[];
  /**
   * True when two objects made by `makeStore` shared one backend (then the multi-process
   * checks ran across store objects; otherwise across lease owners of one object).
   */
  readonly sharedBackend: boolean;
}

/** Makes a store object; the suite closes every object it made. */
export type MakeSessionStore = () => SessionStore | Promise<SessionStore>;

/** A long TTL: the leases of the checks that are not about expiry never expire. */
const LONG_TTL = 600_000;

interface Check {
  readonly name: string;
  readonly run: (ctx: CheckContext) => Promise<void>;
}

class CheckContext {
  readonly #make: MakeSessionStore;
  readonly #shared: () => Promise<boolean>;
  readonly #stores: SessionStore[] = [];
  readonly prefix: string;
  readonly ttl: number;
  #n = 0;

  constructor(make: MakeSessionStore, shared: () => Promise<boolean>, index: number, ttl: number) {
    this.#make = make;
    this.#shared = shared;
    this.prefix = `conf-${randomUUID().slice(0, 8)}-${index}-`;
    this.ttl = ttl;
  }

  /** A new store object. */
  async store(): Promise<SessionStore> {
    const s = await this.#make();
    if (!this.#stores.includes(s)) this.#stores.push(s);
    return s;
  }

  /** `n` stores sharing one backend: distinct objects when the backend is shared, else one object n times. */
  async peers(n: number): Promise<SessionStore[]> {
    const first = await this.store();
    if (!(await this.#shared())) return Array.from({ length: n }, () => first);
    const out = [first];
    while (out.length < n) out.push(await this.store());
    return out;
  }

  /** Whether store objects made by `makeStore` share one backend. */
  shared(): Promise<boolean> {
    return this.#shared();
  }

  /** A fresh id under this check's prefix. */
  id(tag = 's'): string {
    return `${this.prefix}${tag}${++this.#n}`;
  }

  async close(): Promise<void> {
    const errors: unknown[] = [];
    for (const s of this.#stores) await s.close().catch((err: unknown) => errors.push(err));
    if (errors.length > 0) throw new AggregateError(errors, 'closing the stores of the check failed');
  }
}

// ---- helpers -------------------------------------------------------------------------------

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Calls `call` (which must not throw synchronously) and expects a rejection with `code` (a SessionError code) or `TypeError`. */
async function rejects(call: () => unknown, expected: SessionErrorCode | 'TypeError', what: string): Promise<SessionError | TypeError> {
  let p: unknown;
  try {
    p = call();
  } catch (err) {
    assert.fail(`${what}: threw synchronously instead of rejecting: ${String(err)}`);
  }
  assert.ok(p instanceof Promise || (typeof p === 'object' && p !== null && typeof (p as { then?: unknown }).then === 'function'), `${what}: did not return a promise`);
  try {
    await p;
  } catch (err) {
    if (expected === 'TypeError') {
      assert.ok(err instanceof TypeError, `${what}: expected a TypeError, got ${describe(err)}`);
      return err;
    }
    assert.ok(err instanceof SessionError, `${what}: expected SessionError ${expected}, got ${describe(err)}`);
    assert.equal(err.code, expected, `${what}: expected ${expected}, got ${err.code}: ${err.message}`);
    return err;
  }
  assert.fail(`${what}: resolved, expected ${expected}`);
}

function describe(err: unknown): string {
  if (err instanceof SessionError) return `SessionError ${err.code}: ${err.message}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

async function collect(it: AsyncIterable<StoredSessionEvent>): Promise<StoredSessionEvent[]> {
  const out: StoredSessionEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const locals = (n: number): PersistedLocal[] => [
  { key: 'app.memory', scope: 'agent', version: 1, data: { facts: [`fact ${n}`], n } },
  { key: 'app.notes', scope: 'session', version: 2, data: [`note ${n}`] },
];

const msg = (text: string): NewSessionEvent => ({ kind: 'history/append', body: { role: 'user', content: text } });
const note = (text: string): NewSessionEvent => ({ kind: 'tool/result', body: { text } });

async function create(store: SessionStore, ctx: CheckContext, owner = 'owner-1', extra: { ttlMs?: number; agentId?: string; id?: string } = {}): Promise<Lease> {
  return store.create({ sessionId: extra.id ?? ctx.id(), agentId: extra.agentId ?? `${ctx.prefix}agent`, owner, ttlMs: extra.ttlMs ?? LONG_TTL, locals: locals(0) });
}

/** Runs one full turn: begin, commit with the events. */
async function turn(store: SessionStore, lease: Lease, events: NewSessionEvent[], n: number, keepCheckpoints?: number): Promise<number> {
  const a = await store.begin(lease);
  const c = await store.commit(lease, { ...a, events, locals: locals(n), ...(keepCheckpoints === undefined ? {} : { keepCheckpoints }) });
  return c.turn;
}

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const same = (a: JsonValue, b: JsonValue, what: string): void => {
  assert.deepEqual(a, b, what);
  assert.equal(JSON.stringify(a), JSON.stringify(b), `${what}: key order`);
};

// ---- the checks ----------------------------------------------------------------------------

const checks: Check[] = [
  {
    name: 'create writes checkpoint 0 and takes the first lease (epoch 1)',
    run: async (ctx) => {
      const store = await ctx.store();
      const id = ctx.id();
      const meta = { title: 'support', tags: ['a', 'b'], b: 1, a: 2 };
      const lease = await store.create({ sessionId: id, agentId: 'agent-x', owner: 'owner-1', ttlMs: LONG_TTL, meta, locals: locals(0) });
      assert.deepEqual(lease, { sessionId: id, owner: 'owner-1', epoch: 1 });
      const loaded = await store.load(id);
      assert.equal(loaded.info.sessionId, id);
      assert.equal(loaded.info.agentId, 'agent-x');
      same(loaded.info.meta, meta, 'meta');
      assert.equal(loaded.info.committedTurn, 0);
      assert.equal(loaded.info.lastSeq, 0);
      assert.ok(loaded.info.createdAt instanceof Date && loaded.info.updatedAt instanceof Date);
      assert.ok(loaded.info.lease !== undefined, 'the lease is live');
      assert.equal(loaded.info.lease.owner, 'owner-1');
      assert.equal(loaded.info.lease.epoch, 1);
      assert.ok(loaded.info.lease.remainingMs > 0 && loaded.info.lease.remainingMs <= LONG_TTL, `remainingMs ${loaded.info.lease.remainingMs}`);
      assert.equal(loaded.checkpoint.turn, 0);
      assert.deepEqual(loaded.checkpoint.locals, locals(0));
      assert.deepEqual(loaded.history, []);
      assert.equal(loaded.open, undefined);
      assert.deepEqual(
        loaded.checkpoints.map((c) => [c.turn, c.pinned, c.label]),
        [[0, false, undefined]],
      );
      const bare = ctx.id();
      await store.create({ sessionId: bare, agentId: 'agent-x', owner: 'owner-1', ttlMs: LONG_TTL, locals: [] });
      const b = await store.load(bare);
      assert.equal(b.info.meta, null, 'meta defaults to null');
      assert.deepEqual(b.checkpoint.locals, []);
    },
  },
  {
    name: 'create refuses an id that is stored already, from any store object (SESSION_ALREADY_EXISTS)',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const id = ctx.id();
      await a.create({ sessionId: id, agentId: 'first', owner: 'owner-1', ttlMs: LONG_TTL, meta: 1, locals: locals(0) });
      const err = await rejects(() => b.create({ sessionId: id, agentId: 'second', owner: 'owner-2', ttlMs: LONG_TTL, meta: 2, locals: [] }), 'SESSION_ALREADY_EXISTS', 'second create');
      assert.equal((err as SessionError).sessionId, id);
      const loaded = await a.load(id);
      assert.equal(loaded.info.agentId, 'first');
      assert.equal(loaded.info.meta, 1);
      assert.equal(loaded.info.lease?.owner, 'owner-1');
    },
  },
  {
    name: 'acquire refuses while any owner holds a live lease, naming it (SESSION_BUSY); unknown ids are SESSION_NOT_FOUND',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      const err = (await rejects(() => b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'acquire by another owner')) as SessionError;
      assert.equal(err.sessionId, lease.sessionId);
      assert.equal(err.holder?.owner, 'owner-1');
      assert.equal(err.holder?.epoch, 1);
      assert.ok((err.holder?.remainingMs ?? 0) > 0 && (err.holder?.remainingMs ?? 0) <= LONG_TTL);
      assert.match(err.message, /owner-1/);
      await rejects(() => a.acquire(lease.sessionId, { owner: 'owner-1', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'acquire by the holder itself');
      await rejects(() => b.acquire(ctx.id('missing'), { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_NOT_FOUND', 'acquire of an unknown id');
    },
  },
  {
    name: 'release frees the lease; the next acquire raises the epoch and every write of the old lease is LEASE_LOST',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const old = await create(a, ctx, 'owner-1');
      await turn(a, old, [msg('one')], 1);
      assert.equal(await a.release(old), true);
      assert.equal(await a.release(old), false, 'a second release finds nothing');
      const loadedFree = await b.load(old.sessionId);
      assert.equal(loadedFree.info.lease, undefined, 'released: no live lease');
      const next = await b.acquire(old.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(next.epoch, 2);
      const open = await b.begin(next);
      const before = await b.load(old.sessionId);
      await rejects(() => a.begin(old), 'LEASE_LOST', 'begin with the old lease');
      await rejects(() => a.renew(old), 'LEASE_LOST', 'renew with the old lease');
      await rejects(() => a.append(old, open, [note('x')]), 'LEASE_LOST', 'append with the old lease');
      await rejects(() => a.commit(old, { ...open, events: [msg('stale')], locals: locals(9) }), 'LEASE_LOST', 'commit with the old lease');
      await rejects(() => a.abort(old, { ...open, events: [note('stale')] }), 'LEASE_LOST', 'abort with the old lease');
      await rejects(() => a.rollback(old, 0), 'LEASE_LOST', 'rollback with the old lease');
      await rejects(() => a.pin(old, 0, 'stale'), 'LEASE_LOST', 'pin with the old lease');
      assert.equal(await a.release(old), false, 'the old lease can not release the new one');
      const after = await b.load(old.sessionId);
      assert.deepEqual(after.info.lastSeq, before.info.lastSeq, 'nothing was written');
      assert.deepEqual(after.checkpoints, before.checkpoints);
      assert.equal(after.info.lease?.owner, 'owner-2');
      assert.deepEqual(after.open && [after.open.turn, after.open.attempt], [open.turn, open.attempt]);
      await b.commit(next, { ...open, events: [msg('two')], locals: locals(2) });
      const again = await a.acquire(old.sessionId, { owner: 'owner-1', ttlMs: LONG_TTL }).catch((e: unknown) => e);
      assert.ok(again instanceof SessionError && again.code === 'SESSION_BUSY', 'still held by owner-2');
      assert.equal(await b.release(next), true);
      const third = await a.acquire(old.sessionId, { owner: 'owner-1', ttlMs: LONG_TTL });
      assert.equal(third.epoch, 3, 'the same owner gets a new epoch');
      await rejects(() => a.begin(old), 'LEASE_LOST', 'the epoch-1 lease of the same owner stays stale');
    },
  },
  {
    name: "a lease expires on the store's clock: its writes are LEASE_LOST after the TTL, even without a competitor",
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const open = await a.begin(lease);
      await a.append(lease, open, [note('before expiry')]);
      await sleep(ctx.ttl * 1.5 + 50);
      await rejects(() => a.commit(lease, { ...open, events: [msg('late')], locals: locals(1) }), 'LEASE_LOST', 'commit after expiry');
      await rejects(() => a.append(lease, open, [note('late')]), 'LEASE_LOST', 'append after expiry');
      await rejects(() => a.renew(lease), 'LEASE_LOST', 'renew after expiry');
      const loaded = await b.load(lease.sessionId);
      assert.equal(loaded.info.lease, undefined, 'an expired lease is not live');
      assert.equal(loaded.info.committedTurn, 0);
      assert.equal(loaded.info.lastSeq, 1);
      const taken = await b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(taken.epoch, 2);
      assert.equal(await a.release(lease), false, 'the expired lease was taken over');
      await b.abort(taken, { ...open, reason: 'interrupted' });
      assert.equal((await b.begin(taken)).attempt, 2);
    },
  },
  {
    name: 'renew keeps a lease alive beyond its TTL; renew({ ttlMs }) changes it',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const until = Date.now() + ctx.ttl * 2.5;
      while (Date.now() < until) {
        await sleep(ctx.ttl / 5);
        await a.renew(lease);
      }
      await rejects(() => b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'acquire of a renewed lease');
      assert.equal(await turn(a, lease, [msg('still mine')], 1), 1);
      await a.renew(lease, { ttlMs: LONG_TTL });
      await sleep(ctx.ttl * 1.5);
      assert.equal(await turn(a, lease, [msg('longer ttl')], 2), 2);
      const l = (await b.load(lease.sessionId)).info.lease;
      assert.ok(l !== undefined && l.remainingMs > ctx.ttl, 'the new ttl applies');
    },
  },
  {
    name: 'a turn: begin opens turn committedTurn + 1; commit writes its events, record and checkpoint at once',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const created = (await store.load(lease.sessionId)).info;
      const a = await store.begin(lease);
      assert.equal(a.turn, 1);
      assert.equal(a.attempt, 1);
      assert.ok(a.startedAt instanceof Date);
      await store.append(lease, a, [msg('hello'), note('flushed')]);
      const c = await store.commit(lease, { ...a, events: [{ kind: 'history/append', body: { role: 'assistant', content: 'hi' } }, note('buffered')], locals: locals(1) });
      assert.equal(c.turn, 1);
      assert.equal(c.attempt, 1);
      assert.equal(c.lastSeq, 4);
      assert.ok(c.committedAt instanceof Date);
      const loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 1);
      assert.equal(loaded.info.lastSeq, 4);
      assert.ok(loaded.info.updatedAt.getTime() >= created.updatedAt.getTime());
      assert.equal(loaded.info.createdAt.getTime(), created.createdAt.getTime());
      assert.equal(loaded.checkpoint.turn, 1);
      assert.deepEqual(loaded.checkpoint.locals, locals(1));
      assert.deepEqual(
        loaded.history.map((e) => [e.seq, e.turn, e.attempt, e.kind, e.body, e.status]),
        [
          [1, 1, 1, 'history/append', { role: 'user', content: 'hello' }, 'committed'],
          [3, 1, 1, 'history/append', { role: 'assistant', content: 'hi' }, 'committed'],
        ],
      );
      const events = await collect(store.events(lease.sessionId));
      assert.deepEqual(
        events.map((e) => [e.seq, e.kind, e.status]),
        [
          [1, 'history/append', 'committed'],
          [2, 'tool/result', 'committed'],
          [3, 'history/append', 'committed'],
          [4, 'tool/result', 'committed'],
        ],
      );
      assert.ok(events.every((e) => e.at instanceof Date));
      assert.deepEqual(
        loaded.checkpoints.map((x) => x.turn),
        [0, 1],
      );
      const b = await store.begin(lease);
      assert.deepEqual([b.turn, b.attempt], [2, 1]);
    },
  },
  {
    name: 'a failed attempt is aborted with its events, leaves the history, and the next attempt reuses the turn number',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const a1 = await store.begin(lease);
      await store.append(lease, a1, [msg('will fail')]);
      await store.abort(lease, { ...a1, events: [note('tool ran before the failure')], reason: 'Error: boom' });
      let loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 0);
      assert.deepEqual(loaded.history, []);
      assert.equal(loaded.open, undefined);
      const a2 = await store.begin(lease);
      assert.deepEqual([a2.turn, a2.attempt], [1, 2]);
      await store.commit(lease, { ...a2, events: [msg('works')], locals: locals(1) });
      loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 1);
      assert.deepEqual(
        loaded.history.map((e) => e.body),
        [{ role: 'user', content: 'works' }],
      );
      const events = await collect(store.events(lease.sessionId));
      assert.deepEqual(
        events.map((e) => [e.seq, e.turn, e.attempt, e.status]),
        [
          [1, 1, 1, 'aborted'],
          [2, 1, 1, 'aborted'],
          [3, 1, 2, 'committed'],
        ],
      );
      await store.abort(lease, { ...(await store.begin(lease)) });
      assert.equal((await store.load(lease.sessionId)).info.lastSeq, 3, 'an abort without events writes none');
    },
  },
  {
    name: 'an open attempt is pending, blocks begin and rollback (SESSION_BUSY), and load reports it until a new owner aborts it',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      await turn(a, lease, [msg('one')], 1);
      const open = await a.begin(lease);
      await a.append(lease, open, [msg('half a turn'), note('tool started')]);
      assert.deepEqual(
        (await collect(a.events(lease.sessionId))).map((e) => e.status),
        ['committed', 'pending', 'pending'],
      );
      await rejects(() => a.begin(lease), 'SESSION_BUSY', 'begin while an attempt is open');
      await rejects(() => a.rollback(lease, 0), 'SESSION_BUSY', 'rollback while an attempt is open');
      // the process "crashes": another owner takes over
      assert.equal(await a.release(lease), true);
      const next = await b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      const loaded = await b.load(lease.sessionId);
      assert.ok(loaded.open !== undefined, 'load reports the open attempt');
      assert.deepEqual([loaded.open.turn, loaded.open.attempt, loaded.open.epoch], [2, 1, 1]);
      assert.ok(loaded.open.startedAt instanceof Date);
      assert.deepEqual(
        loaded.open.events.map((e) => [e.seq, e.kind, e.status]),
        [
          [2, 'history/append', 'pending'],
          [3, 'tool/result', 'pending'],
        ],
      );
      assert.deepEqual(
        loaded.history.map((e) => e.seq),
        [1],
        'the pending message is not history',
      );
      await rejects(() => b.commit(next, { ...open, events: [], locals: locals(2) }), 'TypeError', 'commit of an attempt begun by another epoch');
      await rejects(() => b.append(next, open, [note('x')]), 'TypeError', 'append to an attempt begun by another epoch');
      await rejects(() => b.begin(next), 'SESSION_BUSY', 'begin before the interrupted attempt is aborted');
      await b.abort(next, { ...open, reason: 'interrupted' });
      assert.deepEqual(
        (await collect(b.events(lease.sessionId))).map((e) => e.status),
        ['committed', 'aborted', 'aborted'],
      );
      assert.equal((await b.load(lease.sessionId)).open, undefined);
      const again = await b.begin(next);
      assert.deepEqual([again.turn, again.attempt], [2, 2]);
    },
  },
  {
    name: 'commit and abort are idempotent for the attempt they ended; other attempts that are not open are a TypeError',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const a = await store.begin(lease);
      const input = { ...a, events: [msg('once')], locals: locals(1) };
      const first = await store.commit(lease, input);
      const second = await store.commit(lease, input);
      assert.deepEqual(
        [second.turn, second.attempt, second.lastSeq, second.committedAt.getTime()],
        [first.turn, first.attempt, first.lastSeq, first.committedAt.getTime()],
      );
      assert.equal((await collect(store.events(lease.sessionId))).length, 1, 'the retry wrote nothing');
      const b = await store.begin(lease);
      await store.abort(lease, { ...b, events: [note('x')] });
      await store.abort(lease, { ...b, events: [note('x')] });
      assert.equal((await store.load(lease.sessionId)).info.lastSeq, 2);
      await rejects(() => store.commit(lease, { turn: 9, attempt: 1, events: [], locals: [] }), 'TypeError', 'commit of an attempt never begun');
      await rejects(() => store.commit(lease, { ...b, events: [], locals: [] }), 'TypeError', 'commit of an aborted attempt');
      await rejects(() => store.abort(lease, { ...a }), 'TypeError', 'abort of a committed attempt');
      await rejects(() => store.append(lease, a, [note('late')]), 'TypeError', 'append to a committed attempt');
    },
  },
  {
    name: 'rollback supersedes the later turns (kept in the log), drops their checkpoints, and numbering continues from the checkpoint',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      for (let n = 1; n <= 3; n++) await turn(store, lease, [msg(`m${n}`)], n);
      await store.pin(lease, 1, 'one');
      await store.rollback(lease, 1);
      let loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 1);
      assert.equal(loaded.checkpoint.turn, 1);
      assert.equal(loaded.checkpoint.label, 'one');
      assert.deepEqual(loaded.checkpoint.locals, locals(1));
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['m1'],
      );
      assert.deepEqual(
        loaded.checkpoints.map((c) => c.turn),
        [0, 1],
      );
      assert.deepEqual(
        (await collect(store.events(lease.sessionId))).map((e) => [e.turn, e.status]),
        [
          [1, 'committed'],
          [2, 'superseded'],
          [3, 'superseded'],
        ],
      );
      const b = await store.begin(lease);
      assert.deepEqual([b.turn, b.attempt], [2, 2], 'turn 2 again, as its second attempt');
      await store.commit(lease, { ...b, events: [msg('m2 again')], locals: locals(22) });
      loaded = await store.load(lease.sessionId);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['m1', 'm2 again'],
      );
      assert.deepEqual(
        (await collect(store.events(lease.sessionId))).map((e) => [e.turn, e.attempt, e.status]),
        [
          [1, 1, 'committed'],
          [2, 1, 'superseded'],
          [3, 1, 'superseded'],
          [2, 2, 'committed'],
        ],
      );
      await rejects(() => store.rollback(lease, 3), 'CHECKPOINT_NOT_FOUND', 'rollback to a superseded turn');
      await rejects(() => store.rollback(lease, 7), 'CHECKPOINT_NOT_FOUND', 'rollback to a future turn');
      await store.rollback(lease, 0);
      loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 0);
      assert.deepEqual(loaded.history, []);
      assert.deepEqual(loaded.checkpoint.locals, locals(0));
      assert.deepEqual(
        (await collect(store.events(lease.sessionId))).map((e) => e.status),
        ['superseded', 'superseded', 'superseded', 'superseded'],
      );
      assert.deepEqual([(await store.begin(lease)).turn], [1]);
    },
  },
  {
    name: "retention keeps checkpoint 0, the last keepCheckpoints turns', the pinned ones and the last committed; load({ turn }) reads a kept one",
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      for (let n = 1; n <= 6; n++) {
        await turn(store, lease, [msg(`m${n}`)], n, 2);
        if (n === 2) await store.pin(lease, 2);
      }
      assert.deepEqual(
        (await store.checkpoints(lease.sessionId)).map((c) => [c.turn, c.pinned]),
        [
          [0, false],
          [2, true],
          [5, false],
          [6, false],
        ],
      );
      await rejects(() => store.load(lease.sessionId, { turn: 3 }), 'CHECKPOINT_NOT_FOUND', 'load of a pruned checkpoint');
      await rejects(() => store.load(lease.sessionId, { turn: 7 }), 'CHECKPOINT_NOT_FOUND', 'load of a future turn');
      await rejects(() => store.rollback(lease, 4), 'CHECKPOINT_NOT_FOUND', 'rollback to a pruned checkpoint');
      const at2 = await store.load(lease.sessionId, { turn: 2 });
      assert.equal(at2.checkpoint.turn, 2);
      assert.deepEqual(at2.checkpoint.locals, locals(2));
      assert.deepEqual(
        at2.history.map((e) => (e.body as { content: string }).content),
        ['m1', 'm2'],
      );
      assert.equal(at2.info.committedTurn, 6, 'info is the head');
      await turn(store, lease, [msg('m7')], 7, 0);
      assert.deepEqual(
        (await store.checkpoints(lease.sessionId)).map((c) => c.turn),
        [0, 2, 7],
        'keepCheckpoints 0 still keeps the last committed turn',
      );
    },
  },
  {
    name: 'pin marks a kept checkpoint, sets or keeps its label; unknown turns are CHECKPOINT_NOT_FOUND',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      await store.pin(lease, 0);
      assert.deepEqual(
        (await store.checkpoints(lease.sessionId)).map((c) => [c.turn, c.pinned, c.label]),
        [[0, true, undefined]],
      );
      await store.pin(lease, 0, 'start');
      await store.pin(lease, 0);
      assert.equal((await store.checkpoints(lease.sessionId))[0].label, 'start', 'a pin without label keeps the label');
      await rejects(() => store.pin(lease, 5, 'x'), 'CHECKPOINT_NOT_FOUND', 'pin of a turn never committed');
      await rejects(() => store.checkpoints(ctx.id('missing')), 'SESSION_NOT_FOUND', 'checkpoints of an unknown session');
    },
  },
  {
    name: 'bodies, meta, locals and ids round-trip exactly (\\u0000, lone surrogates, key order, __proto__, large strings)',
    run: async (ctx) => {
      const store = await ctx.store();
      const odd = JSON.parse('{"__proto__": {"x": 1}, "z": 0}') as JsonValue;
      const tricky: JsonValue[] = [
        'a\u0000b',
        '\ud800 lone high',
        'lone low \udfff',
        '\u2028\u2029 and 😀 and ü',
        { b: 1, a: 2, c: { z: null, y: [true, false] } },
        { '10': 'ten', '2': 'two', x: 'x' },
        odd,
        [1e21, -1.5, 0, Number.MAX_SAFE_INTEGER, 5e-324, -1e-7],
        'x'.repeat(200_000),
        '',
        null,
        [],
        {},
      ];
      const id = `${ctx.prefix}ü-😀-"quoted"-'single'-%`;
      const lease = await store.create({ sessionId: id, agentId: 'agent-😀', owner: 'owner-ü', ttlMs: LONG_TTL, meta: tricky.slice(0, 8), locals: [{ key: 'k-😀', scope: 'agent', version: 1, data: tricky }] });
      const a = await store.begin(lease);
      const events = tricky.map((body, i) => ({ kind: i % 2 === 0 ? 'history/append' : 'kind-😀', body }));
      await store.append(lease, a, events.slice(0, 5));
      await store.commit(lease, { ...a, events: events.slice(5), locals: [{ key: 'k-😀', scope: 'session', version: 3, data: tricky }] });
      const read = await collect(store.events(id));
      assert.equal(read.length, tricky.length);
      read.forEach((e, i) => {
        same(e.body, tricky[i], `event ${i + 1} body`);
        assert.equal(e.kind, events[i].kind);
      });
      const loaded = await store.load(id);
      same(loaded.info.meta, tricky.slice(0, 8), 'meta');
      assert.equal(loaded.info.agentId, 'agent-😀');
      same(loaded.checkpoint.locals[0].data, tricky, 'locals');
      assert.equal(loaded.checkpoint.locals[0].key, 'k-😀');
      assert.equal(Object.getPrototypeOf(read[6].body), Object.prototype, '__proto__ stays an own key');
      assert.ok(Object.hasOwn(read[6].body as object, '__proto__'));
      same(
        loaded.history.map((e) => e.body),
        tricky.filter((_, i) => i % 2 === 0),
        'history',
      );
      assert.equal((await store.list({ agentId: 'agent-😀' })).items.some((s) => s.sessionId === id), true);
    },
  },
  {
    name: 'malformed input is a TypeError (a rejection, never a synchronous throw) and writes nothing',
    run: async (ctx) => {
      const store = await ctx.store();
      const id = ctx.id();
      const good = { sessionId: id, agentId: 'a', owner: 'o', ttlMs: LONG_TTL, locals: [] as PersistedLocal[] };
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const bad: [string, () => unknown][] = [
        ['create(undefined)', () => store.create(undefined as never)],
        ['empty session id', () => store.create({ ...good, sessionId: '' })],
        ['NUL in the session id', () => store.create({ ...good, sessionId: `${id}\u0000x` })],
        ['lone surrogate in the agent id', () => store.create({ ...good, agentId: 'a\ud800' })],
        ['number as owner', () => store.create({ ...good, owner: 7 as never })],
        ['ttl 0', () => store.create({ ...good, ttlMs: 0 })],
        ['ttl 1.5', () => store.create({ ...good, ttlMs: 1.5 })],
        ['NaN in meta', () => store.create({ ...good, meta: { n: NaN } as never })],
        ['a Date in meta', () => store.create({ ...good, meta: new Date() as never })],
        ['a cycle in meta', () => store.create({ ...good, meta: cyclic as never })],
        ['-0 in locals', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 1, data: -0 }] })],
        ['undefined in locals', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 1, data: { x: undefined } as never }] })],
        ['bad scope', () => store.create({ ...good, locals: [{ key: 'k', scope: 'turn' as never, version: 1, data: 1 }] })],
        ['version 0', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 0, data: 1 }] })],
        ['duplicate local', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 1, data: 1 }, { key: 'k', scope: 'agent', version: 1, data: 2 }] })],
        ['locals missing', () => store.create({ ...good, locals: undefined as never })],
        ['acquire without options', () => store.acquire(id, undefined as never)],
        ['load with a bad turn', () => store.load(id, { turn: -1 })],
        ['list with limit 0', () => store.list({ limit: 0 })],
        ['list with a forged cursor', () => store.list({ cursor: 'nope' })],
        ['delete with force "yes"', () => store.delete(id, { force: 'yes' as never })],
        ['begin with a malformed lease', () => store.begin({ sessionId: id, owner: 'o', epoch: 0 })],
        ['renew with ttl -1', () => store.renew({ sessionId: id, owner: 'o', epoch: 1 }, { ttlMs: -1 })],
      ];
      for (const [what, call] of bad) await rejects(call, 'TypeError', what);
      const it = store.events(id, { afterSeq: -1 })[Symbol.asyncIterator]();
      await rejects(() => it.next(), 'TypeError', 'events with afterSeq -1');
      await rejects(() => store.load(id), 'SESSION_NOT_FOUND', 'nothing was created');
      const lease = await store.create(good);
      const a = await store.begin(lease);
      const badEvents: [string, () => unknown][] = [
        ['events not an array', () => store.append(lease, a, 'x' as never)],
        ['event without body', () => store.append(lease, a, [{ kind: 'k' } as never])],
        ['event with an empty kind', () => store.append(lease, a, [{ kind: '', body: 1 }])],
        ['event body with a function', () => store.append(lease, a, [{ kind: 'k', body: { f: () => 1 } as never }])],
        ['commit with a bigint', () => store.commit(lease, { ...a, events: [{ kind: 'k', body: 1n as never }], locals: [] })],
        ['commit with keepCheckpoints -1', () => store.commit(lease, { ...a, events: [], locals: [], keepCheckpoints: -1 })],
        ['abort with a numeric reason', () => store.abort(lease, { ...a, reason: 5 as never })],
        ['rollback to turn 1.5', () => store.rollback(lease, 1.5)],
        ['pin with an empty label', () => store.pin(lease, 0, '')],
      ];
      for (const [what, call] of badEvents) await rejects(call, 'TypeError', what);
      const loaded = await store.load(id);
      assert.equal(loaded.info.lastSeq, 0, 'no event was written');
      assert.deepEqual(loaded.open && [loaded.open.turn, loaded.open.attempt], [1, 1], 'the attempt is still open');
      assert.deepEqual(
        loaded.checkpoints.map((c) => [c.turn, c.pinned]),
        [[0, false]],
      );
    },
  },
  {
    name: 'list pages by session id in Unicode code point order, optionally of one agent',
    run: async (ctx) => {
      const store = await ctx.store();
      const agent = `${ctx.prefix}agent-list`;
      const other = `${ctx.prefix}agent-other`;
      const suffixes = ['b', 'a', 'Z', 'é', '\uffff', '😀', 'a0'];
      for (const s of suffixes) await store.create({ sessionId: `${ctx.prefix}${s}`, agentId: agent, owner: 'o', ttlMs: LONG_TTL, meta: { s }, locals: [] });
      await store.create({ sessionId: `${ctx.prefix}c`, agentId: other, owner: 'o', ttlMs: LONG_TTL, locals: [] });
      const expected = ['Z', 'a', 'a0', 'b', 'é', '\uffff', '😀'].map((s) => `${ctx.prefix}${s}`);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.list({ agentId: agent, limit: 2, ...(cursor === undefined ? {} : { cursor }) });
        assert.ok(page.items.length <= 2);
        for (const item of page.items) {
          assert.equal(item.agentId, agent);
          assert.equal(item.committedTurn, 0);
          assert.ok(item.updatedAt instanceof Date);
          assert.deepEqual(item.meta, { s: item.sessionId.slice(ctx.prefix.length) });
          seen.push(item.sessionId);
        }
        cursor = page.cursor;
        pages += 1;
      } while (cursor !== undefined && pages < 10);
      assert.deepEqual(seen, expected);
      assert.equal(pages, 4);
      const all = await store.list({ agentId: agent });
      assert.deepEqual(
        all.items.map((s) => s.sessionId),
        expected,
      );
      assert.equal(all.cursor, undefined, 'no cursor after the last page');
      assert.deepEqual(
        (await store.list({ agentId: other })).items.map((s) => s.sessionId),
        [`${ctx.prefix}c`],
      );
      const lease = await store.acquire(`${ctx.prefix}c`, { owner: 'o2', ttlMs: LONG_TTL }).catch(() => undefined);
      assert.equal(lease, undefined, 'busy');
    },
  },
  {
    name: 'delete refuses while another owner holds a live lease (SESSION_BUSY) unless forced or asked by the holder; it removes every row',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      await turn(a, lease, [msg('one')], 1);
      await a.pin(lease, 1, 'x');
      const err = (await rejects(() => b.delete(lease.sessionId), 'SESSION_BUSY', 'delete of a leased session')) as SessionError;
      assert.equal(err.holder?.owner, 'owner-1');
      await rejects(() => b.delete(lease.sessionId, { lease: { ...lease, owner: 'owner-2' } }), 'SESSION_BUSY', 'delete with a lease that is not the live one');
      assert.equal(await a.delete(lease.sessionId, { lease }), true);
      await rejects(() => b.load(lease.sessionId), 'SESSION_NOT_FOUND', 'load after delete');
      await rejects(() => b.checkpoints(lease.sessionId), 'SESSION_NOT_FOUND', 'checkpoints after delete');
      await rejects(() => b.events(lease.sessionId)[Symbol.asyncIterator]().next(), 'SESSION_NOT_FOUND', 'events after delete');
      await rejects(() => a.begin(lease), 'LEASE_LOST', 'a write with the lease of a deleted session');
      await rejects(() => b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_NOT_FOUND', 'acquire after delete');
      assert.equal(await b.delete(lease.sessionId), false, 'deleting again finds nothing');
      const again = await b.create({ sessionId: lease.sessionId, agentId: 'reborn', owner: 'owner-2', ttlMs: LONG_TTL, locals: [] });
      const loaded = await a.load(lease.sessionId);
      assert.equal(loaded.info.agentId, 'reborn');
      assert.equal(loaded.info.lastSeq, 0, 'no event of the deleted session is left');
      assert.deepEqual(
        loaded.checkpoints.map((c) => [c.turn, c.pinned]),
        [[0, false]],
      );
      assert.deepEqual(await collect(a.events(lease.sessionId)), []);
      assert.deepEqual([(await b.begin(again)).turn, (await b.load(lease.sessionId)).open?.attempt], [1, 1]);
      const forced = await create(a, ctx, 'owner-1');
      assert.equal(await b.delete(forced.sessionId, { force: true }), true);
      await rejects(() => a.begin(forced), 'LEASE_LOST', 'the holder of a force-deleted session');
      const released = await create(a, ctx, 'owner-1');
      await a.release(released);
      assert.equal(await b.delete(released.sessionId), true, 'a free session is deleted without a lease');
    },
  },
  {
    name: 'events() reads every event in seq order, page by page, from afterSeq, at most limit',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      for (let n = 1; n <= 3; n++) await turn(store, lease, [msg(`m${n}`), note(`a${n}`), note(`b${n}`)], n);
      const all = await collect(store.events(lease.sessionId));
      assert.deepEqual(
        all.map((e) => e.seq),
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
      assert.deepEqual(
        all.map((e) => e.turn),
        [1, 1, 1, 2, 2, 2, 3, 3, 3],
      );
      assert.deepEqual(
        (await collect(store.events(lease.sessionId, { afterSeq: 2, limit: 4 }))).map((e) => e.seq),
        [3, 4, 5, 6],
      );
      assert.deepEqual(await collect(store.events(lease.sessionId, { afterSeq: 9 })), []);
      assert.deepEqual(await collect(store.events(lease.sessionId, { limit: 0 })), []);
      const big = await store.begin(lease);
      const many = Array.from({ length: 1234 }, (_, i) => note(`e${i}`));
      await store.commit(lease, { ...big, events: many, locals: locals(4) });
      const read = await collect(store.events(lease.sessionId, { afterSeq: 9 }));
      assert.equal(read.length, 1234);
      read.forEach((e, i) => {
        assert.equal(e.seq, 10 + i);
        assert.deepEqual(e.body, { text: `e${i}` });
      });
      const partial: number[] = [];
      for await (const e of store.events(lease.sessionId, { afterSeq: 600 })) {
        partial.push(e.seq);
        if (partial.length === 3) break;
      }
      assert.deepEqual(partial, [601, 602, 603], 'an iteration can stop early');
      await rejects(() => store.events(ctx.id('missing'))[Symbol.asyncIterator]().next(), 'SESSION_NOT_FOUND', 'events of an unknown session');
    },
  },
  {
    name: 'several lease owners on one store object, and several store objects on one backend, see one state',
    run: async (ctx) => {
      const [a, b, c] = await ctx.peers(3);
      const l1 = await create(a, ctx, 'owner-a');
      await turn(a, l1, [msg('from a')], 1);
      await a.release(l1);
      const l2 = await b.acquire(l1.sessionId, { owner: 'owner-b', ttlMs: LONG_TTL });
      await turn(b, l2, [msg('from b')], 2);
      const seen = await c.load(l1.sessionId);
      assert.equal(seen.info.committedTurn, 2);
      assert.deepEqual(
        seen.history.map((e) => (e.body as { content: string }).content),
        ['from a', 'from b'],
      );
      assert.equal(seen.info.lease?.owner, 'owner-b');
      await rejects(() => c.acquire(l1.sessionId, { owner: 'owner-c', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'a third owner');
      assert.equal((await a.list({ agentId: `${ctx.prefix}agent` })).items[0].committedTurn, 2);
    },
  },
  {
    name: 'exactly one of many concurrent acquires of a free session wins (seeded interleavings)',
    run: async (ctx) => {
      const stores = await ctx.peers(3);
      const seed = Math.floor(Math.random() * 2 ** 31);
      const rand = rng(seed);
      const owners = Array.from({ length: 6 }, (_, i) => ({ owner: `owner-${i}`, store: stores[i % stores.length] }));
      for (let round = 0; round < 8; round++) {
        const first = await create(stores[0], ctx, 'creator');
        await stores[0].release(first);
        const results = await Promise.allSettled(
          owners.map(async ({ owner, store }) => {
            await sleep(Math.floor(rand() * 4));
            return store.acquire(first.sessionId, { owner, ttlMs: LONG_TTL });
          }),
        );
        const won = results.filter((r): r is PromiseFulfilledResult<Lease> => r.status === 'fulfilled');
        assert.equal(won.length, 1, `seed ${seed}, round ${round}: ${won.length} owners won`);
        assert.equal(won[0].value.epoch, 2, `seed ${seed}`);
        for (const r of results) {
          if (r.status === 'rejected') {
            assert.ok(r.reason instanceof SessionError && r.reason.code === 'SESSION_BUSY', `seed ${seed}: ${describe(r.reason)}`);
            assert.equal(r.reason.holder?.owner, won[0].value.owner, `seed ${seed}: the refusal names the winner`);
          }
        }
      }
    },
  },
  {
    name: 'racing owners with stale leases never commit twice or out of turn: every acknowledged commit is in the log once (seeded interleavings)',
    run: async (ctx) => {
      const stores = await ctx.peers(3);
      const seed = Math.floor(Math.random() * 2 ** 31);
      const rand = rng(seed);
      const first = await create(stores[0], ctx, 'creator');
      await stores[0].release(first);
      const sid = first.sessionId;
      interface Actor {
        owner: string;
        store: SessionStore;
        lease?: Lease;
        stale: Lease[];
      }
      const actors: Actor[] = Array.from({ length: 4 }, (_, i) => ({ owner: `racer-${i}`, store: stores[i % stores.length], stale: [] }));
      const acked: string[] = [];
      const refusedMarks = new Set<string>();
      let mark = 0;
      const step = async (actor: Actor): Promise<void> => {
        const r = rand();
        if (actor.lease === undefined) {
          if (r < 0.7) {
            try {
              actor.lease = await actor.store.acquire(sid, { owner: actor.owner, ttlMs: LONG_TTL });
              const loaded = await actor.store.load(sid);
              if (loaded.open !== undefined) await actor.store.abort(actor.lease, { turn: loaded.open.turn, attempt: loaded.open.attempt, reason: 'interrupted' });
            } catch (err) {
              if (!(err instanceof SessionError) || !['SESSION_BUSY', 'LEASE_LOST'].includes(err.code)) throw err;
              if (err.code === 'LEASE_LOST' && actor.lease !== undefined) {
                actor.stale.push(actor.lease);
                actor.lease = undefined;
              }
            }
          } else if (actor.stale.length > 0) {
            // a paused former holder wakes up and writes with its old lease
            const old = actor.stale[Math.floor(rand() * actor.stale.length)];
            const m = `stale-${actor.owner}-${++mark}`;
            refusedMarks.add(m);
            await rejects(() => actor.store.begin(old), 'LEASE_LOST', `seed ${seed}: begin with a stale lease`);
            await rejects(() => actor.store.commit(old, { turn: 1, attempt: 1, events: [note(m)], locals: [] }), 'LEASE_LOST', `seed ${seed}: commit with a stale lease`);
          }
          return;
        }
        const lease = actor.lease;
        if (r < 0.2) {
          await actor.store.release(lease);
          actor.stale.push(lease);
          actor.lease = undefined;
          return;
        }
        const m = `turn-${actor.owner}-${++mark}`;
        try {
          const a = await actor.store.begin(lease);
          if (rand() < 0.3) await actor.store.append(lease, a, [note(`${m}-flushed`)]);
          if (rand() < 0.15) {
            await actor.store.abort(lease, { ...a, events: [note(`${m}-aborted`)] });
            refusedMarks.add(m);
            return;
          }
          await sleep(Math.floor(rand() * 3));
          await actor.store.commit(lease, { ...a, events: [msg(m)], locals: locals(mark) });
          acked.push(m);
        } catch (err) {
          if (!(err instanceof SessionError) || !['LEASE_LOST', 'SESSION_BUSY'].includes(err.code)) throw err;
          refusedMarks.add(m);
          if (err.code === 'LEASE_LOST') {
            actor.stale.push(lease);
            actor.lease = undefined;
          }
        }
      };
      for (let i = 0; i < 40; i++) {
        // two or three actors act at once
        const batch = actors.filter(() => rand() < 0.6);
        await Promise.all(batch.map(step));
        // a holder is occasionally pushed out: it releases (as if its lease were lost) without knowing
        if (rand() < 0.15) {
          const holder = actors.find((x) => x.lease !== undefined);
          if (holder?.lease !== undefined) {
            await holder.store.release(holder.lease);
            const other = actors.find((x) => x !== holder && x.lease === undefined);
            if (other !== undefined) {
              try {
                other.lease = await other.store.acquire(sid, { owner: other.owner, ttlMs: LONG_TTL });
                const loaded = await other.store.load(sid);
                if (loaded.open !== undefined) await other.store.abort(other.lease, { turn: loaded.open.turn, attempt: loaded.open.attempt, reason: 'interrupted' });
              } catch (err) {
                if (!(err instanceof SessionError) || err.code !== 'SESSION_BUSY') throw err;
              }
            }
          }
        }
      }
      const loaded = await stores[1].load(sid);
      const events = await collect(stores[2].events(sid));
      const committed = events.filter((e) => e.status === 'committed' && e.kind === 'history/append').map((e) => (e.body as { content: string }).content);
      assert.deepEqual(committed, acked, `seed ${seed}: the committed turns are exactly the acknowledged commits, in order`);
      assert.equal(loaded.info.committedTurn, acked.length, `seed ${seed}`);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        acked,
        `seed ${seed}: history`,
      );
      const committedTurns = events.filter((e) => e.status === 'committed' && e.kind === 'history/append').map((e) => e.turn);
      assert.deepEqual(committedTurns, acked.map((_, i) => i + 1), `seed ${seed}: committed turns are 1..n, each once`);
      for (const e of events) {
        const text = JSON.stringify(e.body);
        for (const m of refusedMarks) if (text.includes(`"${m}"`)) assert.notEqual(e.status, 'committed', `seed ${seed}: refused ${m} is committed`);
      }
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
        `seed ${seed}: seq contiguous`,
      );
    },
  },
  {
    name: 'close() waits for work in flight; later calls reject with STORE_ERROR; close is idempotent',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const a = await store.begin(lease);
      const inflight = store.commit(lease, { ...a, events: [msg('in flight')], locals: locals(1) });
      const closing = store.close();
      assert.equal((await inflight).turn, 1, 'the commit started before close() finished');
      await closing;
      await store.close();
      await rejects(() => store.load(lease.sessionId), 'STORE_ERROR', 'load after close');
      await rejects(() => store.begin(lease), 'STORE_ERROR', 'begin after close');
      await rejects(() => store.list(), 'STORE_ERROR', 'list after close');
      await rejects(() => store.events(lease.sessionId)[Symbol.asyncIterator]().next(), 'STORE_ERROR', 'events after close');
      if (await ctx.shared()) {
        const other = await ctx.store();
        assert.equal((await other.load(lease.sessionId)).info.committedTurn, 1, 'the commit is durable and another store object is unaffected');
      }
    },
  },
];

/** Probes once whether two objects made by `makeStore` share one backend. */
function sharingProbe(make: MakeSessionStore): () => Promise<boolean> {
  let probe: Promise<boolean> | undefined;
  return () =>
    (probe ??= (async () => {
      const a = await make();
      const b = await make();
      try {
        if (a === b) return false;
        const id = `conf-probe-${randomUUID()}`;
        const lease = await a.create({ sessionId: id, agentId: 'probe', owner: 'probe', ttlMs: LONG_TTL, locals: [] });
        const shared = await b.load(id).then(
          () => true,
          (err: unknown) => {
            if (err instanceof SessionError && err.code === 'SESSION_NOT_FOUND') return false;
            throw err;
          },
        );
        await a.delete(id, { lease });
        return shared;
      } finally {
        await a.close();
        if (b !== a) await b.close();
      }
    })());
}

/**
 * The names of the checks {@link runSessionStoreConformance} runs, in order.
 */
export const SESSION_STORE_CONFORMANCE_CHECKS: readonly string[] = Object.freeze(checks.map((c) => c.name));

/**
 * Runs the session store conformance suite against the stores `makeStore` makes.
 *
 * Each check calls `makeStore()` for the store objects it needs and closes them afterwards;
 * it uses fresh session ids (and agent ids), so one backend may serve every check. When two
 * objects made by `makeStore` share one backend (a SQLite file, a PostgreSQL database), the
 * multi-process checks run across store objects; otherwise (in-memory stores) across lease
 * owners of one object.
 *
 * With `test` (Jest's or Vitest's `test`, `node:test`'s `it`), it registers one test per check
 * and returns `undefined`. Without it, it runs the checks one after another and resolves to a
 * report, or rejects with an `AggregateError` of the failed checks (each error's message
 * starts with the check's name).
 *
 * @param makeStore - makes a store object (sync or async).
 * @param options - `test`, `leaseTtlMs`.
 */
export function runSessionStoreConformance(makeStore: MakeSessionStore, options: SessionStoreConformanceOptions & { readonly test: ConformanceTestFn }): void;
export function runSessionStoreConformance(makeStore: MakeSessionStore, options?: SessionStoreConformanceOptions): Promise<SessionStoreConformanceReport>;
export function runSessionStoreConformance(makeStore: MakeSessionStore, options: SessionStoreConformanceOptions = {}): Promise<SessionStoreConformanceReport> | void {
  if (typeof makeStore !== 'function') {
    const err = new TypeError('runSessionStoreConformance(makeStore): makeStore must be a function returning a SessionStore.');
    if (options?.test !== undefined) throw err;
    return Promise.reject(err);
  }
  const ttl = options.leaseTtlMs ?? 1000;
  if (!Number.isSafeInteger(ttl) || ttl < 50) {
    const err = new TypeError(`runSessionStoreConformance: leaseTtlMs must be an integer >= 50, got ${String(options.leaseTtlMs)}.`);
    if (options.test !== undefined) throw err;
    return Promise.reject(err);
  }
  const shared = sharingProbe(makeStore);
  const runOne = async (check: Check, index: number): Promise<void> => {
    const ctx = new CheckContext(makeStore, shared, index, ttl);
    let failure: unknown;
    try {
      await check.run(ctx);
    } catch (err) {
      failure = err;
    }
    try {
      await ctx.close();
    } catch (err) {
      failure ??= err;
    }
    if (failure !== undefined) throw failure;
  };
  if (options.test !== undefined) {
    const test = options.test;
    checks.forEach((check, i) => test(check.name, () => runOne(check, i)));
    return;
  }
  return (async () => {
    const errors: Error[] = [];
    const passed: string[] = [];
    for (let i = 0; i < checks.length; i++) {
      try {
        await runOne(checks[i], i);
        passed.push(checks[i].name);
      } catch (err) {
        errors.push(new Error(`${checks[i].name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      }
    }
    if (errors.length > 0) {
      throw new AggregateError(errors, `${errors.length} of ${checks.length} session store conformance checks failed: ${errors.map((e) => e.message.split(':')[0]).join('; ')}`);
    }
    return { passed, sharedBackend: await shared() };
  })();
}
