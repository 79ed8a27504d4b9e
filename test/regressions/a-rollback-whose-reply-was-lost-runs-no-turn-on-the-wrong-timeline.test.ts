/**
 * Bug: when the reply to `store.rollback()` was lost after the store had rolled back,
 * `rollback()` rejected but the live session stayed where it was (history, locals,
 * `committedTurn` of the later turns) while the store had gone back: the next turn then
 * resolved, committing on top of the rolled-back store a turn whose live history still held
 * the superseded messages, and a resume showed another conversation than the live session had.
 * Fixed: a rollback whose outcome is unknown disposes the session (releasing its lease) and
 * rejects with `STORE_ERROR` naming store.rollback() and telling the caller to resume.
 */
import { MemorySessionStore, Sessions } from '../../src/index.js';
import { Memory, serverOn } from '../sessions/harness.js';
import { faultyStore, lostReply } from '../sessions/faulty-store.js';

const say = (content: string) => ({ role: 'user' as const, content });
const contents = (s: { session: { history: { messages: readonly { content?: unknown }[] } } }) => s.session.history.messages.map((m) => m.content);

test('a rollback whose reply was lost leaves no live session that disagrees with the store', async () => {
  const inner = new MemorySessionStore();
  let lose = false;
  const store = faultyStore(inner, {
    rollback: async (real, ...args) => {
      await real(...args);
      if (!lose) return;
      lose = false;
      throw lostReply('rollback');
    },
  });
  const { server, ctx } = await serverOn(store);
  const sessions = ctx.get(Sessions);
  const s = await sessions.create({ agentId: 'a', sessionId: 's' });
  await s.turn((turnCtx, session) => {
    session.history.append(say('one'));
    turnCtx.get(Memory).count = 1;
  });
  await s.turn((turnCtx, session) => {
    session.history.append(say('two'));
    turnCtx.get(Memory).count = 2;
  });
  lose = true;
  const err = await s.rollback(1).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'STORE_ERROR', sessionId: 's', message: /store\.rollback\(\).*may or may not have been applied.*sessions\.resume/ });
  // No turn can run on a timeline the store may not have.
  const next = await s.turn((_c, session) => void session.history.append(say('three'))).then(
    () => 'committed',
    (e: unknown) => e,
  );
  expect(next).toMatchObject({ code: 'SESSION_CLOSED' });
  expect(s.isDisposed).toBe(true);
  // A resume right after works (the lease was released) and shows what the store holds.
  const again = await sessions.resume({ agentId: 'a', sessionId: 's' });
  expect(again.committedTurn).toBe(1);
  expect(contents(again)).toEqual(['one']);
  expect(again.agent.ctx.get(Memory).count).toBe(1);
  await server.dispose();
});
