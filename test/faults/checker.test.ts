/**
 * The fault suite's checker finds what it counts: a store written in this process (real
 * turns on a MemorySessionStore) and worker logs that disagree with it in known ways give
 * exactly the expected counts, and agreeing ones give zeros. Without this, a checker that
 * always said 0 would pass every soak.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, type DurableSession } from '../../src/index.js';
import { check, Counter, counterSerializer, createSessions, ZERO } from './support/checker.js';
import type { ProcessEnd } from './support/procs.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-faults-checker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clean = (name: string): ProcessEnd => ({ name, code: 0, signal: null, expectedSignal: undefined, capped: false, stderr: '' });
const writeLog = (name: string, lines: object[]): string => {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return path;
};

/** A server on `store` like a worker's, and a turn that stores `mid` as the worker does. */
async function workerLike(store: MemorySessionStore) {
  const server = new Server();
  server.registerLocal(Counter, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Counter, counterSerializer]] }));
  await server.finish();
  const sessions = server.createContext().get(Sessions);
  const turn = (s: DurableSession, mid: string, count = true) =>
    s.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: mid });
      if (count) turnCtx.get(Counter).n++;
      session.history.append({ role: 'assistant', content: `ok ${mid}` });
    });
  return { server, sessions, turn };
}

test('agreeing logs and store: every count is 0', async () => {
  const store = new MemorySessionStore();
  await createSessions(store, [{ sessionId: 's', agentId: 'a' }]);
  const w = await workerLike(store);
  const s = await w.sessions.resume({ agentId: 'a', sessionId: 's' });
  await w.turn(s, 'w-m1');
  await w.turn(s, 'w-m2');
  await s.close();
  await w.server.dispose();
  const log = writeLog('clean.log', [
    { t: 'attempt', sid: 's', mid: 'w-m1', try: 1 },
    { t: 'ack', sid: 's', mid: 'w-m1', try: 1, turn: 1 },
    { t: 'attempt', sid: 's', mid: 'w-m2', try: 1 },
    { t: 'reject', sid: 's', mid: 'w-m2', try: 1, code: 'COMMIT_UNKNOWN' },
    { t: 'resolved', sid: 's', mid: 'w-m2', try: 1, outcome: 'committed', turn: 2 },
    { t: 'attempt', sid: 's', mid: 'w-m3', try: 1 },
    { t: 'reject', sid: 's', mid: 'w-m3', try: 1, code: 'STORE_ERROR' },
  ]);
  const ends = [clean('w'), { ...clean('killed'), code: null, signal: 'SIGKILL' as const, expectedSignal: 'SIGKILL' as const }];
  const report = await check({ scenario: 'clean', store, sessions: [{ sessionId: 's', agentId: 'a' }], logs: [log], ends, ttlMs: 1000 });
  expect(report.problems).toEqual([]);
  expect(report.counts).toEqual(ZERO);
  expect(report.acked).toBe(2);
  expect(report.rejections).toEqual({ COMMIT_UNKNOWN: 1, STORE_ERROR: 1 });
  expect(report.line).toMatch(/^faults\[clean\] lost=0 doubled=0 failedButCommitted=0 crashed=0 unresumable=0 inconsistent=0 overlaps=0 \| acked=2 /);
});

test('each disagreement is counted under its name', async () => {
  const store = new MemorySessionStore();
  await createSessions(store, [{ sessionId: 's', agentId: 'a' }]);
  const w = await workerLike(store);
  const s = await w.sessions.resume({ agentId: 'a', sessionId: 's' });
  await w.turn(s, 'w-m1'); // turn 1: acknowledged
  await w.turn(s, 'w-m2'); // turn 2: reported STORE_ERROR, yet stored
  await w.turn(s, 'w-m3'); // turn 3: try 1 reported failed, yet stored…
  await w.turn(s, 'w-m3'); // turn 4: …and the acknowledged retry stored it again
  await w.turn(s, 'w-m6', false); // turn 5: the counter local not moved on with the turn
  await s.close();
  await w.server.dispose();
  const log = writeLog('bad.log', [
    { t: 'ack', sid: 's', mid: 'w-m1', try: 1, turn: 1 },
    { t: 'reject', sid: 's', mid: 'w-m2', try: 1, code: 'STORE_ERROR' },
    { t: 'reject', sid: 's', mid: 'w-m3', try: 1, code: 'LEASE_LOST' },
    { t: 'ack', sid: 's', mid: 'w-m3', try: 2, turn: 4 },
    { t: 'ack', sid: 's', mid: 'w-m5', try: 1, turn: 5 }, // never stored: lost
    { t: 'held', sid: 's', from: 1000, to: 2600, lastAck: 2000 },
    { t: 'held', sid: 's', from: 3200, to: 3300, lastAck: null, clean: true }, // inside the other's clean hold: overlap
  ]);
  const other = writeLog('other.log', [
    { t: 'held', sid: 's', from: 1500, to: 2500, lastAck: 1600 },
    { t: 'held', sid: 's', from: 2100, to: 2500, lastAck: 2400 }, // after the other's last commit: no overlap
    { t: 'held', sid: 's', from: 3000, to: 3500, lastAck: 3100, clean: true },
  ]);
  const ends: ProcessEnd[] = [
    clean('w'),
    { ...clean('died'), code: 1 },
    { ...clean('capped'), code: null, signal: 'SIGKILL', expectedSignal: undefined, capped: true },
  ];
  const report = await check({
    scenario: 'bad',
    store,
    sessions: [
      { sessionId: 's', agentId: 'a' },
      { sessionId: 'never-created', agentId: 'a' },
    ],
    logs: [log, other],
    ends,
    ttlMs: 1000,
  });
  expect(report.counts).toEqual({ lost: 1, doubled: 1, failedButCommitted: 2, crashed: 2, unresumable: 1, inconsistent: 1, overlaps: 2 });
  expect(report.problems.join('\n')).toMatch(/lost: w-m5/);
  expect(report.problems.join('\n')).toMatch(/doubled: w-m3 is stored 2 times \(s#3, s#4\)/);
  expect(report.problems.join('\n')).toMatch(/failedButCommitted: w-m2: try 1 rejected with STORE_ERROR/);
  expect(report.problems.join('\n')).toMatch(/the persisted counter is 4 after 5 committed turns/);
  expect(report.problems.join('\n')).toMatch(/unresumable: never-created/);
});
