/**
 * Regression: `deserialize` received the stored, deep-frozen JSON, so
 * `deserialize: (j) => new Memory(j.facts)` failed much later, inside a turn, with "Cannot
 * add property 1, object is not extensible". It now gets a fresh, mutable copy per call
 * (on resume, and when a failed turn puts the locals back).
 */
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, type LocalSerializer } from '../../src/index.js';

class Memory {
  constructor(readonly facts: string[] = []) {}
}

const memorySerializer: LocalSerializer<Memory> = {
  key: 'app.memory',
  version: 1,
  scope: 'agent',
  serialize: (m) => m.facts,
  deserialize: (j) => new Memory(j as string[]), // keeps the array it is given
};

test('a deserialized local may keep and change the data it was given', async () => {
  const store = new MemorySessionStore();
  const server = new Server();
  server.registerLocal(Memory, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Memory, memorySerializer]] }));
  await server.finish();
  const sessions = server.createContext().get(Sessions);
  const created = await sessions.create({ agentId: 'a', sessionId: 's' });
  await created.turn((c) => void c.get(Memory).facts.push('likes tea'));
  await created.close();

  const resumed = await sessions.resume({ agentId: 'a', sessionId: 's' });
  await resumed.turn((c) => void c.get(Memory).facts.push('lives in Oslo'));
  // a failed turn puts the local back through deserialize: that copy is mutable too
  await expect(resumed.turn((c) => {
    c.get(Memory).facts.push('never committed');
    throw new Error('the model call failed');
  })).rejects.toThrow('the model call failed');
  await resumed.turn((c) => void c.get(Memory).facts.push('plays chess'));
  expect(resumed.agent.ctx.get(Memory).facts).toEqual(['likes tea', 'lives in Oslo', 'plays chess']);
  expect((await store.load('s')).checkpoint.locals[0]?.data).toEqual(['likes tea', 'lives in Oslo', 'plays chess']);
  await server.dispose();
});
