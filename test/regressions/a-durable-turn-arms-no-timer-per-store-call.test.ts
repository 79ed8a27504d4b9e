/**
 * Bug: bounding every store call by storeTimeoutMs armed one timer per call (two per durable
 * turn: begin and commit), which made back-to-back turns on a fast store about half again
 * as slow as before the bound existed.
 * Fixed: the calls of one store share one bound, so they wait in one deadline-ordered queue
 * watched by a single timer, armed at most once per bound.
 */
import { createHook } from 'node:async_hooks';
import { MemorySessionStore, Sessions } from '../../src/index.js';
import { Memory, serverOn } from '../sessions/harness.js';

test('a hundred durable turns arm no timer per store call, and the bound still holds', async () => {
  const { server, ctx } = await serverOn(new MemorySessionStore());
  const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  let timers = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'Timeout') timers++;
    },
  });
  hook.enable();
  try {
    for (let i = 0; i < 100; i++) {
      await s.turn((turnCtx, session) => {
        session.history.append({ role: 'user', content: `m${i}` });
        turnCtx.get(Memory).count++;
      });
    }
  } finally {
    hook.disable();
  }
  expect(s.committedTurn).toBe(100);
  expect(timers).toBeLessThanOrEqual(2);
  await server.dispose();
});
