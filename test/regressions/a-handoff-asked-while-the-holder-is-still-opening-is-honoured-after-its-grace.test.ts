/**
 * Found by a fault hunt of the cross-process routing. A process waiting to open a session
 * (`open({ waitMs })`) asks its holder once per lease to hand it off; the request is a row in
 * the store and the notification only wakes the holder to read it. Bug: when the request
 * arrives while the holder is still opening the session (its lease acquired, `setup` or the
 * load still running), the holder's router finds no published session for it and drops it,
 * and on a store that notifies (memory, PostgreSQL) it never reads the requests again: the
 * session is kept after its grace, and the waiter fails with SESSION_BUSY at the end of its
 * `waitMs` (SPEC 13.2 handoff 'idle', 13.6: a pinned session honours the request once it is
 * unpinned). SQLite passes: it polls the request rows every `pollMs`.
 */
import { Pairs, storeKinds } from '../sessions/routing/pairs.js';

const { kinds, cleanup } = await storeKinds('handoffload');
afterAll(cleanup);

describe.each(kinds)('on the $name store', (kind) => {
  const pairs = new Pairs(kind);
  afterEach(() => pairs.dispose());

  test('a handoff asked while the holder runs setup closes the session once its grace is over', async () => {
    const [a, b] = await pairs.two({ handoffGraceMs: 100 });
    // The holder's router is running already (another session of it is open).
    await a.open({ agentId: 'other', sessionId: 'other' });
    // The session exists: reopening it takes its lease before setup runs.
    await (await a.open({ agentId: 'ag', sessionId: 's' })).close();
    let endSetup!: () => void;
    const inSetup = new Promise<void>((r) => (endSetup = r));
    let setupStarted!: () => void;
    const started = new Promise<void>((r) => (setupStarted = r));
    const opening = a.open({
      agentId: 'ag',
      sessionId: 's',
      setup: async () => {
        setupStarted();
        await inSetup;
      },
    });
    await started;
    const t0 = performance.now();
    const waiting = b.open({ agentId: 'ag', sessionId: 's', waitMs: 4_000 }).then(
      (d) => ({ ok: true as const, d }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    // The waiter has met the lease and asked for it; then the holder's open completes.
    await new Promise((r) => setTimeout(r, 300));
    endSetup();
    const held = await opening;
    expect(held.opened).toBe('resumed');

    const got = await waiting;
    if (!got.ok) throw got.e;
    expect(got.d.opened).toBe('resumed');
    // The grace (100 ms) is over long before the wait (4 s).
    expect(performance.now() - t0).toBeLessThan(2_500);
    expect(held.isDisposed).toBe(true);
  }, 15_000);
});
