/**
 * A store wrapper for fault tests: forwards every call (the optional ones and the
 * store-bound hook included) to a real store, except the methods given a fault, which get
 * the real, bound method as their first argument. A fault can call it and then reject (a
 * reply lost after the work was done), reject without calling it (a request lost), or
 * never answer.
 */
import { SessionError, type SessionStore } from '../../src/index.js';

type Method = (...args: never[]) => unknown;
/** A replacement of one method: `real` is the real store's method, bound. */
export type Fault = (real: (...args: unknown[]) => Promise<unknown>, ...args: unknown[]) => Promise<unknown>;

/** `inner`, with the given methods replaced by their faults. */
export function faultyStore(inner: SessionStore, faults: Partial<Record<keyof SessionStore, Fault>>): SessionStore {
  return new Proxy(inner, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      const real = (value as Method).bind(target) as (...args: unknown[]) => Promise<unknown>;
      const fault = typeof key === 'string' ? faults[key as keyof SessionStore] : undefined;
      return fault === undefined ? real : (...args: unknown[]) => fault(real, ...args);
    },
  });
}

/** The error of a reply lost on the way back (as a store reports a connection cut after the statement was sent). */
export function lostReply(call: string): SessionError {
  return new SessionError('STORE_ERROR', `store error: connection lost while waiting for the reply to store.${call}() (the test dropped it)`);
}

/** A promise that never settles (a store that never answers). */
export function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}

/** Settles to 'settled' when `p` settles within `ms`, else to 'pending' (so a hang fails the test instead of timing it out). */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<'settled' | 'pending'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), ms)));
  const done = p.then(
    () => 'settled' as const,
    () => 'settled' as const,
  );
  const out = await Promise.race([done, bound]);
  clearTimeout(timer);
  return out;
}
