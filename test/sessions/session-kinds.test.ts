/**
 * Durable sessions whose agent is made from a kind (`agents.define`): `open`, `create` and
 * `resume` take `kind` (the `AgentKind` or its name) instead of `setup`, the kind's setup
 * composes the agent, `agent.kind` names it, and an unknown kind or a kind with a setup is a
 * TypeError with nothing stored.
 */
import { Agents, MemorySessionStore, Sessions } from '../../src/index.js';
import { serverOn } from './harness.js';

class Composed {
  constructor(readonly by: string) {}
}

test('open, create and resume make the agent from a kind', async () => {
  const store = new MemorySessionStore();
  const { server, ctx } = await serverOn(store);
  try {
    const agents = ctx.get(Agents);
    let setups = 0;
    const researcher = agents.define('researcher', {
      setup: (agentCtx) => {
        setups++;
        agentCtx.insert(new Composed('researcher'));
      },
    });
    const sessions = ctx.get(Sessions);
    const a = await sessions.open({ kind: researcher, agentId: 'r-1', sessionId: 'chat-1' });
    expect(a.agent.kind).toBe('researcher');
    expect(a.agent.ctx.get(Composed).by).toBe('researcher');
    await a.close();
    const b = await sessions.resume({ kind: 'researcher', agentId: 'r-1', sessionId: 'chat-1' });
    expect(b.agent.kind).toBe('researcher');
    await b.close();
    const c = await sessions.create({ kind: 'researcher', agentId: 'r-2', sessionId: 'chat-2' });
    expect(String(c.agent)).toContain('kind "researcher"');
    expect(setups).toBe(3);

    await expect(sessions.open({ kind: 'writer', agentId: 'w', sessionId: 'w-1' })).rejects.toThrow(/researcher/);
    await expect(sessions.open({ kind: 'writer', agentId: 'w', sessionId: 'w-1' })).rejects.toBeInstanceOf(TypeError);
    await expect(sessions.open({ kind: researcher, setup: () => undefined, agentId: 'w', sessionId: 'w-1' })).rejects.toBeInstanceOf(TypeError);
    expect((await sessions.list()).items.map((i) => i.sessionId)).toEqual(['chat-1', 'chat-2']);
  } finally {
    await server.dispose();
  }
});
