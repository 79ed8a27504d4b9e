/**
 * The session store conformance suite (the store contract and its fault rules): the
 * single-process checks every `SessionStore` passes. Several lease owners on one store object,
 * and several store objects when `makeStore` returns objects sharing one backend, stand in for
 * processes; lease expiry uses short real TTLs. Interleavings (concurrent acquires, racing
 * owners with stale leases) are driven by a seeded generator whose seed is in the failure
 * message. Every store call of a check is raced against `callTimeoutMs`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SessionError, type SessionErrorCode } from '../sessions/errors.js';
import type { JsonValue } from '../tools/lossless-json.js';
import type { AttemptStatus, CommittedTurn, Lease, LoadedSession, NewSessionEvent, PersistedLocal, SessionStore, StoredSessionEvent, TurnAttempt } from '../sessions/store.js';

/**
 * A test registrar: Jest's or Vitest's `test`, or `node:test`'s `it`. The functions it is given
 * declare no parameter (so Jest does not wait for a `done` callback) and read the runner's
 * test context from their first argument, if any, to mark a check that does not apply skipped.
 */
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
  /**
   * The bound on each store call of a check, in milliseconds (default 5,000): `makeStore()`,
   * every method, each step of an `events()` iteration and `close()`. A call that neither
   * resolves nor rejects in time fails its check with a message naming the method, so a store
   * that hangs is reported instead of hanging the suite. Raise it for a slow remote database;
   * keep it below the registrar's test timeout.
   */
  readonly callTimeoutMs?: number;
}

/** What {@link runSessionStoreConformance} resolves to when every check passed. */
export interface SessionStoreConformanceReport {
  /** The names of the checks that ran, all passed. */
  readonly passed: readonly string[];
  /**
   * The checks that did not apply to this store, with why: the checks of an optional method
   * (such as `attemptStatus`) the store does not implement, and those of turn keys when its
   * `turnKeys` is not `true`. They are neither passed nor failed.
   */
  readonly skipped: readonly {
    /** The check's name. */
    readonly name: string;
    /** Why it does not apply to this store (e.g. an optional method it does not have). */
    readonly reason: string;
  }[];
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

/** Default of {@link SessionStoreConformanceOptions.callTimeoutMs}. */
const DEFAULT_CALL_TIMEOUT_MS = 5_000;

interface Check {
  readonly name: string;
  /**
   * An optional part of the contract the check is about: a method (`attemptStatus`) or a
   * capability flag (`turnKeys`: true). Without it the check is skipped, not passed.
   */
  readonly requires?: 'attemptStatus' | 'turnKeys';
  readonly run: (ctx: CheckContext) => Promise<void>;
}

// ---- bounded store calls -------------------------------------------------------------------

/** A store call that did not settle within `callTimeoutMs`. */
class CallTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not settle within ${ms} ms (callTimeoutMs): every store call must resolve or reject in bounded time; raise callTimeoutMs only for a slow backend.`);
    this.name = 'CallTimeoutError';
  }
}

/** The promised methods of the store contract, in the order of the interface. */
const PROMISED_METHODS = ['create', 'acquire', 'renew', 'release', 'begin', 'append', 'commit', 'abort', 'rollback', 'pin', 'load', 'attemptStatus', 'checkpoints', 'list', 'delete', 'close'] as const;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  try {
    return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
}

/** `value`, or a rejection with a {@link CallTimeoutError} when it has not settled after `ms`. */
function settleWithin<T>(value: PromiseLike<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new CallTimeoutError(what, ms)), ms);
    Promise.resolve(value).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** An `events()` iterable whose iterator steps are bounded; anything else is returned as is. */
function boundIterable(value: unknown, ms: number): unknown {
  let make: unknown;
  try {
    make = typeof value === 'object' && value !== null ? (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] : undefined;
  } catch {
    return value;
  }
  if (typeof make !== 'function') return value;
  return {
    [Symbol.asyncIterator]: () => {
      const inner = (make as () => AsyncIterator<unknown>).call(value);
      const step = (r: unknown, what: string): unknown => (isThenable(r) ? settleWithin(r, ms, what) : r);
      return {
        next: (...args: [] | [unknown]) => step(inner.next(...args), 'store.events() (iterator next())'),
        return: (v?: unknown) => (typeof inner.return === 'function' ? step(inner.return(v), 'store.events() (iterator return())') : Promise.resolve({ done: true, value: v })),
      };
    },
  };
}

/**
 * A view of `store` whose every call is bounded by `ms`. A synchronous throw or a value that
 * is not a promise passes through unchanged, so the checks still see it.
 */
function boundStore(store: SessionStore, ms: number): SessionStore {
  const methods = store as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of PROMISED_METHODS) {
    if (typeof methods[name] !== 'function') continue;
    out[name] = (...args: unknown[]): unknown => {
      const r: unknown = (methods[name] as (...a: unknown[]) => unknown).apply(store, args);
      return isThenable(r) ? settleWithin(r, ms, `store.${name}()`) : r;
    };
  }
  if (typeof methods.events === 'function') {
    out.events = (...args: unknown[]): unknown => boundIterable((methods.events as (...a: unknown[]) => unknown).apply(store, args), ms);
  }
  // the capability flag, read once (a throwing getter reads as absent)
  try {
    if (methods.turnKeys === true) out.turnKeys = true;
  } catch {
    // not a store with turn keys
  }
  return out as unknown as SessionStore;
}

/** Calls `makeStore` within the bound and checks it made an object. */
async function makeBounded(make: MakeSessionStore, ms: number): Promise<SessionStore> {
  const raw: unknown = await settleWithin(
    Promise.resolve().then(() => make()),
    ms,
    'makeStore()',
  );
  if (typeof raw !== 'object' || raw === null) throw new TypeError(`makeStore() must return a SessionStore object, got ${raw === null ? 'null' : typeof raw}.`);
  return raw as SessionStore;
}

class CheckContext {
  readonly #make: MakeSessionStore;
  readonly #shared: () => Promise<boolean>;
  readonly #stores: SessionStore[] = [];
  readonly #bounded = new Map<SessionStore, SessionStore>();
  readonly prefix: string;
  readonly ttl: number;
  /** The bound on each store call. */
  readonly callTimeoutMs: number;
  #n = 0;

  constructor(make: MakeSessionStore, shared: () => Promise<boolean>, index: number, ttl: number, callTimeoutMs: number) {
    this.#make = make;
    this.#shared = shared;
    this.prefix = `conf-${randomUUID().slice(0, 8)}-${index}-`;
    this.ttl = ttl;
    this.callTimeoutMs = callTimeoutMs;
  }

  /** A new store object (its calls bounded by `callTimeoutMs`). */
  async store(): Promise<SessionStore> {
    const raw = await makeBounded(this.#make, this.callTimeoutMs);
    let s = this.#bounded.get(raw);
    if (s === undefined) {
      s = boundStore(raw, this.callTimeoutMs);
      this.#bounded.set(raw, s);
      this.#stores.push(s);
    }
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
    for (const s of this.#stores) {
      try {
        await s.close();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `closing the stores of the check failed: ${errors.map((e) => describe(e)).join('; ')}`);
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

const storageChecks: Check[] = [
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

// ---- the fault rules: hostile input, idempotent ends, bounded calls, the optional methods ----

/** What the getters and proxy traps of hostile inputs throw. */
class HostileReadError extends Error {
  constructor(what: string) {
    super(`hostile input: ${what} throws`);
    this.name = 'HostileReadError';
  }
}

/** Every field any store input has, and a few a careless store might read. */
const HOSTILE_FIELDS = ['sessionId', 'agentId', 'owner', 'incarnation', 'epoch', 'ttlMs', 'meta', 'locals', 'turn', 'attempt', 'events', 'keepCheckpoints', 'reason', 'replaceOpen', 'keyWindow', 'limit', 'cursor', 'afterSeq', 'lease', 'force', 'kind', 'body', 'key', 'scope', 'version', 'data', 'label', 'then', 'length', 'toJSON'];

/** An object whose every field is a getter that throws. */
function throwingGetters(): object {
  const o = {};
  for (const f of HOSTILE_FIELDS) {
    Object.defineProperty(o, f, {
      enumerable: true,
      configurable: true,
      get(): never {
        throw new HostileReadError(`the getter of "${f}"`);
      },
    });
  }
  return o;
}

/** A proxy of `target` whose every trap throws. */
function throwingProxy<T extends object>(target: T): T {
  const trap =
    (name: string) =>
    (): never => {
      throw new HostileReadError(`the proxy trap "${name}"`);
    };
  return new Proxy(target, {
    get: trap('get'),
    set: trap('set'),
    has: trap('has'),
    deleteProperty: trap('deleteProperty'),
    ownKeys: trap('ownKeys'),
    getOwnPropertyDescriptor: trap('getOwnPropertyDescriptor'),
    defineProperty: trap('defineProperty'),
    getPrototypeOf: trap('getPrototypeOf'),
    setPrototypeOf: trap('setPrototypeOf'),
    isExtensible: trap('isExtensible'),
    preventExtensions: trap('preventExtensions'),
    apply: trap('apply'),
    construct: trap('construct'),
  });
}

/** A hostile argument: how the failure names it, and the value. */
type Hostile = readonly [label: string, value: unknown];

/** Values no argument of any store method accepts. */
function anyJunk(): Hostile[] {
  return [
    ['null', null],
    ['NaN', NaN],
    ['-1', -1],
    ['1.5', 1.5],
    ['Infinity', Infinity],
    ['true', true],
    ['a symbol', Symbol('hostile')],
    ['a bigint', 10n],
    [
      'a function',
      function hostile(): number {
        return 1;
      },
    ],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
    ['an array Proxy whose traps throw', throwingProxy([])],
    ['a Date', new Date(0)],
  ];
}

const required = (yes: boolean): Hostile[] => (yes ? [['undefined', undefined]] : []);

/**
 * Junk for an object argument (input, options, query). An object of another class (a `Date`)
 * is junk only where fields are required: as options whose fields are all optional it reads
 * as empty options.
 */
function objectJunk(isRequired: boolean): Hostile[] {
  const junk = isRequired ? anyJunk() : anyJunk().filter(([label]) => label !== 'a Date');
  return [...required(isRequired), ...junk, ['5', 5], ['the string "hostile"', 'hostile'], ['an empty string', ''], ['an empty array', []], ['an array of junk', [null, 1]], ...(isRequired ? ([['an empty object', {}]] as Hostile[]) : [])];
}

/** Junk for an id or name (a non-empty, well-formed string without NUL, at most 1024 characters). */
function nameJunk(isRequired: boolean): Hostile[] {
  return [
    ...required(isRequired),
    ...anyJunk(),
    ['5', 5],
    ['an empty string', ''],
    ['a string with NUL', 'x\u0000y'],
    ['a string with a lone surrogate', 'x\ud800'],
    ['a string of 1025 characters', 'x'.repeat(1025)],
    ['a String object', new String('x')],
    ['an array of strings', ['x']],
    ['an empty object', {}],
  ];
}

/** Junk for an integer from `min` (to `max`). */
function intJunk(isRequired: boolean, min: number, max?: number): Hostile[] {
  const out: Hostile[] = [...required(isRequired), ...anyJunk(), ['the string "1"', '1'], ['an empty array', []], ['an empty object', {}]];
  if (min >= 1) out.push([String(min - 1), min - 1]);
  if (max !== undefined) out.push([String(max + 1), max + 1]);
  return out;
}

/** Junk for a boolean option. */
function boolJunk(): Hostile[] {
  return [
    ['null', null],
    ['the string "yes"', 'yes'],
    ['1', 1],
    ['0', 0],
    ['a symbol', Symbol('hostile')],
    ['an empty object', {}],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
  ];
}

/** Junk for an optional string (an abort reason, a cursor). */
function stringJunk(): Hostile[] {
  return [
    ['null', null],
    ['5', 5],
    ['a symbol', Symbol('hostile')],
    ['a bigint', 10n],
    ['an empty object', {}],
    ['an empty array', []],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
  ];
}

/** Values that are not lossless JSON. */
function jsonJunk(isRequired: boolean): Hostile[] {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  return [
    ...required(isRequired),
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-0', -0],
    ['a symbol', Symbol('hostile')],
    ['a bigint', 10n],
    ['a function', () => 1],
    ['an object with an undefined field', { x: undefined }],
    ['a Date', new Date(0)],
    ['a cycle', cyclic],
    ['a Map', new Map([[1, 2]])],
    ['NaN deep inside', { a: [1, { b: NaN }] }],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
    ['an array Proxy whose traps throw', throwingProxy([])],
  ];
}

/** Junk for an array of events. */
function eventsJunk(isRequired: boolean): Hostile[] {
  return [
    ...required(isRequired),
    ['null', null],
    ['the string "x"', 'x'],
    ['5', 5],
    ['an empty object', {}],
    ['an object with throwing getters', throwingGetters()],
    ['a Proxy whose traps throw', throwingProxy({})],
    ['an array Proxy whose traps throw', throwingProxy([])],
    ['[null]', [null]],
    ['["x"]', ['x']],
    ['an event without body', [{ kind: 'tool/result' }]],
    ['an event without kind', [{ body: 1 }]],
    ['an event with an empty kind', [{ kind: '', body: 1 }]],
    ['an event with a numeric kind', [{ kind: 5, body: 1 }]],
    ['an event with a symbol body', [{ kind: 'tool/result', body: Symbol('hostile') }]],
    ['an event with a bigint body', [{ kind: 'tool/result', body: 10n }]],
    ['an event with a NaN body', [{ kind: 'tool/result', body: NaN }]],
    ['an event with a function body', [{ kind: 'tool/result', body: () => 1 }]],
    ['an event body with throwing getters', [{ kind: 'tool/result', body: throwingGetters() }]],
    ['an event with throwing getters', [throwingGetters()]],
    ['an event that is a Proxy whose traps throw', [throwingProxy({})]],
  ];
}

/** Junk for an array of persisted locals. */
function localsJunk(isRequired: boolean): Hostile[] {
  const local = { key: 'app.memory', scope: 'agent', version: 1, data: 1 };
  return [
    ...required(isRequired),
    ['null', null],
    ['the string "x"', 'x'],
    ['an empty object', {}],
    ['an object with throwing getters', throwingGetters()],
    ['an array Proxy whose traps throw', throwingProxy([])],
    ['[null]', [null]],
    ['a local with scope "turn"', [{ ...local, scope: 'turn' }]],
    ['a local with an empty key', [{ ...local, key: '' }]],
    ['a local with version 0', [{ ...local, version: 0 }]],
    ['a local with version 1.5', [{ ...local, version: 1.5 }]],
    ['a local without data', [{ key: 'app.memory', scope: 'agent', version: 1 }]],
    ['a local with a symbol as data', [{ ...local, data: Symbol('hostile') }]],
    ['the same local twice', [local, { ...local, data: 2 }]],
    ['a local with throwing getters', [throwingGetters()]],
    ['a local that is a Proxy whose traps throw', [throwingProxy({})]],
  ];
}

/** Extra fields (and a symbol key) on a value of the right shape: a store may ignore them or refuse them. */
const withExtras = <T extends object>(value: T): T => ({ ...value, hostileExtra: { nested: [1, 2] }, epochs: 'many', [Symbol('hostile')]: true });

/** Junk for a lease argument, against the sessions of {@link hostileSetup}. */
function leaseJunk(h: HostileSetup, isRequired: boolean): Hostile[] {
  const { la } = h;
  return [
    ...required(isRequired),
    ...anyJunk(),
    ['5', 5],
    ['the string "hostile"', 'hostile'],
    ['an empty string', ''],
    ['an empty array', []],
    ['an empty object', {}],
    ['a lease without epoch', { sessionId: la.sessionId, owner: la.owner }],
    ['a lease without owner', { sessionId: la.sessionId, epoch: la.epoch }],
    ['a lease without sessionId', { owner: la.owner, epoch: la.epoch }],
    ['a lease with epoch 0', { ...la, epoch: 0 }],
    ['a lease with epoch -1', { ...la, epoch: -1 }],
    ['a lease with epoch 1.5', { ...la, epoch: 1.5 }],
    ['a lease with epoch NaN', { ...la, epoch: NaN }],
    ['a lease with the string epoch "1"', { ...la, epoch: String(la.epoch) }],
    ['a lease with a numeric owner', { ...la, owner: 5 }],
    ['a lease with an empty owner', { ...la, owner: '' }],
    ['a lease with a numeric sessionId', { ...la, sessionId: 5 }],
    ['a lease with a sessionId with NUL', { ...la, sessionId: `${la.sessionId}\u0000` }],
    ['a lease with a throwing epoch getter', leaseWithThrowingEpoch(la)],
    ['a lease that is a Proxy whose traps throw', throwingProxy({ ...la })],
  ];
}

function leaseWithThrowingEpoch(la: Lease): object {
  const o = { sessionId: la.sessionId, owner: la.owner };
  Object.defineProperty(o, 'epoch', {
    enumerable: true,
    get(): never {
      throw new HostileReadError('the getter of "epoch"');
    },
  });
  return o;
}

/** Junk for an attempt `{ turn, attempt }` argument (shape only). */
function attemptJunk(): Hostile[] {
  return [
    ...objectJunk(true),
    ['an attempt without attempt', { turn: 2 }],
    ['an attempt without turn', { attempt: 2 }],
    ['an attempt with the string turn "2"', { turn: '2', attempt: 2 }],
    ['an attempt with turn 0', { turn: 0, attempt: 1 }],
    ['an attempt with turn -1', { turn: -1, attempt: 1 }],
    ['an attempt with attempt 0', { turn: 2, attempt: 0 }],
    ['an attempt with attempt 1.5', { turn: 2, attempt: 1.5 }],
    ['an attempt with attempt NaN', { turn: 2, attempt: NaN }],
    ['an attempt with a bigint turn', { turn: 2n, attempt: 2 }],
  ];
}

/**
 * The state the hostile calls run against. Session A: turn 1 committed by `la`, attempt
 * (2, 1) aborted, attempt (2, 2) open with one flushed event, `la` live. Session B: free (its
 * lease `lb` released). Session C: never created.
 */
interface HostileSetup {
  readonly agentId: string;
  readonly la: Lease;
  readonly lb: Lease;
  /** `la`'s owner and epoch pointed at session B. */
  readonly forged: Lease;
  readonly committed: TurnAttempt;
  readonly aborted: TurnAttempt;
  readonly open: TurnAttempt;
  readonly c: string;
  readonly ids: readonly string[];
}

async function hostileSetup(store: SessionStore, ctx: CheckContext): Promise<HostileSetup> {
  const agentId = `${ctx.prefix}agent`;
  const a = ctx.id('a');
  const b = ctx.id('b');
  const c = ctx.id('c');
  const la = await store.create({ sessionId: a, agentId, owner: 'hostile-a', ttlMs: LONG_TTL, meta: { m: 1 }, locals: locals(0) });
  const t1 = await store.begin(la);
  await store.commit(la, { ...t1, events: [msg('one')], locals: locals(1) });
  const t2 = await store.begin(la);
  await store.abort(la, { ...t2, events: [note('aborted')], reason: 'Error: boom' });
  const t3 = await store.begin(la);
  await store.append(la, t3, [note('flushed')]);
  const lb = await store.create({ sessionId: b, agentId, owner: 'hostile-b', ttlMs: LONG_TTL, locals: [] });
  assert.equal(await store.release(lb), true);
  const at = (x: TurnAttempt): TurnAttempt => ({ turn: x.turn, attempt: x.attempt });
  return { agentId, la, lb, forged: { sessionId: b, owner: la.owner, epoch: la.epoch }, committed: at(t1), aborted: at(t2), open: at(t3), c, ids: [a, b, c] };
}

/** One hostile call: how to name it, whether it must reject, and the call itself. */
interface HostileCase {
  readonly call: string;
  readonly mustReject: boolean;
  readonly run: () => unknown;
}

/** The hostile calls of one argument of one method. */
interface HostileGroup {
  readonly what: string;
  readonly cases: readonly HostileCase[];
}

/** The parameter names of the store methods, for the failure messages. */
const PARAMS: Record<string, readonly string[]> = {
  create: ['input'],
  acquire: ['sessionId', 'options'],
  renew: ['lease', 'options'],
  release: ['lease'],
  begin: ['lease', 'options'],
  append: ['lease', 'attempt', 'events'],
  commit: ['lease', 'input'],
  abort: ['lease', 'input'],
  rollback: ['lease', 'turn'],
  pin: ['lease', 'turn', 'label'],
  load: ['sessionId', 'options'],
  attemptStatus: ['sessionId', 'attempt'],
  checkpoints: ['sessionId'],
  list: ['query'],
  delete: ['sessionId', 'options'],
  events: ['sessionId', 'query'],
};

/** `{ ...base }` with `field` set to each hostile value (or removed, for `undefined`). */
function fieldJunk(param: string, base: Record<string, unknown>, field: string, values: Hostile[]): Hostile[] {
  return values.map(([label, value]): Hostile => {
    if (value === undefined) {
      const { [field]: _dropped, ...rest } = base;
      return [`${param} without ${field}`, rest];
    }
    return [`${param}.${field} = ${label}`, { ...base, [field]: value }];
  });
}

/** Every hostile call, grouped by method and argument. */
function hostileGroups(store: SessionStore, h: HostileSetup): HostileGroup[] {
  const groups: HostileGroup[] = [];
  const s = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const { la, forged, lb, open, committed, aborted, agentId } = h;
  const A = la.sessionId;
  const B = lb.sessionId;
  /** Hostile values for argument `pos` of `method`; the other arguments are `args`. */
  const group = (method: string, pos: number, args: readonly unknown[], values: Hostile[], mustReject = true): void => {
    const params = PARAMS[method];
    const cases = values.map(([label, value]): HostileCase => {
      const shown = params.map((p, i) => (i !== pos ? p : label.startsWith(`${p} `) || label.startsWith(`${p}.`) ? label : `${p} = ${label}`));
      const callArgs = args.slice();
      callArgs[pos] = value;
      while (callArgs.length > 0 && callArgs[callArgs.length - 1] === undefined && callArgs.length - 1 !== pos) callArgs.pop();
      const run =
        method === 'events'
          ? () => {
              const iterator = (s.events(...callArgs) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
              const first = iterator.next();
              if (!isThenable(first)) return first;
              return Promise.resolve(first).then(async (r) => {
                await iterator.return?.();
                return r;
              });
            }
          : () => s[method](...callArgs);
      return { call: `store.${method}(${shown.join(', ')})`, mustReject, run };
    });
    groups.push({ what: `store.${method}() with ${params[pos].endsWith('s') ? '' : 'a '}hostile ${params[pos]}`, cases });
  };
  /** A lease argument: junk must reject; a lease of another session is refused by every fenced write, and `release` may answer false. */
  const leaseGroup = (method: string, pos: number, args: readonly unknown[], fenced: boolean): void => {
    group(method, pos, args, leaseJunk(h, true));
    group(
      method,
      pos,
      args,
      [
        ['the released lease of another session', lb],
        ["this lease's owner and epoch on another session", forged],
        ['a lease of another session with extra fields', withExtras(forged)],
      ],
      fenced,
    );
  };

  // create
  const createInput = { sessionId: h.c, agentId, owner: 'hostile-c', incarnation: 'hostile-incarnation', ttlMs: LONG_TTL, meta: { m: 1 }, locals: locals(0) };
  group('create', 0, [createInput], [
    ...objectJunk(true),
    ...fieldJunk('input', createInput, 'sessionId', nameJunk(true)),
    ...fieldJunk('input', createInput, 'agentId', nameJunk(true)),
    ...fieldJunk('input', createInput, 'owner', nameJunk(true)),
    ...fieldJunk('input', createInput, 'incarnation', nameJunk(false)),
    ...fieldJunk('input', createInput, 'ttlMs', intJunk(true, 1)),
    ...fieldJunk('input', createInput, 'meta', jsonJunk(false)),
    ...fieldJunk('input', createInput, 'locals', localsJunk(true)),
  ]);
  group('create', 0, [createInput], [['input with extra fields (for a stored id)', withExtras({ ...createInput, sessionId: A })]], false);

  // acquire: B is free, so a malformed acquire that got through would take it
  const acquireOptions = { owner: 'hostile-x', incarnation: 'hostile-incarnation', ttlMs: LONG_TTL };
  group('acquire', 0, [undefined, acquireOptions], nameJunk(true));
  group('acquire', 1, [B, undefined], [
    ...objectJunk(true),
    ...fieldJunk('options', acquireOptions, 'owner', nameJunk(true)),
    ...fieldJunk('options', acquireOptions, 'incarnation', nameJunk(false)),
    ...fieldJunk('options', acquireOptions, 'ttlMs', intJunk(true, 1)),
  ]);
  group('acquire', 1, [A, undefined], [['options with extra fields (for a leased session)', withExtras(acquireOptions)]], false);

  // lease methods
  leaseGroup('renew', 0, [undefined], true);
  group('renew', 1, [la, undefined], [...objectJunk(false), ...fieldJunk('options', {}, 'ttlMs', intJunk(false, 1))]);
  leaseGroup('release', 0, [undefined], false);
  leaseGroup('begin', 0, [undefined], true);
  group('begin', 1, [la, undefined], [
    ...objectJunk(false),
    ...fieldJunk('options', {}, 'replaceOpen', boolJunk()),
    ...fieldJunk('options', {}, 'key', nameJunk(false)),
    ...fieldJunk('options', { key: 'k' }, 'keyWindow', intJunk(false, 1)),
  ]);
  group('begin', 1, [la, undefined], [['options with extra fields (an attempt is open)', withExtras({})]], false);
  const events = [note('hostile append')];
  leaseGroup('append', 0, [undefined, open, events], true);
  group('append', 1, [la, undefined, events], [
    ...attemptJunk(),
    ['the committed attempt', committed],
    ['the aborted attempt', aborted],
    ['an attempt never begun', { turn: open.turn, attempt: open.attempt + 1 }],
    ['an attempt of a future turn', { turn: open.turn + 5, attempt: 1 }],
  ]);
  group('append', 2, [la, open, undefined], eventsJunk(true).filter(([label]) => label !== 'undefined'));
  group('append', 2, [la, open, undefined], [['undefined', undefined]]);
  const commitInput = { ...open, events: [msg('hostile commit')], locals: locals(2) };
  leaseGroup('commit', 0, [undefined, commitInput], true);
  group('commit', 1, [la, undefined], [
    ...objectJunk(true),
    ...fieldJunk('input', commitInput, 'turn', intJunk(true, 1)),
    ...fieldJunk('input', commitInput, 'attempt', intJunk(true, 1)),
    ...fieldJunk('input', commitInput, 'events', eventsJunk(false)),
    ...fieldJunk('input', commitInput, 'locals', localsJunk(true)),
    ...fieldJunk('input', commitInput, 'keepCheckpoints', intJunk(false, 0)),
    ['input of the aborted attempt', { ...commitInput, ...aborted }],
    ['input of an attempt never begun', { ...commitInput, attempt: open.attempt + 1 }],
    ['input of a future turn', { ...commitInput, turn: open.turn + 1, attempt: 1 }],
  ]);
  group('commit', 1, [la, undefined], [['input with extra fields (a repeat of the committed attempt)', withExtras({ ...committed, events: [msg('one')], locals: locals(1) })]], false);
  const abortInput = { ...open, events: [note('hostile abort')], reason: 'hostile' };
  leaseGroup('abort', 0, [undefined, abortInput], true);
  group('abort', 1, [la, undefined], [
    ...objectJunk(true),
    ...fieldJunk('input', abortInput, 'turn', intJunk(true, 1)),
    ...fieldJunk('input', abortInput, 'attempt', intJunk(true, 1)),
    ...fieldJunk('input', abortInput, 'events', eventsJunk(false)),
    ...fieldJunk('input', abortInput, 'reason', stringJunk()),
    ['input of the committed attempt', { ...abortInput, ...committed }],
    ['input of an attempt never begun', { ...abortInput, attempt: open.attempt + 1 }],
  ]);
  group('abort', 1, [la, undefined], [['input with extra fields (a repeat of the aborted attempt)', withExtras({ ...aborted })]], false);
  leaseGroup('rollback', 0, [undefined, 0], true);
  group('rollback', 1, [la, undefined], intJunk(true, 0));
  leaseGroup('pin', 0, [undefined, 0, 'hostile'], true);
  group('pin', 1, [la, undefined, 'hostile'], intJunk(true, 0));
  group('pin', 2, [la, 0, undefined], nameJunk(false));

  // reads
  group('load', 0, [undefined], nameJunk(true));
  group('load', 1, [A, undefined], [...objectJunk(false), ...fieldJunk('options', {}, 'turn', intJunk(false, 0))]);
  group('load', 1, [A, undefined], [['options with extra fields', withExtras({})]], false);
  if (typeof store.attemptStatus === 'function') {
    group('attemptStatus', 0, [undefined, committed], nameJunk(true));
    group('attemptStatus', 1, [A, undefined], attemptJunk());
    group('attemptStatus', 1, [A, undefined], [['an attempt with extra fields', withExtras({ ...committed })]], false);
  }
  group('checkpoints', 0, [undefined], nameJunk(true));
  group('list', 0, [undefined], [
    ...objectJunk(false),
    ...fieldJunk('query', {}, 'agentId', nameJunk(false)),
    ...fieldJunk('query', {}, 'limit', intJunk(false, 1, 1000)),
    ...fieldJunk('query', {}, 'cursor', [...stringJunk(), ['a forged cursor', 'hostile']]),
  ]);
  group('list', 0, [undefined], [['a query with extra fields', withExtras({ agentId })]], false);
  group('events', 0, [undefined], nameJunk(true));
  group('events', 1, [A, undefined], [...objectJunk(false), ...fieldJunk('query', {}, 'afterSeq', intJunk(false, 0)), ...fieldJunk('query', {}, 'limit', intJunk(false, 0))]);
  group('events', 1, [A, undefined], [['a query with extra fields', withExtras({})]], false);

  // delete: A is leased by la, so only a malformed option could delete it
  group('delete', 0, [undefined], nameJunk(true));
  group('delete', 1, [A, undefined], [
    ...objectJunk(false),
    ...fieldJunk(
      'options',
      {},
      'lease',
      leaseJunk(h, false).filter(([label]) => label !== 'undefined'),
    ),
    ...fieldJunk('options', {}, 'force', boolJunk()),
  ]);
  group('delete', 1, [A, undefined], [
    ['options with extra fields', withExtras({})],
    ['options with the lease of another session', { lease: forged }],
  ], false);
  return groups;
}

/** Runs one hostile call: a failure message, or `undefined` when the store handled it. */
async function tryHostile(c: HostileCase): Promise<{ failure?: string; resolved: boolean; timedOut: boolean }> {
  let r: unknown;
  try {
    r = c.run();
  } catch (err) {
    return { failure: `${c.call} threw synchronously instead of rejecting: ${describe(err)}`, resolved: false, timedOut: false };
  }
  if (!isThenable(r)) return { failure: `${c.call} returned ${r === null ? 'null' : typeof r}, not a promise`, resolved: false, timedOut: false };
  try {
    await r;
  } catch (err) {
    if (err instanceof CallTimeoutError) return { failure: `${c.call}: ${err.message}`, resolved: false, timedOut: true };
    if (err instanceof TypeError || err instanceof SessionError) return { resolved: false, timedOut: false };
    return { failure: `${c.call} rejected with ${describe(err)}; bad input is refused with a TypeError (or a SessionError)`, resolved: false, timedOut: false };
  }
  return { failure: c.mustReject ? `${c.call} resolved; it must reject (a TypeError for malformed input)` : undefined, resolved: true, timedOut: false };
}

/**
 * What a store holds of `ids` and of `agentId`'s list, as plain JSON (the lease's remaining
 * time left out): two equal results mean nothing was written.
 */
async function stateOf(store: SessionStore, ids: readonly string[], agentId: string): Promise<unknown> {
  const out: unknown[] = [];
  for (const id of ids) {
    let loaded: LoadedSession;
    try {
      loaded = await store.load(id);
    } catch (err) {
      if (err instanceof SessionError && err.code === 'SESSION_NOT_FOUND') {
        out.push({ id, absent: true });
        continue;
      }
      throw err;
    }
    const { lease, ...info } = loaded.info;
    out.push({
      id,
      info,
      lease: lease === undefined ? null : { owner: lease.owner, epoch: lease.epoch },
      checkpoint: loaded.checkpoint,
      history: loaded.history,
      open: loaded.open ?? null,
      checkpoints: loaded.checkpoints,
      events: await collect(store.events(id)),
    });
  }
  out.push({ list: (await store.list({ agentId })).items });
  return JSON.parse(JSON.stringify(out)) as unknown;
}

/** Whether two {@link stateOf} results are the same. */
function sameState(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

/** Calls `call` (which must not throw synchronously) and expects a rejection with a `TypeError` or a `SessionError`. */
async function refused(call: () => unknown, what: string): Promise<void> {
  let p: unknown;
  try {
    p = call();
  } catch (err) {
    assert.fail(`${what}: threw synchronously instead of rejecting: ${describe(err)}`);
  }
  assert.ok(isThenable(p), `${what}: did not return a promise`);
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TypeError || err instanceof SessionError, `${what}: expected a TypeError or a SessionError, got ${describe(err)}`);
    return;
  }
  assert.fail(`${what}: resolved, expected a rejection`);
}

/** Awaits a call that must resolve; a rejection fails with `what` and the error (its code included). */
async function resolves<T>(p: Promise<T>, what: string): Promise<T> {
  try {
    return await p;
  } catch (err) {
    assert.fail(`${what}: rejected with ${describe(err)}`);
  }
}

/** The store's `attemptStatus`, which the check requiring it knows is there. */
function statusOf(store: SessionStore, sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
  const f = store.attemptStatus;
  if (f === undefined) throw new TypeError('the store has no attemptStatus()');
  return f.call(store, sessionId, attempt);
}

const attemptOf = (x: TurnAttempt): [number, number] => [x.turn, x.attempt];

const faultChecks: Check[] = [
  {
    name: 'every method rejects for hostile input of any type (never a synchronous throw), with a TypeError or a SessionError, and writes nothing',
    run: async (ctx) => {
      const store = await ctx.store();
      const h = await hostileSetup(store, ctx);
      // the report shows the first few failures of each method and argument, then a count
      const lines: string[] = [];
      let failed = 0;
      let timeouts = 0;
      let before = await stateOf(store, h.ids, h.agentId);
      let calls = 0;
      outer: for (const g of hostileGroups(store, h)) {
        const resolved: string[] = [];
        const failures: string[] = [];
        let stop = false;
        for (const c of g.cases) {
          calls += 1;
          const r = await tryHostile(c);
          if (r.failure !== undefined) failures.push(r.failure);
          if (r.resolved) resolved.push(c.call);
          if (r.timedOut && ++timeouts >= 3) {
            stop = true;
            break;
          }
        }
        failed += failures.length;
        lines.push(...failures.slice(0, 3));
        if (failures.length > 3) lines.push(`… and ${failures.length - 3} more of ${g.what}`);
        const after = await stateOf(store, h.ids, h.agentId);
        if (!sameState(before, after)) {
          failed += 1;
          lines.push(`${g.what} wrote to the store (its state changed); ${resolved.length > 0 ? `the calls that resolved: ${resolved.slice(0, 5).join('; ')}${resolved.length > 5 ? `; … and ${resolved.length - 5} more` : ''}` : 'although every call rejected'}`);
          before = after;
        }
        if (stop) {
          lines.push('(stopped after 3 calls that did not settle)');
          break outer;
        }
      }
      if (failed > 0) assert.fail(`${failed} of ${calls} hostile calls were mishandled:\n- ${lines.join('\n- ')}`);
    },
  },
  {
    name: 'a repeated commit or abort of an attempt its lease ended resolves to the same result and writes nothing (after later turns, from another store object, after the lease expired); a commit of an aborted attempt is refused',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx);
      const id = lease.sessionId;
      const state = (): Promise<unknown> => stateOf(a, [id], `${ctx.prefix}agent`);
      const t1 = await a.begin(lease);
      await a.append(lease, t1, [note('flushed')]);
      const input1 = { ...t1, events: [msg('one'), note('buffered')], locals: locals(1) };
      const c1 = await a.commit(lease, input1);
      const asFirst = async (p: Promise<CommittedTurn>, what: string): Promise<void> => {
        const c = await p;
        assert.deepEqual([c.turn, c.attempt, c.lastSeq, c.committedAt.getTime()], [c1.turn, c1.attempt, c1.lastSeq, c1.committedAt.getTime()], `${what}: resolves to the first commit's result`);
      };
      let before = await state();
      await asFirst(a.commit(lease, input1), 'a repeated commit');
      await asFirst(b.commit(lease, input1), 'a repeated commit through another store object');
      assert.deepEqual(await state(), before, 'the repeated commits wrote nothing (same events, same lastSeq, same checkpoints)');
      const t2 = await a.begin(lease);
      before = await state();
      await asFirst(a.commit(lease, input1), 'a repeated commit while the next attempt is open');
      assert.deepEqual(await state(), before, 'a repeat while the next attempt is open wrote nothing and left that attempt open');
      await a.commit(lease, { ...t2, events: [msg('two')], locals: locals(2) });
      before = await state();
      await asFirst(b.commit(lease, input1), 'a repeated commit after a later turn committed');
      assert.deepEqual(await state(), before, 'a repeat after a later turn wrote nothing and did not set committedTurn back');
      assert.equal((await a.load(id)).info.committedTurn, 2);
      const t3 = await a.begin(lease);
      const abort3 = { ...t3, events: [note('tool ran')], reason: 'Error: boom' };
      await a.abort(lease, abort3);
      before = await state();
      assert.equal(await a.abort(lease, abort3), undefined, 'a repeated abort resolves');
      assert.equal(await b.abort(lease, abort3), undefined, 'a repeated abort through another store object resolves');
      assert.deepEqual(await state(), before, 'the repeated aborts wrote nothing');
      await refused(() => a.commit(lease, { ...t3, events: [msg('late')], locals: locals(3) }), 'commit of the aborted attempt');
      await refused(() => b.commit(lease, { ...t3, events: [], locals: locals(3) }), 'commit of the aborted attempt through another store object');
      await refused(() => a.abort(lease, { ...t1 }), 'abort of a committed attempt');
      assert.deepEqual(await state(), before, 'the refused calls wrote nothing');
      assert.deepEqual(attemptOf(await a.begin(lease)), [3, 2], 'the next attempt reuses the turn number');
      // a retry that comes after the lease expired: still the recorded lease, so still answered
      const short = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const s1 = await a.begin(short);
      const sInput = { ...s1, events: [msg('just before expiry')], locals: locals(1) };
      const first = await a.commit(short, sInput);
      await sleep(ctx.ttl * 1.5 + 50);
      const late = await resolves(b.commit(short, sInput), 'a repeated commit after the lease expired (no other acquire meanwhile)');
      assert.deepEqual([late.turn, late.attempt, late.lastSeq], [first.turn, first.attempt, first.lastSeq], 'a repeated commit after the lease expired resolves to the first result');
      await b.acquire(short.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      await rejects(() => a.commit(short, sInput), 'LEASE_LOST', 'a repeated commit after another owner acquired the session');
    },
  },
  {
    name: 'every store call settles within callTimeoutMs: each method once, refusals, the events iterator and close',
    run: async (ctx) => {
      const [store, other] = await ctx.peers(2);
      const lease = await create(store, ctx, 'owner-1');
      const id = lease.sessionId;
      await refused(() => other.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL }), 'acquire of a leased session');
      const a = await store.begin(lease);
      await refused(() => store.begin(lease), 'begin while an attempt is open');
      await store.append(lease, a, [note('flushed')]);
      await store.commit(lease, { ...a, events: [msg('one')], locals: locals(1) });
      await store.commit(lease, { ...a, events: [msg('one')], locals: locals(1) });
      const b = await store.begin(lease);
      await store.abort(lease, { ...b, reason: 'Error: boom' });
      await store.abort(lease, { ...b, reason: 'Error: boom' });
      await store.pin(lease, 1, 'one');
      await store.renew(lease);
      await store.rollback(lease, 0);
      await store.load(id);
      if (typeof store.attemptStatus === 'function') await store.attemptStatus(id, a);
      await store.checkpoints(id);
      await store.list({ agentId: `${ctx.prefix}agent` });
      await collect(other.events(id));
      await refused(() => other.load(ctx.id('missing')), 'load of an unknown session');
      assert.equal(await store.release(lease), true);
      assert.equal(await store.release(lease), false);
      await refused(() => store.begin(lease), 'begin with a released lease');
      const next = await other.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(await other.delete(id, { lease: next }), true);
      assert.equal(await other.delete(id), false);
      await store.close();
      await store.close();
      await refused(() => store.load(id), 'load after close');
    },
  },
  {
    name: 'attemptStatus (optional) reports committed, aborted, open and absent, and needs no lease: after an expiry, a take-over or a release, from any store object',
    requires: 'attemptStatus',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const id = lease.sessionId;
      assert.equal(await statusOf(a, id, { turn: 1, attempt: 1 }), 'absent', 'an attempt never begun');
      const t1 = await a.begin(lease);
      assert.equal(await statusOf(b, id, t1), 'open', 'a begun attempt');
      await a.abort(lease, { ...t1, events: [note('failed')] });
      assert.equal(await statusOf(b, id, t1), 'aborted', 'an aborted attempt');
      const t2 = await a.begin(lease);
      assert.deepEqual(attemptOf(t2), [1, 2]);
      await a.commit(lease, { ...t2, events: [msg('one')], locals: locals(1) });
      assert.equal(await statusOf(a, id, t2), 'committed', 'a committed attempt');
      assert.equal(await statusOf(b, id, t2), 'committed', 'a committed attempt, read through another store object');
      assert.equal(await statusOf(b, id, t1), 'aborted', 'the earlier attempt of a committed turn stays aborted');
      for (const x of [
        { turn: 1, attempt: 3 },
        { turn: 2, attempt: 1 },
        { turn: 7, attempt: 1 },
      ]) {
        assert.equal(await statusOf(b, id, x), 'absent', `attempt ${x.turn}.${x.attempt}, never begun`);
      }
      const t3 = await a.begin(lease);
      await a.append(lease, t3, [note('flushed')]);
      await sleep(ctx.ttl * 1.5 + 50);
      await refused(() => a.renew(lease), 'renew after expiry');
      assert.equal(await statusOf(b, id, t3), 'open', 'an open attempt whose lease expired');
      assert.equal(await statusOf(a, id, t2), 'committed', 'a committed attempt, read after its lease expired');
      const taken = await b.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(await statusOf(a, id, t3), 'open', 'taken over, the attempt is still open until aborted');
      assert.equal(await statusOf(a, id, t2), 'committed', 'read by the former holder after a take-over');
      await b.abort(taken, { ...t3, reason: 'interrupted' });
      assert.equal(await statusOf(a, id, t3), 'aborted', 'an interrupted attempt aborted by the new holder');
      assert.equal(await b.release(taken), true);
      assert.equal((await a.load(id)).info.lease, undefined);
      assert.deepEqual([await statusOf(a, id, t1), await statusOf(a, id, t2), await statusOf(b, id, t3)], ['aborted', 'committed', 'aborted'], 'read with no lease at all');
      await rejects(() => statusOf(b, ctx.id('missing'), { turn: 1, attempt: 1 }), 'SESSION_NOT_FOUND', 'attemptStatus of an unknown session');
    },
  },
  {
    name: 'begin({ replaceOpen: true }) ends an attempt left open by the same lease as aborted and opens the next attempt of the turn; an attempt of another epoch stays SESSION_BUSY',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      const id = lease.sessionId;
      const t1 = await resolves(a.begin(lease, { replaceOpen: true }), 'begin({ replaceOpen: true }) with nothing open');
      assert.deepEqual(attemptOf(t1), [1, 1], 'with nothing open, replaceOpen is a plain begin');
      await a.append(lease, t1, [note('flushed by the attempt whose begin reply was lost')]);
      await rejects(() => a.begin(lease), 'SESSION_BUSY', 'begin without replaceOpen while an attempt is open');
      await rejects(() => a.begin(lease, { replaceOpen: false }), 'SESSION_BUSY', 'begin({ replaceOpen: false }) while an attempt is open');
      const t2 = await resolves(b.begin(lease, { replaceOpen: true }), 'begin({ replaceOpen: true }) through another store object while an attempt begun with this lease is open');
      assert.deepEqual(attemptOf(t2), [1, 2], 'the next attempt of the same turn');
      let loaded = await a.load(id);
      assert.deepEqual(loaded.open && attemptOf(loaded.open), [1, 2], 'the new attempt is the open one');
      assert.deepEqual(
        (await collect(a.events(id))).map((e) => [e.turn, e.attempt, e.status]),
        [[1, 1, 'aborted']],
        'the replaced attempt is aborted with its events',
      );
      if (typeof a.attemptStatus === 'function') assert.deepEqual([await statusOf(a, id, t1), await statusOf(a, id, t2)], ['aborted', 'open']);
      await refused(() => a.commit(lease, { ...t1, events: [], locals: locals(1) }), 'commit of the replaced attempt');
      await refused(() => a.append(lease, t1, [note('late')]), 'append to the replaced attempt');
      await a.commit(lease, { ...t2, events: [msg('one')], locals: locals(1) });
      loaded = await a.load(id);
      assert.equal(loaded.info.committedTurn, 1);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['one'],
      );
      const t3 = await a.begin(lease);
      assert.equal(await a.release(lease), true);
      const next = await b.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      const seq = (await b.load(id)).info.lastSeq;
      await rejects(() => b.begin(next, { replaceOpen: true }), 'SESSION_BUSY', 'replaceOpen with an attempt begun under another epoch');
      loaded = await b.load(id);
      assert.deepEqual(loaded.open && [loaded.open.turn, loaded.open.attempt, loaded.open.epoch], [2, 1, lease.epoch], 'the attempt of the other epoch is still open');
      assert.equal(loaded.info.lastSeq, seq, 'the refused begin wrote nothing');
      await b.abort(next, { ...t3, reason: 'interrupted' });
      assert.deepEqual(attemptOf(await b.begin(next, { replaceOpen: true })), [2, 2]);
    },
  },
  {
    name: "acquire by the same owner with another incarnation takes a live lease over at once (epoch + 1) and the old lease is LEASE_LOST ('owner-reused'); with the same incarnation it is SESSION_BUSY",
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const id = ctx.id();
      const ttlMs = LONG_TTL;
      const first = await a.create({ sessionId: id, agentId: `${ctx.prefix}agent`, owner: 'svc', incarnation: 'inc-1', ttlMs, locals: locals(0) });
      assert.deepEqual([first.owner, first.epoch, first.incarnation], ['svc', 1, 'inc-1'], 'the lease records its incarnation');
      const open = await a.begin(first);
      await a.append(first, open, [note('before the restart')]);
      await rejects(() => b.acquire(id, { owner: 'svc', incarnation: 'inc-1', ttlMs }), 'SESSION_BUSY', 'acquire by the same incarnation');
      await rejects(() => b.acquire(id, { owner: 'svc', ttlMs }), 'SESSION_BUSY', 'acquire by the same owner without an incarnation');
      await rejects(() => b.acquire(id, { owner: 'other', incarnation: 'inc-2', ttlMs }), 'SESSION_BUSY', 'acquire by another owner');
      const second = await resolves(b.acquire(id, { owner: 'svc', incarnation: 'inc-2', ttlMs }), 'acquire by the same owner with another incarnation, while the lease is live');
      assert.deepEqual([second.sessionId, second.owner, second.epoch, second.incarnation], [id, 'svc', 2, 'inc-2'], 'taken over at once, one epoch up');
      const held = (await a.load(id)).info.lease;
      assert.deepEqual(held && [held.owner, held.epoch], ['svc', 2]);
      const seq = (await a.load(id)).info.lastSeq;
      const lost = (await rejects(() => a.commit(first, { ...open, events: [msg('stale')], locals: locals(1) }), 'LEASE_LOST', 'commit with the lease of the old incarnation')) as SessionError;
      assert.equal((lost.cause as { reason?: unknown } | undefined)?.reason, 'owner-reused', "the LEASE_LOST of a lease taken over by another incarnation of its owner has cause.reason 'owner-reused'");
      await rejects(() => a.append(first, open, [note('stale')]), 'LEASE_LOST', 'append with the lease of the old incarnation');
      await rejects(() => a.begin(first), 'LEASE_LOST', 'begin with the lease of the old incarnation');
      await rejects(() => a.renew(first), 'LEASE_LOST', 'renew with the lease of the old incarnation');
      assert.equal(await a.release(first), false, 'the old incarnation can not release the new lease');
      assert.equal((await a.load(id)).info.lastSeq, seq, 'the old incarnation wrote nothing');
      await rejects(() => a.acquire(id, { owner: 'svc', incarnation: 'inc-2', ttlMs }), 'SESSION_BUSY', 'the new incarnation does not take its own lease over');
      await rejects(() => b.begin(second, { replaceOpen: true }), 'SESSION_BUSY', "the old incarnation's attempt is of another epoch");
      await b.abort(second, { ...open, reason: 'interrupted' });
      const t = await b.begin(second);
      assert.deepEqual(attemptOf(t), [1, 2]);
      await b.commit(second, { ...t, events: [msg('after the restart')], locals: locals(1) });
      const third = await resolves(a.acquire(id, { owner: 'svc', incarnation: 'inc-3', ttlMs }), 'acquire by a third incarnation');
      assert.equal(third.epoch, 3);
      await rejects(() => b.begin(second), 'LEASE_LOST', 'the second incarnation, taken over in turn');
      const loaded = await a.load(id);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['after the restart'],
      );
    },
  },
  {
    name: 'begin({ key }) (a store whose turnKeys is true): a key of a committed turn of the current timeline among the last keyWindow turns is TURN_ALREADY_COMMITTED with turn, writing nothing, from any store object and any later lease; aborted attempts, older turns and turns superseded by a rollback do not count',
    requires: 'turnKeys',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      const id = lease.sessionId;
      const commitKeyed = async (store: SessionStore, key: string, content: string): Promise<TurnAttempt> => {
        const t = await resolves(store.begin(lease, { key }), `begin({ key: ${JSON.stringify(key)} })`);
        await store.commit(lease, { ...t, events: [msg(content)], locals: locals(t.turn) });
        return t;
      };
      const refusedKey = async (store: SessionStore, l: Lease, options: { key: string; keyWindow?: number; replaceOpen?: boolean }, turn: number, what: string): Promise<void> => {
        const before = await store.load(id);
        const events = (await collect(store.events(id))).length;
        const err = (await rejects(() => store.begin(l, options), 'TURN_ALREADY_COMMITTED', what)) as SessionError;
        assert.equal(err.turn, turn, `${what}: the error's turn is the committed turn with that key`);
        assert.equal(err.sessionId, id, `${what}: the error names the session`);
        const after = await store.load(id);
        assert.deepEqual(
          [after.info.committedTurn, after.info.lastSeq, after.open && attemptOf(after.open), (await collect(store.events(id))).length],
          [before.info.committedTurn, before.info.lastSeq, before.open && attemptOf(before.open), events],
          `${what}: nothing was written`,
        );
      };
      // an aborted attempt's key does not count
      const t1 = await resolves(a.begin(lease, { key: 'k1' }), 'begin({ key })');
      await a.abort(lease, { ...t1, reason: 'failed' });
      const t1b = await commitKeyed(a, 'k1', 'one');
      assert.deepEqual(attemptOf(t1b), [1, 2], 'the key of an aborted attempt does not count');
      await refusedKey(b, lease, { key: 'k1' }, 1, 'begin with the key of committed turn 1, through another store object');
      await refusedKey(a, lease, { key: 'k1', replaceOpen: true }, 1, 'begin({ key, replaceOpen: true }) with that key');
      // the key is checked before an open attempt: nothing is replaced
      const open = await resolves(a.begin(lease, { key: 'k2' }), 'begin with a new key');
      await refusedKey(a, lease, { key: 'k1', replaceOpen: true }, 1, 'begin({ key, replaceOpen: true }) with that key while an attempt is open');
      await a.commit(lease, { ...open, events: [msg('two')], locals: locals(2) });
      await commitKeyed(b, 'k3', 'three');
      // the window: the last keyWindow committed turns (default 20)
      await refusedKey(a, lease, { key: 'k2', keyWindow: 2 }, 2, 'begin with the key of turn 2 and keyWindow 2 (committed turn 3)');
      const outside = await resolves(a.begin(lease, { key: 'k1', keyWindow: 2 }), 'begin with the key of turn 1 and keyWindow 2 (committed turn 3): out of the window');
      assert.deepEqual(attemptOf(outside), [4, 1]);
      await a.abort(lease, { ...outside, reason: 'test' });
      await refusedKey(a, lease, { key: 'k1' }, 1, 'begin with the key of turn 1 and the default keyWindow');
      // a rollback supersedes the later turns: their keys are free, the replacing turn's count
      await a.rollback(lease, 1);
      await refusedKey(b, lease, { key: 'k1' }, 1, 'the key of turn 1 after a rollback to turn 1');
      const again = await commitKeyed(b, 'k3', 'three, after the rollback');
      assert.equal(again.turn, 2, 'the key of superseded turn 3 is free');
      await refusedKey(a, lease, { key: 'k3' }, 2, 'the key of the turn that replaced a superseded one');
      const freed = await resolves(a.begin(lease, { key: 'k2' }), 'the key of superseded turn 2');
      assert.equal(freed.turn, 3);
      await a.abort(lease, { ...freed, reason: 'test' });
      // the key belongs to the session, not to the lease
      assert.equal(await a.release(lease), true);
      const next = await b.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      await refusedKey(b, next, { key: 'k1' }, 1, 'the key of turn 1 under another lease');
      await refusedKey(a, next, { key: 'k3' }, 2, 'the key of turn 2 under another lease, through another store object');
    },
  },
];

const checks: Check[] = [...storageChecks, ...faultChecks];

/** Probes once whether two objects made by `makeStore` share one backend (every call bounded by `ms`). */
function sharingProbe(make: MakeSessionStore, ms: number): () => Promise<boolean> {
  let probe: Promise<boolean> | undefined;
  return () =>
    (probe ??= (async () => {
      const rawA = await makeBounded(make, ms);
      const rawB = await makeBounded(make, ms);
      const a = boundStore(rawA, ms);
      const b = rawB === rawA ? a : boundStore(rawB, ms);
      try {
        if (rawA === rawB) return false;
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

/** Marks a registered test skipped through its runner's test context, when the runner has one. */
function skipThrough(testContext: unknown, reason: string): void {
  if (typeof testContext !== 'object' || testContext === null) return;
  const skip = (testContext as { skip?: unknown }).skip;
  if (typeof skip === 'function') (skip as (note: string) => void).call(testContext, reason);
}

/**
 * Runs the session store conformance suite against the stores `makeStore` makes.
 *
 * Each check calls `makeStore()` for the store objects it needs and closes them afterwards;
 * it uses fresh session ids (and agent ids), so one backend may serve every check. When two
 * objects made by `makeStore` share one backend (a SQLite file, a PostgreSQL database), the
 * multi-process checks run across store objects; otherwise (in-memory stores) across lease
 * owners of one object.
 *
 * Besides the storage rules, the suite checks the fault rules: every method rejects, never
 * throws synchronously, for hostile input of any type (and writes nothing), commits and
 * aborts are idempotent per attempt, `begin({ replaceOpen })` and lease take-over by another
 * incarnation of the same owner work, and every call is bounded: each store call of a check
 * is raced against `callTimeoutMs`, and a call that never settles fails its check naming the
 * method.
 *
 * Optional parts: the checks of `attemptStatus` run only when the store has that method, and
 * those of turn keys (`begin({ key })`) only when its `turnKeys` is `true`; otherwise they are
 * *skipped*: listed in the report's `skipped` (not in `passed`). With a
 * registrar they are marked skipped through the test context where the runner offers one
 * (`node:test`'s `t.skip()`, Vitest's `context.skip()`); Jest can not skip a test that is
 * already running, so there the test ends without asserting anything.
 *
 * With `test` (Jest's or Vitest's `test`, `node:test`'s `it`), it registers one test per check
 * and returns `undefined`. Without it, it runs the checks one after another and resolves to a
 * report, or rejects with an `AggregateError` of the failed checks (each error's message
 * starts with the check's name).
 *
 * @param makeStore - makes a store object (sync or async).
 * @param options - `test`, `leaseTtlMs`, `callTimeoutMs`.
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
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  if (!Number.isSafeInteger(callTimeoutMs) || callTimeoutMs < 10 || callTimeoutMs > 2 ** 31 - 1) {
    const err = new TypeError(`runSessionStoreConformance: callTimeoutMs must be an integer from 10 to 2147483647, got ${String(options.callTimeoutMs)}.`);
    if (options.test !== undefined) throw err;
    return Promise.reject(err);
  }
  const shared = sharingProbe(makeStore, callTimeoutMs);
  /** Runs one check; resolves to the reason it was skipped, if it was. */
  const runOne = async (check: Check, index: number): Promise<string | undefined> => {
    const ctx = new CheckContext(makeStore, shared, index, ttl, callTimeoutMs);
    let failure: unknown;
    let skipped: string | undefined;
    try {
      if (check.requires !== undefined) {
        const store = await ctx.store();
        const has = (store as unknown as Record<string, unknown>)[check.requires];
        if (check.requires === 'turnKeys' ? has !== true : typeof has !== 'function') {
          skipped =
            check.requires === 'turnKeys'
              ? 'not applicable: the store does not record turn keys (its turnKeys is not true; keys are optional)'
              : `not applicable: the store has no ${check.requires}() method (it is optional)`;
        }
      }
      if (skipped === undefined) await check.run(ctx);
    } catch (err) {
      failure = err;
    }
    try {
      await ctx.close();
    } catch (err) {
      failure ??= err;
    }
    if (failure !== undefined) throw failure;
    return skipped;
  };
  if (options.test !== undefined) {
    const test = options.test;
    checks.forEach((check, i) =>
      // rest parameters keep the function's length 0 (Jest would take a parameter for a `done` callback)
      test(check.name, async (...args: unknown[]) => {
        const skipped = await runOne(check, i);
        if (skipped !== undefined) skipThrough(args[0], skipped);
      }),
    );
    return;
  }
  return (async () => {
    const errors: Error[] = [];
    const passed: string[] = [];
    const skipped: { name: string; reason: string }[] = [];
    const failed: string[] = [];
    for (let i = 0; i < checks.length; i++) {
      try {
        const reason = await runOne(checks[i], i);
        if (reason === undefined) passed.push(checks[i].name);
        else skipped.push({ name: checks[i].name, reason });
      } catch (err) {
        failed.push(checks[i].name);
        errors.push(new Error(`${checks[i].name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      }
    }
    if (errors.length > 0) {
      throw new AggregateError(errors, `${errors.length} of ${checks.length} session store conformance checks failed: ${failed.join('; ')}`);
    }
    return { passed, skipped, sharedBackend: await shared() };
  })();
}
