/**
 * A PostgresSessionStore made with `{ connectionString }` used to crash its process when the
 * server went down while one of its clients was checked out: `pg` emits `error` on that
 * client and nobody listened. The store now listens on every client it checks out; the call
 * in flight fails with STORE_ERROR and the process lives on. Runs on a throwaway cluster.
 */
import pg from 'pg';
import { describeCluster, pgClusterAvailability, startPgCluster, type PgCluster } from '../faults/support/pg-cluster.js';
import { spawnVictim, type Victim } from '../faults/support/pg-victim-process.js';

const avail = pgClusterAvailability();

describeCluster(avail)('a PostgreSQL restart with a call in flight', () => {
  let cluster: PgCluster;
  let victim: Victim | undefined;
  afterAll(async () => {
    victim?.kill();
    await cluster?.destroy();
  });

  test('does not crash a store that made its own pool', async () => {
    cluster = await startPgCluster();
    const url = await cluster.createDatabase('regression');
    victim = spawnVictim({ url, pool: 'own', sessionId: 's' });
    expect(await victim.next(60_000)).toEqual({ ready: true });
    // Hold the row so the victim's renew waits with its client checked out.
    const holder = new pg.Client({ connectionString: url });
    holder.on('error', () => undefined);
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query("SELECT 1 FROM polestar_sessions WHERE session_id = 's' FOR UPDATE");
    victim.send('renew');
    for (let i = 0; ; i++) {
      const { rows } = await holder.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
      if ((rows[0] as { n: number }).n > 0) break;
      if (i > 200) throw new Error('the renew never waited for the row');
      await new Promise((r) => setTimeout(r, 25));
    }
    await cluster.stop({ mode: 'immediate' });
    expect(await victim.next()).toMatchObject({ op: 'renew', code: 'STORE_ERROR' });
    victim.send('exit');
    expect(await victim.next()).toEqual({ exiting: true });
    expect(await victim.exited).toMatchObject({ code: 0, signal: null });
  });
});
