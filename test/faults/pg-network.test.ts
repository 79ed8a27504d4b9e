/**
 * Fault soak on PostgreSQL through a TCP proxy (support/tcp-proxy.ts), on a throwaway
 * cluster of the test's own (support/pg-cluster.ts; skipped with the reason when initdb is
 * missing, unless CI is set): one worker process per scenario runs turns while exactly one
 * reply is lost at a chosen point (the connection cut before COMMIT, cut after COMMIT was
 * sent, the reply to the begin, to the abort or to the release swallowed), and the cluster
 * is crashed (`pg_ctl stop -m immediate`) and restarted under a running worker. The checker
 * then expects nothing lost, nothing doubled, nothing reported failed that committed, and no
 * crashed process. Workers run test/faults/support/turn-worker.mjs over .build.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { check, createSessions, print, ZERO, type CheckReport } from './support/checker.js';
import { describeCluster, pgClusterAvailability, startPgCluster, type PgCluster } from './support/pg-cluster.js';
import { assertBuilt, killAll, removeScratch, sleep, spawnWorker, type Proc, type WorkerConfig } from './support/procs.js';
import { startTcpProxy, type FaultPlan, type TcpProxy } from './support/tcp-proxy.js';

const TTL = 3000;
const STORE_TIMEOUT = 2000;
const dir = mkdtempSync(join(tmpdir(), 'polestar-faults-pgnet-'));

/** A fault that fires on the first statement matching `after` (seen from now on), then on the next `plan.match`. */
interface Trigger {
  readonly after: RegExp;
  readonly plan: FaultPlan;
}

describeCluster(pgClusterAvailability())('PostgreSQL through a faulty network, on a throwaway cluster', () => {
  let cluster: PgCluster;
  let proxy: TcpProxy;
  let url: string;
  let store: PostgresSessionStore;
  /** The armed trigger, checked on every statement the proxy forwards. */
  let trigger: (Trigger & { fired: (sql: string) => void }) | undefined;

  beforeAll(async () => {
    assertBuilt();
    cluster = await startPgCluster();
    url = await cluster.createDatabase('faults');
    proxy = await startTcpProxy({
      target: url,
      onQuery: (sql) => {
        const t = trigger;
        if (t === undefined || !t.after.test(sql)) return;
        trigger = undefined;
        proxy.arm(t.plan);
        t.fired(sql);
      },
    });
    store = new PostgresSessionStore({ connectionString: url, max: 2 });
  }, 60_000);
  afterAll(async () => {
    killAll();
    await store?.close().catch(() => undefined);
    await proxy?.close();
    await cluster?.destroy();
    removeScratch(dir);
  }, 30_000);

  /** Runs one worker through the proxy; `during` injects the fault once it has 3 turns acknowledged. */
  async function soak(name: string, extra: Partial<WorkerConfig>, during: (w: Proc) => Promise<void>): Promise<{ report: CheckReport; worker: Proc }> {
    const targets = [{ sessionId: `net-${name}`, agentId: `net-agent-${name}` }];
    await createSessions(store, targets);
    const log = join(dir, `${name}.log`);
    const worker = spawnWorker(
      {
        id: name,
        log,
        store: { kind: 'postgres', url: proxy.url(url), max: 2 },
        ttlMs: TTL,
        storeTimeoutMs: STORE_TIMEOUT,
        sessions: targets,
        mode: 'hold',
        turns: 12,
        pauseMs: 20,
        deadlineMs: 20_000,
        openTimeoutMs: 15_000,
        resolveTimeoutMs: 10_000,
        ...extra,
      },
      // A worker that has not exited by then hangs (a store call or a disposal without a bound): a crash.
      30_000,
    );
    try {
      await worker.waitFor((l) => l.t === 'ack' && l.try === 1 && typeof l.mid === 'string' && l.mid.endsWith('-m3'), 20_000);
      await during(worker);
    } finally {
      trigger = undefined;
    }
    const end = await worker.ended;
    const report = print(await check({ scenario: `pg-net-${name}`, store, sessions: targets, logs: [log], ends: [end], ttlMs: TTL }));
    return { report, worker };
  }

  /** Arms `t` and waits (bounded) until the proxy fired the fault. */
  async function inject(t: Trigger): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the fault after ${t.after} never fired`)), 15_000);
      trigger = {
        ...t,
        fired: (sql) => {
          clearTimeout(timer);
          resolve(sql);
        },
      };
    });
  }

  const expectClean = (report: CheckReport): void => {
    expect(report.problems).toEqual([]);
    expect(report.counts).toEqual(ZERO);
    expect(report.acked).toBeGreaterThan(3);
  };

  const CHECKPOINT = /INSERT INTO polestar_checkpoints/i;

  test('the connection cut before COMMIT of a turn', async () => {
    const { report } = await soak('before-commit', {}, () => inject({ after: CHECKPOINT, plan: { match: 'COMMIT', at: 'before-query' } }).then(() => undefined));
    expectClean(report);
  }, 60_000);

  test('the connection cut after COMMIT of a turn was sent (the turn committed, its reply lost)', async () => {
    const { report, worker } = await soak('after-commit', {}, () => inject({ after: CHECKPOINT, plan: { match: 'COMMIT', at: 'after-query' } }).then(() => undefined));
    expectClean(report);
    // The committed turn was not reported failed: it resolved, or COMMIT_UNKNOWN resolved 'committed'.
    const m = worker.lines.find((l) => l.t === 'reject' && l.code !== 'COMMIT_UNKNOWN');
    expect(m).toBeUndefined();
  }, 60_000);

  test('the reply to a turn’s begin (started record) lost', async () => {
    const { report } = await soak('begin-reply', {}, () => inject({ after: /'started'/i, plan: { match: 'COMMIT', at: 'drop-reply' } }).then(() => undefined));
    expectClean(report);
  }, 60_000);

  test('the reply to an abort lost', async () => {
    const { report } = await soak('abort-reply', { failEvery: 4 }, () => inject({ after: /SET status = 'aborted'/i, plan: { match: 'COMMIT', at: 'drop-reply' } }).then(() => undefined));
    expectClean(report);
  }, 60_000);

  test('the reply to a release lost', async () => {
    const { report } = await soak('release-reply', { mode: 'cycle' }, () => inject({ after: /SET lease_owner = NULL/i, plan: { match: 'COMMIT', at: 'drop-reply' } }).then(() => undefined));
    expectClean(report);
  }, 60_000);

  test('the cluster crashed (stop -m immediate) and restarted mid-run', async () => {
    let restartedAt = 0;
    const { report, worker } = await soak('restart', { turns: 40, retryDelayMs: 250 }, async () => {
      await cluster.stop({ mode: 'immediate' });
      await sleep(1000);
      await cluster.start();
      restartedAt = Date.now();
    });
    expectClean(report);
    expect(worker.lines.some((l) => l.t === 'ack' && (l.at as number) > restartedAt)).toBe(true);
  }, 60_000);
});
