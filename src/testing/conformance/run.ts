/**
 * The session store conformance suite (the store contract and its fault rules): the
 * single-process checks every `SessionStore` passes. Several lease owners on one store object,
 * and several store objects when `makeStore` returns objects sharing one backend, stand in for
 * processes; lease expiry uses short real TTLs. Interleavings (concurrent acquires, racing
 * owners with stale leases) are driven by a seeded generator whose seed is in the failure
 * message. Every store call of a check is raced against `callTimeoutMs`.
 */
import { randomUUID } from 'node:crypto';
import { SessionError } from '../../sessions/errors.js';
import { errorText } from '../../util/error-text.js';
import { dataAndConcurrencyChecks } from './data-and-concurrency-checks.js';
import { faultChecks } from './fault-checks.js';
import { boundStore, type Check, CheckContext, DEFAULT_CALL_TIMEOUT_MS, LONG_TTL, makeBounded, ROUTING_METHODS } from './harness.js';
import { leaseAndTurnChecks } from './lease-and-turn-checks.js';
import { routingChecks } from './routing-checks.js';
import type { ConformanceTestFn, MakeSessionStore, SessionStoreConformanceOptions, SessionStoreConformanceReport } from './types.js';
export type { ConformanceTestFn, MakeSessionStore, SessionStoreConformanceOptions, SessionStoreConformanceReport } from './types.js';

const checks: Check[] = [...leaseAndTurnChecks, ...dataAndConcurrencyChecks, ...faultChecks, ...routingChecks];

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
 * Optional parts: the checks of `attemptStatus` run only when the store has that method, those
 * of handoff and cancel requests only when it has `requestHandoff`, `requestCancel` and
 * `requests`, that of wake-ups only when it has `watch` (delivery is checked in `'notify'` mode
 * only: a store in `'poll'` mode leaves it to its callers), and those of turn keys
 * (`begin({ key })`) only when its `turnKeys` is `true`; otherwise they are
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
        const store = (await ctx.store()) as unknown as Record<string, unknown>;
        const needs = check.requires === 'routing' ? ROUTING_METHODS : [check.requires];
        const missing = needs.filter((m) => typeof store[m] !== 'function');
        if (check.requires === 'turnKeys' ? store.turnKeys !== true : missing.length > 0) {
          skipped =
            check.requires === 'turnKeys'
              ? 'not applicable: the store does not record turn keys (its turnKeys is not true; keys are optional)'
              : `not applicable: the store has no ${missing.map((m) => `${m}()`).join(', ')} method (${check.requires === 'routing' ? 'handoff and cancel requests are' : 'it is'} optional)`;
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
        errors.push(new Error(`${checks[i].name}: ${errorText(err)}`, { cause: err }));
      }
    }
    if (errors.length > 0) {
      throw new AggregateError(errors, `${errors.length} of ${checks.length} session store conformance checks failed: ${failed.join('; ')}`);
    }
    return { passed, skipped, sharedBackend: await shared() };
  })();
}
