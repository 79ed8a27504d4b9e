/**
 * Regression: a `rollback()` whose deserializer threw rolled the store back but not the live
 * session; the next turn resolved, and a resume then lost two committed messages while
 * `committedTurn` still counted them. A rollback now deserializes everything it needs
 * before it changes the store: a failing deserializer leaves both as they were.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, type DurableSession, type LocalSerializer, type SessionStore } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';

class Memory {
  count = 0;
}

let broken = false;
const memorySerializer: LocalSerializer<Memory> = {
  key: 'app.memory',
  version: 1,
  scope: 'agent',
  serialize: (m) => m.count,
  deserialize: (j) => {
    if (broken) throw new Error('this build can not read it');
    return Object.assign(new Memory(), { count: j as number });
  },
};

async function open(store: SessionStore): Promise<{ server: Server; sessions: Sessions }> {
  const server = new Server();
  server.registerLocal(Memory, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Memory, memorySerializer]] }));
  await server.finish();
  return { server, sessions: server.createContext().get(Sessions) };
}

const say = (s: DurableSession, content: string): Promise<void> =>
  s.turn((c, session) => {
    session.history.append({ role: 'user', content });
    c.get(Memory).count++;
  });

const dir = mkdtempSync(join(tmpdir(), 'polestar-rollback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each([
  ['memory', (): SessionStore => new MemorySessionStore()],
  ['sqlite', (): SessionStore => new SqliteSessionStore({ path: join(dir, 'sessions.db') })],
])('on the %s store: a failing deserializer leaves the store and the live session as they were', async (_name, makeStore) => {
  broken = false;
  const store = makeStore();
  const a = await open(store);
  const s = await a.sessions.create({ agentId: 'a', sessionId: 's' });
  await say(s, 'one');
  await s.checkpoint('before the detour');
  await say(s, 'two');
  await say(s, 'three');

  broken = true;
  await expect(s.rollback(1)).rejects.toMatchObject({ code: 'DESERIALIZE_FAILED', sessionId: 's' });
  expect((await store.load('s')).info.committedTurn).toBe(3);
  expect(s.committedTurn).toBe(3);
  expect(s.session.history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three']);
  broken = false;

  await say(s, 'four');
  expect(s.committedTurn).toBe(4);
  await s.close();
  const b = await open(store);
  const again = await b.sessions.resume({ agentId: 'a', sessionId: 's' });
  expect(again.committedTurn).toBe(4);
  expect(again.session.history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three', 'four']);
  expect(again.agent.ctx.get(Memory).count).toBe(4);
  await Promise.all([a.server.dispose(), b.server.dispose()]);
  await store.close();
});
