/**
 * Found by a fault hunt of the cross-process routing. `sessions.cancel` from another process
 * records the cancel for the session's open attempt and answers `true`; the holder, woken by
 * the notification, reads the request and hands it to its live turn. Bug: when the
 * notification arrives while the holder's `store.begin()` has written the started record but
 * its reply has not reached the holder yet (a network round trip on PostgreSQL), the turn
 * does not know its attempt yet, `_cancel` refuses the request as "another attempt", and on a
 * store that notifies (memory, PostgreSQL) nothing ever reads the request again: the turn runs
 * to its end and commits although `cancel()` said `true` (SPEC 13.2, 13.6: the turn rejects
 * with TURN_CANCELLED).
 */
import { MemorySessionStore, SessionError, Sessions, type SessionStore } from '../../src/index.js';
import { serverOn, untilAborted, type Harness } from '../sessions/harness.js';

/** `store` whose `begin` replies only once `gate` resolves (its work is done at once: the started record is stored). */
function slowBeginReplies(store: SessionStore, gate: Promise<void>): SessionStore {
  return new Proxy(store, {
    get(target, p) {
      const v = Reflect.get(target, p, target) as unknown;
      if (typeof v !== 'function') return v;
      if (p === 'begin') {
        return async (...args: unknown[]) => {
          const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          await gate;
          return r;
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.server.dispose();
});

test('a cancel recorded while the holder waits for its begin reply still aborts that turn', async () => {
  const store = new MemorySessionStore();
  let openGate!: () => void;
  const gate = new Promise<void>((r) => (openGate = r));
  const a = await serverOn(slowBeginReplies(store, gate), { owner: 'a', leaseTtlMs: 10_000 });
  const b = await serverOn(store, { owner: 'b', leaseTtlMs: 10_000 });
  harnesses.push(a, b);
  const d = await a.ctx.get(Sessions).open({ agentId: 'ag', sessionId: 's' });

  let ran = false;
  const done = d
    .turn(async (turnCtx, session) => {
      ran = true;
      session.history.append({ role: 'user', content: 'must not commit' });
      await untilAborted(turnCtx.signal, 1_500);
      return 'finished';
    })
    .then(
      (v) => v,
      (e: unknown) => e,
    );
  // The started record is in the store; its reply has not reached the holder yet.
  await new Promise((r) => setTimeout(r, 50));
  expect((await store.load('s')).open).toBeDefined();
  expect(await b.ctx.get(Sessions).cancel('s', 'user pressed stop')).toBe(true);
  // The holder heard the notification (and read the request) before its begin reply came.
  await new Promise((r) => setTimeout(r, 50));
  openGate();

  const outcome = await done;
  expect(outcome).toBeInstanceOf(SessionError);
  expect(outcome).toMatchObject({ code: 'TURN_CANCELLED', reason: 'user pressed stop' });
  expect(d.committedTurn).toBe(0);
  // fn must not run (it was cancelled before it started), or at least see its signal abort.
  expect(ran).toBe(false);
}, 10_000);
