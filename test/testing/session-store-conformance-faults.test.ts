/**
 * The conformance suite's fault checks can fail: each deliberately broken MemorySessionStore
 * below is run through the whole suite (the report form, without `test`) and must be reported
 * under the name of the check it breaks, while the unbroken store passes every check.
 */
import { randomUUID } from 'node:crypto';
import { MemorySessionStore, SessionError } from '../../src/index.js';
import type { AbortInput, AcquireOptions, AttemptStatus, BeginOptions, BegunAttempt, CommitInput, CommittedTurn, DeleteOptions, Lease, SessionStore, TurnAttempt } from '../../src/sessions.js';
import { runSessionStoreConformance, SESSION_STORE_CONFORMANCE_CHECKS } from '../../src/testing/index.js';
import type { ConformanceTestFn, MakeSessionStore, SessionStoreConformanceOptions } from '../../src/testing/index.js';

/** The check whose name starts with `prefix` (there must be exactly one). */
function check(prefix: string): string {
  const found = SESSION_STORE_CONFORMANCE_CHECKS.filter((n) => n.startsWith(prefix));
  expect(found).toHaveLength(1);
  return found[0];
}

const HOSTILE = check('every method rejects for hostile input of any type');
const IDEMPOTENT = check('a repeated commit or abort of an attempt its lease ended');
const BOUNDED = check('every store call settles within callTimeoutMs');
const STATUS = check('attemptStatus (optional)');
const REPLACE = check('begin({ replaceOpen: true })');
const INCARNATION = check('acquire by the same owner with another incarnation');

/** Runs the whole suite; resolves to the failed checks (name → message) and the report, if it passed. */
async function run(make: MakeSessionStore, options: SessionStoreConformanceOptions = {}): Promise<{ failed: Map<string, string>; passed: readonly string[]; skipped: readonly { name: string; reason: string }[] }> {
  try {
    const report = await runSessionStoreConformance(make, { leaseTtlMs: 200, ...options });
    return { failed: new Map(), passed: report.passed, skipped: report.skipped };
  } catch (err) {
    expect(err).toBeInstanceOf(AggregateError);
    const failed = new Map<string, string>();
    for (const e of (err as AggregateError).errors as Error[]) {
      const name = SESSION_STORE_CONFORMANCE_CHECKS.find((n) => e.message.startsWith(`${n}: `));
      expect(name).toBeDefined();
      failed.set(name as string, e.message);
    }
    return { failed, passed: [], skipped: [] };
  }
}

/** Expects exactly the checks `names` to fail, each message matching its pattern. */
async function expectFailures(make: MakeSessionStore, expected: Record<string, RegExp>, options?: SessionStoreConformanceOptions): Promise<Map<string, string>> {
  const { failed } = await run(make, options);
  for (const [name, pattern] of Object.entries(expected)) {
    expect(failed.has(name) ? name : `not reported: ${name}`).toBe(name);
    expect(failed.get(name)).toMatch(pattern);
  }
  return failed;
}

const isCommitted = (s: MemorySessionStore, lease: Lease, a: TurnAttempt): Promise<boolean> => s.attemptStatus(lease.sessionId, a).then((x) => x === 'committed');

test('the unbroken MemorySessionStore passes every check, the fault checks included', async () => {
  const { failed, passed, skipped } = await run(() => new MemorySessionStore());
  expect([...failed.values()]).toEqual([]);
  expect(passed).toEqual(SESSION_STORE_CONFORMANCE_CHECKS);
  expect(skipped).toEqual([]);
});

describe('hostile input', () => {
  test('a method that throws synchronously for one argument type is reported, naming the method and the input', async () => {
    class SyncList extends MemorySessionStore {
      override list(query?: Parameters<MemorySessionStore['list']>[0]): ReturnType<MemorySessionStore['list']> {
        if (query !== undefined && typeof query !== 'object') throw new TypeError('query must be an object');
        return super.list(query);
      }
    }
    const failed = await expectFailures(() => new SyncList(), { [HOSTILE]: /store\.list\(query = NaN\) threw synchronously instead of rejecting: TypeError: query must be an object/ });
    expect([...failed.keys()]).toEqual([HOSTILE]);
  });

  test('a method that coerces a hostile value and resolves is reported, and so is what it wrote', async () => {
    class CoercingPin extends MemorySessionStore {
      override async pin(lease: Lease, turn: number, label?: string): Promise<void> {
        return super.pin(lease, turn, label === undefined ? undefined : String(label as unknown));
      }
    }
    const failed = await expectFailures(() => new CoercingPin(), { [HOSTILE]: /store\.pin\(lease, turn, label = null\) resolved; it must reject/ });
    expect(failed.get(HOSTILE)).toMatch(/store\.pin\(\) with a hostile label wrote to the store \(its state changed\); the calls that resolved: store\.pin\(lease, turn, label = null\)/);
    expect([...failed.keys()]).toEqual([HOSTILE]);
  });

  test('a malformed option that a store takes for a valid one is reported when it writes (a truthy force deletes the session)', async () => {
    class TruthyForce extends MemorySessionStore {
      override async delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
        const o = options as { force?: unknown } | undefined;
        return super.delete(sessionId, typeof o === 'object' && o !== null && !Array.isArray(o) && Boolean(o.force) ? { force: true } : options);
      }
    }
    await expectFailures(() => new TruthyForce(), { [HOSTILE]: /store\.delete\(\) with hostile options wrote to the store \(its state changed\); the calls that resolved: store\.delete\(sessionId, options\.force = the string "yes"\)/ });
  });

  test('a rejection that is neither a TypeError nor a SessionError is reported', async () => {
    class PlainErrors extends MemorySessionStore {
      override async checkpoints(sessionId: string): ReturnType<MemorySessionStore['checkpoints']> {
        if (typeof sessionId !== 'string') throw new Error('bad id');
        return super.checkpoints(sessionId);
      }
    }
    await expectFailures(() => new PlainErrors(), { [HOSTILE]: /store\.checkpoints\(sessionId = NaN\) rejected with Error: bad id; bad input is refused with a TypeError/ });
  });

  test("a getter's error passed through instead of a TypeError is reported", async () => {
    class RawGetterErrors extends MemorySessionStore {
      override async acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
        if (typeof options === 'object' && options !== null) void options.owner; // reads a hostile getter unguarded
        return super.acquire(sessionId, options);
      }
    }
    await expectFailures(() => new RawGetterErrors(), { [HOSTILE]: /store\.acquire\(sessionId, options = an object with throwing getters\) rejected with HostileReadError: hostile input: the getter of "owner" throws/ });
  });

  test('the events() iterator must reject, not throw, for a hostile query', async () => {
    class SyncEvents extends MemorySessionStore {
      override events(sessionId: string, query?: Parameters<MemorySessionStore['events']>[1]): ReturnType<MemorySessionStore['events']> {
        if (query === null) throw new TypeError('query must not be null');
        return super.events(sessionId, query);
      }
    }
    await expectFailures(() => new SyncEvents(), { [HOSTILE]: /store\.events\(sessionId, query = null\) threw synchronously/ });
  });
});

describe('idempotent commits', () => {
  test('a repeated commit that writes its events again is reported', async () => {
    class Recommitting extends MemorySessionStore {
      override async commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
        if (await isCommitted(this, lease, input).catch(() => false)) {
          const again = await super.begin(lease);
          return super.commit(lease, { ...input, turn: again.turn, attempt: again.attempt });
        }
        return super.commit(lease, input);
      }
    }
    await expectFailures(() => new Recommitting(), { [IDEMPOTENT]: /a repeated commit: resolves to the first commit's result/ });
  });

  test('a repeated commit that rejects is reported', async () => {
    class RefusingRepeat extends MemorySessionStore {
      override async commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
        if (await isCommitted(this, lease, input).catch(() => false)) throw new TypeError(`attempt ${input.turn}.${input.attempt} is not open`);
        return super.commit(lease, input);
      }
    }
    await expectFailures(() => new RefusingRepeat(), { [IDEMPOTENT]: /attempt 1\.1 is not open/ });
  });

  test('a repeated commit that sets committedTurn back is reported', async () => {
    class SettingBack extends MemorySessionStore {
      readonly #first = new Map<string, CommittedTurn>();
      override async commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
        const key = `${lease.sessionId}/${input.turn}/${input.attempt}`;
        const seen = this.#first.get(key);
        if (seen !== undefined && (await this.load(lease.sessionId)).info.committedTurn > input.turn) {
          await super.rollback(lease, input.turn); // "re-applies" the repeated turn as the head
          return seen;
        }
        const c = await super.commit(lease, input);
        this.#first.set(key, c);
        return c;
      }
    }
    await expectFailures(() => new SettingBack(), { [IDEMPOTENT]: /a repeat after a later turn wrote nothing and did not set committedTurn back/ });
  });

  test('a repeated commit fenced like a new write (LEASE_LOST once the lease expired, though no one else took it) is reported', async () => {
    class FencesFirst extends MemorySessionStore {
      override async commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
        const held = await this.load(lease.sessionId).then((l) => l.info.lease, () => undefined);
        if (held === undefined) throw new SessionError('LEASE_LOST', `lease lost: "${lease.sessionId}" has no live lease`, { sessionId: lease.sessionId });
        return super.commit(lease, input);
      }
    }
    await expectFailures(() => new FencesFirst(), { [IDEMPOTENT]: /a repeated commit after the lease expired \(no other acquire meanwhile\): rejected with SessionError LEASE_LOST/ });
  });

  test('a repeated abort that rejects is reported', async () => {
    class RefusingAbort extends MemorySessionStore {
      readonly #aborted = new Set<string>();
      override async abort(lease: Lease, input: AbortInput): Promise<void> {
        const key = `${lease.sessionId}/${input.turn}/${input.attempt}`;
        if (this.#aborted.has(key)) throw new TypeError(`attempt ${input.turn}.${input.attempt} is not open`);
        await super.abort(lease, input);
        this.#aborted.add(key);
      }
    }
    await expectFailures(() => new RefusingAbort(), { [IDEMPOTENT]: /is not open/ });
  });
});

describe('bounded calls', () => {
  const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

  test('a release() that never settles is reported within the bound, naming the method, instead of hanging the suite', async () => {
    class StuckRelease extends MemorySessionStore {
      override release(): Promise<boolean> {
        return never();
      }
    }
    const started = Date.now();
    const failed = await expectFailures(() => new StuckRelease(), { [BOUNDED]: /store\.release\(\) did not settle within 300 ms \(callTimeoutMs\)/ }, { callTimeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(failed.get(HOSTILE)).toMatch(/store\.release\(\) did not settle within 300 ms/);
    expect(failed.has(STATUS)).toBe(true);
  });

  test('an events() iterator that never yields, and a repeated close() that never settles, are reported', async () => {
    class StuckEvents extends MemorySessionStore {
      override events(): AsyncIterable<never> {
        return { [Symbol.asyncIterator]: () => ({ next: () => never() }) };
      }
    }
    await expectFailures(() => new StuckEvents(), { [BOUNDED]: /store\.events\(\) \(iterator next\(\)\) did not settle within 300 ms/ }, { callTimeoutMs: 300 });
    class StuckSecondClose extends MemorySessionStore {
      #closes = 0;
      override close(): Promise<void> {
        return ++this.#closes === 1 ? super.close() : never();
      }
    }
    await expectFailures(() => new StuckSecondClose(), { [BOUNDED]: /store\.close\(\) did not settle within 300 ms/ }, { callTimeoutMs: 300 });
  });

  test('callTimeoutMs is validated', async () => {
    await expect(runSessionStoreConformance(() => new MemorySessionStore(), { callTimeoutMs: 0 })).rejects.toThrow(TypeError);
    await expect(runSessionStoreConformance(() => new MemorySessionStore(), { callTimeoutMs: 1.5 })).rejects.toThrow(/callTimeoutMs must be an integer/);
    expect(() => runSessionStoreConformance(() => new MemorySessionStore(), { test: () => undefined, callTimeoutMs: -1 })).toThrow(TypeError);
  });
});

describe('attemptStatus, replaceOpen and incarnations', () => {
  test('an attemptStatus that reports an aborted attempt as committed is reported', async () => {
    class Lying extends MemorySessionStore {
      override async attemptStatus(sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
        const s = await super.attemptStatus(sessionId, attempt);
        return s === 'aborted' ? 'committed' : s;
      }
    }
    await expectFailures(() => new Lying(), { [STATUS]: /an aborted attempt/ });
  });

  test('an attemptStatus that reports an open attempt as absent is reported', async () => {
    class Forgetful extends MemorySessionStore {
      override async attemptStatus(sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
        const s = await super.attemptStatus(sessionId, attempt);
        return s === 'open' ? 'absent' : s;
      }
    }
    await expectFailures(() => new Forgetful(), { [STATUS]: /a begun attempt/ });
  });

  test('an attemptStatus that needs a live lease is reported', async () => {
    class NeedsLease extends MemorySessionStore {
      override async attemptStatus(sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
        const held = (await this.load(sessionId)).info.lease;
        if (held === undefined) throw new SessionError('LEASE_LOST', `no live lease on "${sessionId}"`, { sessionId });
        return super.attemptStatus(sessionId, attempt);
      }
    }
    await expectFailures(() => new NeedsLease(), { [STATUS]: /no live lease/ });
  });

  test('a begin that ignores replaceOpen is reported', async () => {
    class IgnoresReplace extends MemorySessionStore {
      override begin(lease: Lease): Promise<BegunAttempt> {
        return super.begin(lease);
      }
    }
    await expectFailures(() => new IgnoresReplace(), { [REPLACE]: /begin\(\{ replaceOpen: true \}\) through another store object while an attempt begun with this lease is open: rejected with SessionError SESSION_BUSY/ });
  });

  test('a begin that replaces an attempt of another epoch is reported', async () => {
    class ReplacesAny extends MemorySessionStore {
      override async begin(lease: Lease, options?: BeginOptions): Promise<BegunAttempt> {
        const open = options?.replaceOpen === true ? (await this.load(lease.sessionId)).open : undefined;
        if (open !== undefined) await super.abort(lease, { turn: open.turn, attempt: open.attempt, reason: 'replaced' });
        return super.begin(lease, options);
      }
    }
    await expectFailures(() => new ReplacesAny(), { [REPLACE]: /replaceOpen with an attempt begun under another epoch: resolved, expected SESSION_BUSY/ });
  });

  test('an acquire that ignores the incarnation is reported', async () => {
    class IgnoresIncarnation extends MemorySessionStore {
      override acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
        return super.acquire(sessionId, { owner: options.owner, ttlMs: options.ttlMs });
      }
    }
    await expectFailures(() => new IgnoresIncarnation(), { [INCARNATION]: /acquire by the same owner with another incarnation, while the lease is live: rejected with SessionError SESSION_BUSY/ });
  });

  test("a LEASE_LOST after a take-over by another incarnation that does not say 'owner-reused' is reported", async () => {
    class NoReason extends MemorySessionStore {
      override commit(lease: Lease, input: CommitInput): Promise<CommittedTurn> {
        return super.commit(lease, input).catch((err: unknown) => {
          throw err instanceof SessionError ? new SessionError(err.code, err.message, { sessionId: err.sessionId }) : err;
        });
      }
    }
    await expectFailures(() => new NoReason(), { [INCARNATION]: /has cause\.reason 'owner-reused'/ });
  });

  test('an acquire that takes a lease over for the same incarnation (a process fencing itself) is reported', async () => {
    class AlwaysNew extends MemorySessionStore {
      override acquire(sessionId: string, options: AcquireOptions): Promise<Lease> {
        return super.acquire(sessionId, options.incarnation === undefined ? options : { ...options, incarnation: randomUUID() });
      }
    }
    await expectFailures(() => new AlwaysNew(), { [INCARNATION]: /acquire by the same incarnation: resolved, expected SESSION_BUSY/ });
  });
});

describe('optional methods', () => {
  class NoStatus extends MemorySessionStore {
    constructor() {
      super();
      Object.defineProperty(this, 'attemptStatus', { value: undefined });
    }
  }

  test('without attemptStatus its check is skipped, not passed, and every other check passes', async () => {
    const { failed, passed, skipped } = await run(() => new NoStatus());
    expect([...failed.values()]).toEqual([]);
    expect(skipped).toEqual([{ name: STATUS, reason: expect.stringMatching(/no attemptStatus\(\) method/) as unknown as string }]);
    expect(passed).toEqual(SESSION_STORE_CONFORMANCE_CHECKS.filter((n) => n !== STATUS));
  });

  test("with a registrar, the check is marked skipped through the runner's test context (node:test's t.skip, Vitest's context.skip)", async () => {
    const registered = new Map<string, (...args: unknown[]) => Promise<void>>();
    const registrar: ConformanceTestFn = (name, fn) => registered.set(name, fn as (...args: unknown[]) => Promise<void>);
    runSessionStoreConformance(() => new NoStatus() as SessionStore, { test: registrar, leaseTtlMs: 200 });
    expect([...registered.keys()]).toEqual(SESSION_STORE_CONFORMANCE_CHECKS);
    for (const fn of registered.values()) expect(fn.length).toBe(0);
    const skips: string[] = [];
    const context = { skip: (note: string) => skips.push(note) };
    await (registered.get(STATUS) as (...args: unknown[]) => Promise<void>)(context);
    expect(skips).toEqual([expect.stringMatching(/no attemptStatus\(\) method/)]);
    await (registered.get(REPLACE) as (...args: unknown[]) => Promise<void>)(context);
    expect(skips).toHaveLength(1);
    await expect((registered.get(STATUS) as () => Promise<void>)()).resolves.toBeUndefined();
  });
});
