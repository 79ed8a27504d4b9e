/**
 * `sessions.cancel(sessionId, reason?)`: a turn in flight is aborted wherever it runs (this
 * process at once, the other one through the store), rejects with `TURN_CANCELLED` carrying the
 * reason, and writes an aborted attempt, not a commit; `false` when no turn is open or the id
 * is unknown; bad input is a TypeError. Two servers on one store stand in for two processes.
 */
import { SessionError, type DurableSession, type Sessions } from '../../../src/index.js';
import { sleep, untilAborted } from '../harness.js';
import { Pairs, say, storeKinds } from './pairs.js';

const { kinds, cleanup } = await storeKinds('cancel');
afterAll(cleanup);

/** Starts a turn that appends, then waits until its turn context is aborted (or 10 s). */
function hangingTurn(d: DurableSession): { done: Promise<unknown>; started: Promise<void> } {
  let started!: () => void;
  const s = new Promise<void>((r) => (started = r));
  const done = d
    .turn(async (turnCtx, session) => {
      session.history.append({ role: 'user', content: 'never committed' });
      started();
      await untilAborted(turnCtx.signal, 10_000);
      return 'finished';
    })
    .then(
      (v) => v,
      (e: unknown) => e,
    );
  return { done, started: s };
}

describe.each(kinds)('sessions.cancel on the $name store', (kind) => {
  const pairs = new Pairs(kind);
  afterEach(() => pairs.dispose());

  async function assertAborted(owner: Sessions, d: DurableSession, err: unknown, reason: string): Promise<void> {
    expect(err).toBeInstanceOf(SessionError);
    expect(err).toMatchObject({ code: 'TURN_CANCELLED', reason });
    expect((err as Error).message).toContain(reason);
    expect(d.committedTurn).toBe(0);
    expect(d.session.history.length).toBe(0);
    // Nothing of the cancelled turn is stored: no commit, and no history event.
    const events = [];
    for await (const e of owner.events(d.id)) events.push(e);
    expect(events).toEqual([]);
    expect((await owner.list()).items.find((i) => i.sessionId === d.id)?.committedTurn).toBe(0);
    // The session goes on.
    await say(d, 'after');
    expect(d.committedTurn).toBe(1);
  }

  test('in this process: the turn is aborted at once', async () => {
    const [a] = await pairs.two();
    const d = await a.open({ agentId: 'ag', sessionId: 's' });
    const { done, started } = hangingTurn(d);
    await started;
    const t0 = performance.now();
    expect(await a.cancel('s', 'user pressed stop')).toBe(true);
    const err = await done;
    expect(performance.now() - t0).toBeLessThan(200);
    await assertAborted(a, d, err, 'user pressed stop');
  });

  test('through the other process: aborted within a second, with the default reason', async () => {
    const [a, b] = await pairs.two();
    const d = await a.open({ agentId: 'ag', sessionId: 's' });
    const { done, started } = hangingTurn(d);
    await started;
    const t0 = performance.now();
    expect(await b.cancel('s')).toBe(true);
    const err = await done;
    expect(performance.now() - t0).toBeLessThan(1000);
    await assertAborted(a, d, err, 'cancelled');
  });

  test('false when no turn is open, or the session is unknown; bad input is a TypeError', async () => {
    const [a, b] = await pairs.two();
    const d = await a.open({ agentId: 'ag', sessionId: 's' });
    await say(d, 'one');
    expect(await a.cancel('s')).toBe(false);
    expect(await b.cancel('s')).toBe(false);
    expect(await b.cancel('nobody')).toBe(false);
    await expect(b.cancel('' as string)).rejects.toBeInstanceOf(TypeError);
    await expect(b.cancel(42 as unknown as string)).rejects.toBeInstanceOf(TypeError);
    await expect(b.cancel('s', 7 as unknown as string)).rejects.toThrow(/reason/);
    // A stale cancel never reaches a later turn.
    await sleep(60);
    await say(d, 'two');
    expect(d.committedTurn).toBe(2);
  });
});
