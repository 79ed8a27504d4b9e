/**
 * Routing between processes, with two servers of different owners on one store standing in
 * for two processes (the memory store shared, two SQLite store objects on one file, two
 * PostgreSQL stores on one database): `sessions.open` (exactly one creator, `opened`), `waitMs`
 * woken by a release, handoff of an idle session (`'idle'`, `'never'`, pinned sessions), a
 * busy holder handing off right after its turn, and the bad input of the options. The child
 * process version is two-processes.test.ts.
 */
import { SessionError, SessionsPlugin, type DurableSession } from '../../../src/index.js';
import { sleep } from '../harness.js';
import { Pairs, say, storeKinds } from './pairs.js';

const { kinds, cleanup } = await storeKinds('routing');
afterAll(cleanup);

describe.each(kinds)('routing on the $name store', (kind) => {
  const pairs = new Pairs(kind);
  afterEach(() => pairs.dispose());
  const two = pairs.two.bind(pairs);

  test('open creates a session, finds the live one, and resumes a stored one', async () => {
    const [a] = await two();
    const first = await a.open({ agentId: 'ag', sessionId: 's1', meta: { n: 1 } });
    expect(first.opened).toBe('created');
    await say(first, 'one');
    expect(await a.open({ agentId: 'ag', sessionId: 's1' })).toBe(first);
    await first.close();
    const again = await a.open({ agentId: 'ag', sessionId: 's1', meta: { n: 2 } });
    expect(again.opened).toBe('resumed');
    expect(again.meta).toEqual({ n: 1 });
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['one']);
    await expect(a.open({ agentId: 'other', sessionId: 's1' })).rejects.toMatchObject({ code: 'AGENT_MISMATCH' });
  });

  test('of two processes opening a new id at once, exactly one creates it; the other gets SESSION_BUSY, never SESSION_ALREADY_EXISTS', async () => {
    for (let i = 0; i < 5; i++) {
      const [a, b] = await two();
      const results = await Promise.allSettled([a.open({ agentId: `ag${i}`, sessionId: `race-${i}` }), b.open({ agentId: `ag${i}`, sessionId: `race-${i}` })]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect((won[0] as PromiseFulfilledResult<DurableSession>).value.opened).toBe('created');
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toMatchObject({ code: 'SESSION_BUSY' });
    }
  });

  test('a waiting open takes over an idle session held by the other process (handoff), and the old handle says why it closed', async () => {
    const [a, b] = await two({ handoffGraceMs: 0 });
    const held = await a.open({ agentId: 'ag', sessionId: 's' });
    await say(held, 'from a');
    const t0 = performance.now();
    const taken = await b.open({ agentId: 'ag', sessionId: 's', waitMs: 5000 });
    const ms = performance.now() - t0;
    expect(taken.opened).toBe('resumed');
    expect(taken.session.history.messages.map((m) => m.content)).toEqual(['from a']);
    expect(ms).toBeLessThan(kind.name === 'memory' ? 200 : 1500);
    await say(taken, 'from b');
    expect(a.get('s')).toBeUndefined();
    const refused = await say(held, 'late').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SessionError);
    expect(refused).toMatchObject({ code: 'SESSION_CLOSED' });
    expect((refused as Error).message).toMatch(/handoff/);
    expect((refused as Error).message).toMatch(/sessions\.open/);
  });

  test("without waitMs, or with handoff: 'never' on the holder, the session stays where it is", async () => {
    const [a, b] = await two({ handoff: 'never', handoffGraceMs: 0 });
    const held = await a.open({ agentId: 'ag', sessionId: 's' });
    await say(held, 'x');
    await expect(b.open({ agentId: 'ag', sessionId: 's' })).rejects.toMatchObject({ code: 'SESSION_BUSY', holder: { owner: 'a' } });
    const err = await b.open({ agentId: 'ag', sessionId: 's', waitMs: 300 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SESSION_BUSY', holder: { owner: 'a' } });
    expect((err as Error).message).toMatch(/after waiting \d+ ms: owner "a"/);
    expect(a.get('s')).toBe(held);
    // Released: a waiter is woken by the release, well before its wait ends.
    const waiting = b.open({ agentId: 'ag', sessionId: 's', waitMs: 10_000 });
    await sleep(50);
    const t0 = performance.now();
    await held.close();
    const got = await waiting;
    expect(performance.now() - t0).toBeLessThan(kind.name === 'SQLite' ? 1000 : 500);
    expect(got.opened).toBe('resumed');
  });

  test("open({ handoff: 'never' }) keeps that session where it is, also when the open created it", async () => {
    const [a, b] = await two({ handoffGraceMs: 0 });
    const kept = await a.open({ agentId: 'ag', sessionId: 'kept', handoff: 'never' });
    expect(kept.opened).toBe('created');
    await say(kept, 'x');
    await expect(b.open({ agentId: 'ag', sessionId: 'kept', waitMs: 300 })).rejects.toMatchObject({ code: 'SESSION_BUSY', holder: { owner: 'a' } });
    expect(a.get('kept')).toBe(kept);
  });

  test('a busy holder hands off right after its turn, which commits', async () => {
    const [a, b] = await two({ handoffGraceMs: 0 });
    const held = await a.open({ agentId: 'ag', sessionId: 's' });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running = held.turn(async (_t, s) => {
      s.history.append({ role: 'user', content: 'slow' });
      await gate;
    });
    await sleep(20);
    const waiting = b.open({ agentId: 'ag', sessionId: 's', waitMs: 10_000 });
    await sleep(kind.name === 'SQLite' ? 150 : 60);
    expect(a.get('s')).toBe(held);
    release();
    await running;
    const got = await waiting;
    expect(got.session.history.messages.map((m) => m.content)).toEqual(['slow']);
  });

  test('a freshly opened session is pinned for handoffGraceMs, unless its first turn settled', async () => {
    const [a, b] = await two({ handoffGraceMs: 600 });
    await a.open({ agentId: 'ag', sessionId: 'pinned' });
    const t0 = performance.now();
    const got = await b.open({ agentId: 'ag', sessionId: 'pinned', waitMs: 10_000 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(450);
    expect(got.opened).toBe('resumed');
    // Its first turn settled: no longer pinned, handed off at once.
    const other = await a.open({ agentId: 'ag2', sessionId: 'unpinned' });
    await say(other, 'hello');
    const t1 = performance.now();
    await b.open({ agentId: 'ag2', sessionId: 'unpinned', waitMs: 10_000 });
    expect(performance.now() - t1).toBeLessThan(450);
  });

  test('a session closing in this process is still found by get(), and open with waitMs waits for the close', async () => {
    const [a] = await two();
    const held = await a.open({ agentId: 'ag', sessionId: 's' });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running = held.turn(async (_t, s) => {
      s.history.append({ role: 'user', content: 'draining' });
      await gate;
    });
    await sleep(10);
    const closing = held.close();
    expect(a.get('s')).toBe(held);
    await expect(say(held, 'more')).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    await expect(a.open({ agentId: 'ag', sessionId: 's' })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    const reopened = a.open({ agentId: 'ag', sessionId: 's', waitMs: 5000 });
    await sleep(20);
    release();
    await running;
    await closing;
    const again = await reopened;
    expect(again).not.toBe(held);
    expect(again.opened).toBe('resumed');
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['draining']);
  });

  test('an open right after close() is not refused by its own process', async () => {
    const [a] = await two();
    for (let i = 0; i < 5; i++) {
      const d = await a.open({ agentId: 'ag', sessionId: 'again' });
      await say(d, `m${i}`);
      void d.close();
      const next = await a.open({ agentId: 'ag', sessionId: 'again' });
      expect(next.session.history.length).toBe(i + 1);
      await next.close();
    }
  });

  test('idleCloseMs closes a session with no turn for that long; a turn on it then says so', async () => {
    const [a] = await two({ idleCloseMs: 150 });
    const d = await a.open({ agentId: 'ag', sessionId: 'idle' });
    await say(d, 'one');
    await sleep(80);
    await say(d, 'two');
    await sleep(80);
    expect(a.get('idle')).toBe(d);
    await sleep(250);
    expect(a.get('idle')).toBeUndefined();
    const err = await say(d, 'three').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SESSION_CLOSED' });
    expect((err as Error).message).toMatch(/idleCloseMs/);
    const again = await a.open({ agentId: 'ag', sessionId: 'idle' });
    expect(again.session.history.length).toBe(2);
  });

  test('bad waitMs, handoff and idleCloseMs are TypeErrors naming the option, with nothing opened', async () => {
    const [a] = await two();
    for (const waitMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5', null]) {
      await expect(a.open({ agentId: 'ag', sessionId: 'bad', waitMs: waitMs as number })).rejects.toThrow(/waitMs/);
      await expect(a.open({ agentId: 'ag', sessionId: 'bad', waitMs: waitMs as number })).rejects.toBeInstanceOf(TypeError);
      await expect(a.resume({ agentId: 'ag', sessionId: 'bad', waitMs: waitMs as number })).rejects.toThrow(/waitMs/);
    }
    await expect(a.open({ agentId: 'ag', sessionId: 'bad', handoff: 'sometimes' as 'idle' })).rejects.toThrow(/handoff/);
    expect(a.get('bad')).toBeUndefined();
    expect((await a.list()).items.map((i) => i.sessionId)).not.toContain('bad');
    for (const idleCloseMs of [-5, Number.NaN, '10']) expect(() => new SessionsPlugin({ idleCloseMs: idleCloseMs as number })).toThrow(/idleCloseMs/);
    expect(() => new SessionsPlugin({ handoffGraceMs: -1 })).toThrow(/handoffGraceMs/);
    expect(() => new SessionsPlugin({ handoff: 'always' as 'idle' })).toThrow(/handoff/);
  });

  test('an open racing a delete of the same id ends in one consistent state', async () => {
    const [a, b] = await two();
    for (let i = 0; i < 8; i++) {
      const id = `del-${i}`;
      const seed = await a.open({ agentId: 'ag', sessionId: id });
      await say(seed, 'x');
      await seed.close();
      const [opened, deleted] = await Promise.allSettled([b.open({ agentId: 'ag', sessionId: id }), a.delete(id, { force: true })]);
      const rows = async (): Promise<number> => (await a.list()).items.filter((s) => s.sessionId === id).length;
      const present = await rows();
      if (opened.status === 'fulfilled') {
        const d = opened.value;
        if (present === 1) {
          // The open came last (it re-created the id after the delete, or resumed it before): a working session.
          await say(d, 'y');
        } else {
          // Deleted under its holder: its next write fails and writes nothing.
          const err = await say(d, 'y').catch((e: unknown) => e);
          expect(err).toBeInstanceOf(SessionError);
          expect(['SESSION_NOT_FOUND', 'LEASE_LOST']).toContain((err as SessionError).code);
          expect(await rows()).toBe(0);
        }
        await d.close();
      } else {
        expect(deleted.status).toBe('fulfilled');
        expect(opened.reason).toBeInstanceOf(SessionError);
      }
      // Whatever happened, the id can be opened cleanly now.
      const after = await b.open({ agentId: 'ag', sessionId: id });
      await say(after, 'after');
      await after.close();
    }
  });
});
