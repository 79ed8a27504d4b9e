/**
 * @internal The harness of the session store conformance suite: a check, its bounded store
 * calls, and the helpers every check uses.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SessionError, type SessionErrorCode } from '../../sessions/errors.js';
import { errorText } from '../../util/error-text.js';
import { isThenable as looksThenable } from '../../util/is-thenable.js';
import type { JsonValue } from '../../util/lossless-json.js';
import type { Lease, NewSessionEvent, PersistedLocal, SessionStore, StoredSessionEvent } from '../../sessions/store/contract.js';
import type { MakeSessionStore } from './types.js';

/** A long TTL: the leases of the checks that are not about expiry never expire. */
export const LONG_TTL = 600_000;

/** Default of {@link SessionStoreConformanceOptions.callTimeoutMs}. */
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

export interface Check {
  readonly name: string;
  /**
   * An optional part of the contract the check is about: a method (`attemptStatus`, `watch`),
   * the routing methods (`routing`: `requestHandoff`, `requestCancel` and `requests`) or a
   * capability flag (`turnKeys`: true). Without it the check is skipped, not passed.
   */
  readonly requires?: 'attemptStatus' | 'turnKeys' | 'routing' | 'watch';
  readonly run: (ctx: CheckContext) => Promise<void>;
}

// ---- bounded store calls -------------------------------------------------------------------

/** A store call that did not settle within `callTimeoutMs`. */
export class CallTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not settle within ${ms} ms (callTimeoutMs): every store call must resolve or reject in bounded time; raise callTimeoutMs only for a slow backend.`);
    this.name = 'CallTimeoutError';
  }
}

/** The promised methods of the store contract, in the order of the interface. */
export const PROMISED_METHODS = [
  'create',
  'acquire',
  'renew',
  'release',
  'begin',
  'append',
  'commit',
  'abort',
  'rollback',
  'pin',
  'load',
  'attemptStatus',
  'checkpoints',
  'list',
  'delete',
  'requestHandoff',
  'requestCancel',
  'requests',
  'close',
] as const;

/** The routing methods: a store has all three or none counts (the `routing` requirement). */
export const ROUTING_METHODS = ['requestHandoff', 'requestCancel', 'requests'] as const;

/** Whether a store call returned a promise; a hostile `then` getter that throws counts as not one (never throws). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  try {
    return looksThenable(value);
  } catch {
    return false;
  }
}

/** `value`, or a rejection with a {@link CallTimeoutError} when it has not settled after `ms`. */
export function settleWithin<T>(value: PromiseLike<T>, ms: number, what: string): Promise<T> {
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
export function boundIterable(value: unknown, ms: number): unknown {
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
export function boundStore(store: SessionStore, ms: number): SessionStore {
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
  // synchronous: passed through, with its close() bounded
  if (typeof methods.watch === 'function') {
    out.watch = (...args: unknown[]): unknown => {
      const w = (methods.watch as (...a: unknown[]) => unknown).apply(store, args) as { mode?: unknown; pollMs?: unknown; close?: unknown } | null;
      if (w === null || typeof w !== 'object' || typeof w.close !== 'function') return w;
      return {
        get mode(): unknown {
          return w.mode;
        },
        get pollMs(): unknown {
          return w.pollMs;
        },
        close: (): unknown => {
          const r: unknown = (w.close as () => unknown).call(w);
          return isThenable(r) ? settleWithin(r, ms, 'store.watch() close()') : r;
        },
      };
    };
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
export async function makeBounded(make: MakeSessionStore, ms: number): Promise<SessionStore> {
  const raw: unknown = await settleWithin(
    Promise.resolve().then(() => make()),
    ms,
    'makeStore()',
  );
  if (typeof raw !== 'object' || raw === null) throw new TypeError(`makeStore() must return a SessionStore object, got ${raw === null ? 'null' : typeof raw}.`);
  return raw as SessionStore;
}

export class CheckContext {
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

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Calls `call` (which must not throw synchronously) and expects a rejection with `code` (a SessionError code) or `TypeError`. */
export async function rejects(call: () => unknown, expected: SessionErrorCode | 'TypeError', what: string): Promise<SessionError | TypeError> {
  let p: unknown;
  try {
    p = call();
  } catch (err) {
    assert.fail(`${what}: threw synchronously instead of rejecting: ${errorText(err)}`);
  }
  assert.ok(p instanceof Promise || looksThenable(p), `${what}: did not return a promise`);
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

export function describe(err: unknown): string {
  if (err instanceof SessionError) return `SessionError ${err.code}: ${err.message}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return errorText(err);
}

export async function collect(it: AsyncIterable<StoredSessionEvent>): Promise<StoredSessionEvent[]> {
  const out: StoredSessionEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export const locals = (n: number): PersistedLocal[] => [
  { key: 'app.memory', scope: 'agent', version: 1, data: { facts: [`fact ${n}`], n } },
  { key: 'app.notes', scope: 'session', version: 2, data: [`note ${n}`] },
];

export const msg = (text: string): NewSessionEvent => ({ kind: 'history/append', body: { role: 'user', content: text } });
export const note = (text: string): NewSessionEvent => ({ kind: 'tool/result', body: { text } });

export async function create(store: SessionStore, ctx: CheckContext, owner = 'owner-1', extra: { ttlMs?: number; agentId?: string; id?: string } = {}): Promise<Lease> {
  return store.create({ sessionId: extra.id ?? ctx.id(), agentId: extra.agentId ?? `${ctx.prefix}agent`, owner, ttlMs: extra.ttlMs ?? LONG_TTL, locals: locals(0) });
}

/** Runs one full turn: begin, commit with the events. */
export async function turn(store: SessionStore, lease: Lease, events: NewSessionEvent[], n: number, keepCheckpoints?: number): Promise<number> {
  const a = await store.begin(lease);
  const c = await store.commit(lease, { ...a, events, locals: locals(n), ...(keepCheckpoints === undefined ? {} : { keepCheckpoints }) });
  return c.turn;
}

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const same = (a: JsonValue, b: JsonValue, what: string): void => {
  assert.deepEqual(a, b, what);
  assert.equal(JSON.stringify(a), JSON.stringify(b), `${what}: key order`);
};
