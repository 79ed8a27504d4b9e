/**
 * @internal The options and report of the session store conformance suite.
 */
import type { SessionStore } from '../../sessions/store/contract.js';

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
