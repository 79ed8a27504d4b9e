/**
 * Shared pieces of the durable turn-slot tests: a server on a memory store (or a given one),
 * a deferred promise, and the rejection of a promise.
 */
import { MemorySessionStore, Sessions, type DurableSession, type SessionStore, type SessionsPluginOptions } from '../../../src/index.js';
import { delegateStore, serverOn, type Harness } from '../harness.js';

export interface Opened extends Harness {
  readonly durable: DurableSession;
  readonly store: SessionStore;
}

let n = 0;

/** A server on `store` (a fresh memory store by default) with one created session. */
export async function opened(options: SessionsPluginOptions = {}, store: SessionStore = new MemorySessionStore()): Promise<Opened> {
  const h = await serverOn(store, options);
  const durable = await h.ctx.get(Sessions).create({ agentId: `agent-${++n}`, sessionId: `session-${n}-${Math.random().toString(36).slice(2, 8)}` });
  return { ...h, durable, store };
}

export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What `p` rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, got a resolution');
}

export const say = (content: string) => ({ role: 'user' as const, content });

/** Lets pending promise callbacks and immediates run. */
export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A memory store whose `method` calls wait, once entered, until `go` resolves (`entered` resolves when the first one arrives). */
export function heldCall(method: 'begin' | 'commit' | 'pin'): { inner: MemorySessionStore; store: SessionStore; entered: Deferred; go: Deferred } {
  const inner = new MemorySessionStore();
  const entered = deferred();
  const go = deferred();
  const call = inner[method].bind(inner) as (...args: unknown[]) => Promise<unknown>;
  const store = delegateStore(inner, {
    [method]: async (...args: unknown[]) => {
      entered.resolve();
      await go.promise;
      return call(...args);
    },
  });
  return { inner, store, entered, go };
}
