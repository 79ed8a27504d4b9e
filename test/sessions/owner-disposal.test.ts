/**
 * The owner disposed while the create/resume transaction waits on the store (SPEC §12.2):
 * the call rejects, nothing is published, the lease is released at once, a create's late
 * row is removed, and the same ids can be used again right away.
 */
import { AgentError, Agents, MemorySessionStore, Sessions } from '../../src/index.js';
import type { LoadedSession } from '../../src/sessions.js';
import { delegateStore, serverOn, sleep } from './harness.js';

test('a load that never settles: disposing the owner rejects the resume and releases the lease at once', async () => {
  const inner = new MemorySessionStore();
  const seed = await serverOn(inner);
  await (await seed.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' })).close();
  let hang = true;
  const store = delegateStore(inner, {
    load: (id, o) => (hang ? new Promise<LoadedSession>(() => undefined) : inner.load(id, o)),
  });
  const h = await serverOn(store);
  const owner = h.ctx.child();
  const p = owner.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
  await sleep(10);
  expect((await inner.load('s')).info.lease).toBeDefined(); // taken, load pending
  await owner.dispose();
  await expect(p).rejects.toBeInstanceOf(AgentError);
  expect((await inner.load('s')).info.lease).toBeUndefined();
  expect(h.ctx.get(Agents).get('a')).toBeUndefined();
  hang = false;
  await expect(h.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' })).resolves.toBeDefined();
  await seed.server.dispose();
  await h.server.dispose();
});

test('a create whose row lands after the owner was disposed: the row is removed at once', async () => {
  const inner = new MemorySessionStore();
  let gate: (() => void) | undefined;
  let gated = true;
  const store = delegateStore(inner, {
    create: async (input) => {
      if (gated) await new Promise<void>((r) => (gate = r));
      return inner.create(input);
    },
  });
  const h = await serverOn(store);
  const owner = h.ctx.child();
  const p = owner.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  await sleep(10);
  await owner.dispose();
  await expect(p).rejects.toBeInstanceOf(AgentError);
  gated = false;
  gate?.();
  await sleep(10);
  await expect(inner.load('s')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  await expect(h.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' })).resolves.toBeDefined();
  await h.server.dispose();
});
