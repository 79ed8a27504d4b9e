/**
 * Bug: when the reply to the started record (`begin`) was lost, or an aborted record could
 * not be written, every later `turn()` was `SESSION_BUSY` ("turn n … is still open") with
 * nothing running, until close + resume.
 * Fixed: that turn rejects with `STORE_ERROR` without running fn, and the next turn's
 * `begin` supersedes the attempt left open (`replaceOpen`).
 */
import { MemorySessionStore, Sessions, type SessionStore } from '../../src/index.js';
import { serverOn } from '../sessions/harness.js';
import { faultyStore, lostReply } from '../sessions/faulty-store.js';

function withFaults(inner: SessionStore) {
  const armed = { beginReply: false, abort: false };
  const store = faultyStore(inner, {
    begin: async (real, ...args) => {
      const result = await real(...args);
      if (!armed.beginReply) return result;
      armed.beginReply = false;
      throw lostReply('begin');
    },
    abort: async (real, ...args) => {
      if (!armed.abort) return real(...args);
      armed.abort = false;
      throw lostReply('abort');
    },
  });
  return { store, armed };
}

test('a begin whose reply was lost rejects STORE_ERROR without running fn, and the next turn works', async () => {
  const inner = new MemorySessionStore();
  const { store, armed } = withFaults(inner);
  const { server, ctx } = await serverOn(store);
  const durable = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  armed.beginReply = true;
  let ran = false;
  await expect(durable.turn(() => void (ran = true))).rejects.toMatchObject({ code: 'STORE_ERROR', sessionId: 's', message: /store\.begin\(\)/ });
  expect(ran).toBe(false);
  expect((await inner.load('s')).open).toBeDefined(); // the store did open that attempt
  await expect(durable.turn((_c, s) => void s.history.append({ role: 'user', content: 'hi' }))).resolves.toBeUndefined();
  expect(durable.committedTurn).toBe(1);
  const loaded = await inner.load('s');
  expect(loaded.open).toBeUndefined();
  expect(loaded.info.committedTurn).toBe(1);
  expect(loaded.history.map((e) => (e.body as { content: string }).content)).toEqual(['hi']);
  await server.dispose();
});

test('an abort that could not be written does not leave the next turn SESSION_BUSY', async () => {
  const inner = new MemorySessionStore();
  const { store, armed } = withFaults(inner);
  const { server, ctx } = await serverOn(store);
  const durable = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  armed.abort = true;
  const boom = new Error('boom');
  await expect(
    durable.turn((_c, s) => {
      s.history.append({ role: 'user', content: 'lost' });
      throw boom;
    }),
  ).rejects.toBe(boom);
  expect((await inner.load('s')).open).toBeDefined();
  expect(durable.session.history.length).toBe(0);
  await expect(durable.turn((_c, s) => void s.history.append({ role: 'user', content: 'kept' }))).resolves.toBeUndefined();
  expect(durable.committedTurn).toBe(1);
  await durable.close();
  const again = await ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
  expect(again.session.history.messages.map((m) => m.content)).toEqual(['kept']);
  expect(again.interruptedTurns).toEqual([]);
  await server.dispose();
});
