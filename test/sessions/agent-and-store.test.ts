/**
 * A durable session's agent is an agent in every sense (SPEC §12.1): subagents, parent
 * filters, per-agent locals; the plugin closes only the store it made; nothing leaks.
 */
import { AgentsPlugin, Agents, MemorySessionStore, ParamError, ParentFilter, Server, Sessions, SessionsPlugin, token } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { probe } from '../../src/testing/probe.js';
import { Memory, serverOn } from './harness.js';

const Secret = token<string>('Secret');
const Shared = token<string>('Shared');

test('create and resume accept parent and parentFilter; the agent gets its own per-agent locals', async () => {
  const store = new MemorySessionStore();
  const { server, ctx } = await serverOn(store);
  ctx.insert(Secret, 'owner secret');
  ctx.insert(Shared, 'shared');
  const parent = await ctx.get(Agents).create({ id: 'parent' });
  const s = await ctx.get(Sessions).create({ agentId: 'child', sessionId: 's', parent: parent.agent, parentFilter: ParentFilter.allowOnly([Shared]) });
  expect(s.agent.parent).toBe(parent.agent);
  expect(s.agent.ctx.parent).toBe(parent.agent.ctx);
  expect(s.agent.ctx.get(Memory)).not.toBe(parent.agent.ctx.get(Memory));
  await s.turn((turnCtx) => {
    expect(turnCtx.get(Shared)).toBe('shared');
    expect(() => turnCtx.get(Secret)).toThrow(ParamError);
  });
  await s.close();
  const again = await ctx.get(Sessions).resume({ agentId: 'child', sessionId: 's', parent: parent.agent, parentFilter: ParentFilter.allowOnly([Shared]) });
  expect(() => again.session.ctx.get(Secret)).toThrow(ParamError);
  await parent.dispose(); // disposing the parent agent disposes the durable session's agent
  expect(again.isDisposed).toBe(true);
  expect((await store.load('s')).info.lease).toBeUndefined();
  await server.dispose();
});

test('the plugin closes the store it made, never one it was given; nothing leaks', async () => {
  const given = new MemorySessionStore();
  const { server, ctx } = await serverOn(given);
  const s = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  await s.turn(() => undefined);
  await s.close();
  await (await ctx.get(Sessions).create({ agentId: 'b', sessionId: 't' })).dispose();
  await ctx.dispose();
  assertNoLeaks(server);
  await server.dispose();
  await expect(given.load('s')).resolves.toBeDefined(); // still open: it is the caller's

  const own = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin());
  await own.finish();
  const app = own.createContext();
  await (await app.get(Sessions).create({ agentId: 'a', sessionId: 's' })).close();
  const made = probe.sessionStore(app.get(Sessions));
  await own.dispose();
  await expect(made.list()).rejects.toMatchObject({ code: 'STORE_ERROR' });
});

test('disposing the server disposes its durable sessions and releases their leases', async () => {
  const store = new MemorySessionStore();
  const a = await serverOn(store);
  const s = await a.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  await a.server.dispose();
  expect(s.isDisposed).toBe(true);
  expect((await store.load('s')).info.lease).toBeUndefined();
});
