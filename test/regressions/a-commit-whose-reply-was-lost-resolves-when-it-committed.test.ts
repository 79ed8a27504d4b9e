/**
 * Bug: when the reply to a commit was lost, `turn()` rejected with `STORE_ERROR` although
 * the turn had committed; the live session went back to the previous turn while the store
 * had moved on, and the natural retry of the same user message stored it twice.
 * Fixed: the session finds the commit's outcome out before `turn()` settles
 * (`attemptStatus`, or the idempotent commit repeated): a committed turn resolves with
 * fn's value and the live session advances with the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin, type SessionStore } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { faultyStore, lostReply } from '../sessions/faulty-store.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-lost-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Drops the reply of the next commit (the real store commits it). */
function dropNextCommitReply(inner: SessionStore): { store: SessionStore; arm: () => void } {
  let armed = false;
  const store = faultyStore(inner, {
    commit: async (real, ...args) => {
      const result = await real(...args);
      if (!armed) return result;
      armed = false;
      throw lostReply('commit');
    },
  });
  return { store, arm: () => void (armed = true) };
}

/** What a client does: send the message, and send it again when the turn reports a failure. */
async function sendWithRetry(durable: { turn: (fn: (c: unknown, s: { history: { append: (m: unknown) => unknown } }) => unknown) => Promise<unknown> }, content: string): Promise<number> {
  for (let tries = 1; ; tries++) {
    try {
      await durable.turn((_c, s) => {
        s.history.append({ role: 'user', content });
        return content.length;
      });
      return tries;
    } catch (err) {
      if (tries >= 3) throw err;
    }
  }
}

const stores: [string, () => SessionStore][] = [
  ['MemorySessionStore', () => new MemorySessionStore()],
  ['SqliteSessionStore', () => new SqliteSessionStore({ path: join(dir, `s-${Math.random().toString(36).slice(2)}.db`) })],
];

describe.each(stores)('on %s', (_name, makeStore) => {
  test('the turn resolves, committedTurn matches the store, and the message is stored once', async () => {
    const inner = makeStore();
    const { store, arm } = dropNextCommitReply(inner);
    const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store }));
    await server.finish();
    const sessions = server.createContext().get(Sessions);
    const durable = await sessions.create({ agentId: 'a', sessionId: 's' });
    await sendWithRetry(durable as never, 'hello');
    arm();
    const value = await durable.turn((_c, s) => {
      s.history.append({ role: 'user', content: 'refund my order' });
      return 'sent';
    });
    expect(value).toBe('sent');
    expect(durable.committedTurn).toBe(2);
    expect((await inner.load('s')).info.committedTurn).toBe(2);
    expect(durable.session.history.messages.map((m) => m.content)).toEqual(['hello', 'refund my order']);
    // The next turn is numbered on top of the store's.
    expect(await sendWithRetry(durable as never, 'thanks')).toBe(1);
    expect(durable.committedTurn).toBe(3);
    // A client retrying on failure sends a message whose commit reply is lost once.
    arm();
    expect(await sendWithRetry(durable as never, 'bye')).toBe(1);
    await durable.close();
    const again = await sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['hello', 'refund my order', 'thanks', 'bye']);
    expect(again.committedTurn).toBe(4);
    await server.dispose();
    await inner.close();
  });
});
