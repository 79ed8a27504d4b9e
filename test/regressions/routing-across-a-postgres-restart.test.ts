/**
 * A fault hunt of the PostgreSQL wake-ups: after a server restart (a crash: `-m immediate`),
 * the LISTEN connection of each store reconnects by itself, so a handoff request and a
 * cancel from another process still reach the holder by notification, and the holder's turns
 * run on fresh pool connections. Runs on a throwaway cluster.
 */
import { SessionError, Sessions } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { describeCluster, pgClusterAvailability, startPgCluster, type PgCluster } from '../faults/support/pg-cluster.js';
import { serverOn, untilAborted, type Harness } from '../sessions/harness.js';

const avail = pgClusterAvailability();

describeCluster(avail)('routing across a PostgreSQL restart', () => {
  let cluster: PgCluster;
  const stores: PostgresSessionStore[] = [];
  const harnesses: Harness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.server.dispose();
    for (const s of stores) await s.close();
    await cluster?.destroy();
  });

  test('after a restart, a waiter gets the session by handoff and a cancel reaches the turn', async () => {
    cluster = await startPgCluster();
    const url = await cluster.createDatabase('routing');
    const sa = new PostgresSessionStore({ connectionString: url, max: 2 });
    const sb = new PostgresSessionStore({ connectionString: url, max: 2 });
    stores.push(sa, sb);
    const a = await serverOn(sa, { owner: 'a', leaseTtlMs: 30_000, handoffGraceMs: 0 });
    const b = await serverOn(sb, { owner: 'b', leaseTtlMs: 30_000, handoffGraceMs: 0 });
    harnesses.push(a, b);
    const A = a.ctx.get(Sessions);
    const B = b.ctx.get(Sessions);
    const d = await A.open({ agentId: 'ag', sessionId: 's' });
    await d.turn((_t, s) => void s.history.append({ role: 'user', content: 'before' }));
    // Both LISTEN connections are up before the crash.
    await B.open({ agentId: 'other', sessionId: 'other' });

    await cluster.stop({ mode: 'immediate' });
    await cluster.start();
    // Let both LISTEN connections reconnect (backoff from 100 ms).
    await new Promise((r) => setTimeout(r, 3_000));

    // A cancel from b reaches a's turn by notification.
    let started!: () => void;
    const ready = new Promise<void>((r) => (started = r));
    const turn = d
      .turn(async (turnCtx) => {
        started();
        await untilAborted(turnCtx.signal, 10_000);
      })
      .catch((e: unknown) => e);
    await ready;
    const t0 = performance.now();
    expect(await B.cancel('s', 'stop')).toBe(true);
    const err = await turn;
    expect(err).toBeInstanceOf(SessionError);
    expect(err).toMatchObject({ code: 'TURN_CANCELLED' });
    expect(performance.now() - t0).toBeLessThan(1_000);

    // A waiter in b gets the session by handoff well within its wait.
    const t1 = performance.now();
    const taken = await B.open({ agentId: 'ag', sessionId: 's', waitMs: 8_000 });
    expect(performance.now() - t1).toBeLessThan(1_500);
    expect(taken.committedTurn).toBe(1);
    expect(d.isDisposed).toBe(true);
  }, 90_000);
});
