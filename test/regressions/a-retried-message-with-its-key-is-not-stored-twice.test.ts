/**
 * Bug: a client whose turn failed with COMMIT_UNKNOWN (the commit's reply lost, and the
 * store unreachable while the session checked) could not tell whether its message was
 * applied: the natural retry, once the store was back, ran the message again after the
 * session found the first commit applied, and the history held it twice.
 * Fixed: `turn(fn, { key })` stores the key with the attempt; a retry with the key of a
 * committed turn rejects with TURN_ALREADY_COMMITTED (with `turn`) without running `fn`, so
 * the message is stored once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsPlugin, MemorySessionStore, Server, SessionError, Sessions, SessionsPlugin, type DurableSession, type SessionStore } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { faultyStore, lostReply } from '../sessions/faulty-store.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-retried-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store whose next commit reply is lost, and which is unreachable for status reads while `down`. */
function flaky(inner: SessionStore) {
  const state = { dropCommitReply: false, down: false };
  const store = faultyStore(inner, {
    commit: async (real, ...args) => {
      if (state.down && !state.dropCommitReply) throw lostReply('commit');
      const result = await real(...args);
      if (!state.dropCommitReply) return result;
      state.dropCommitReply = false;
      throw lostReply('commit');
    },
    attemptStatus: async (real, ...args) => {
      if (state.down) throw new SessionError('STORE_ERROR', 'store error: connection refused (the test took the store down)');
      return real(...args);
    },
  });
  return { store, state };
}

/** What a client does: send the message with its id as the key; on a failure, send it again (same id). */
async function send(durable: DurableSession, id: string, content: string, runs: { n: number }): Promise<unknown> {
  return durable.turn(
    (_c, s) => {
      runs.n += 1;
      s.history.append({ role: 'user', content });
      return 'sent';
    },
    { key: id },
  );
}

const stores: [string, () => SessionStore][] = [
  ['MemorySessionStore', () => new MemorySessionStore()],
  ['SqliteSessionStore', () => new SqliteSessionStore({ path: join(dir, `s-${Math.random().toString(36).slice(2)}.db`) })],
];

describe.each(stores)('on %s', (_name, makeStore) => {
  test('after COMMIT_UNKNOWN, the retry with the same key rejects TURN_ALREADY_COMMITTED and the message is stored once', async () => {
    const inner = makeStore();
    const { store, state } = flaky(inner);
    const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, storeTimeoutMs: 100 }));
    await server.finish();
    const sessions = server.createContext().get(Sessions);
    const durable = await sessions.create({ agentId: 'a', sessionId: 's' });
    const runs = { n: 0 };
    await send(durable, 'm-1', 'hello', runs);

    state.dropCommitReply = true;
    state.down = true;
    const first = await send(durable, 'm-2', 'refund my order', runs).catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'COMMIT_UNKNOWN', turn: 2 });
    expect(durable.committedTurn).toBe(1);

    // the store comes back; the client retries the message it did not get an answer for
    state.down = false;
    const retry = await send(durable, 'm-2', 'refund my order', runs).catch((e: unknown) => e);
    expect(retry).toBeInstanceOf(SessionError);
    expect(retry).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    expect(runs.n).toBe(2);
    expect(durable.committedTurn).toBe(2);
    expect(durable.session.history.messages.map((m) => m.content)).toEqual(['hello', 'refund my order']);

    // and again after a lost reply the session resolved itself: the next message goes on as usual
    state.dropCommitReply = true;
    expect(await send(durable, 'm-3', 'thanks', runs)).toBe('sent');
    expect(await send(durable, 'm-3', 'thanks', runs).catch((e: unknown) => e)).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 3 });
    await durable.close();

    const again = await sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(again.session.history.messages.map((m) => m.content)).toEqual(['hello', 'refund my order', 'thanks']);
    expect(await send(again, 'm-2', 'refund my order', runs).catch((e: unknown) => e)).toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
    expect(runs.n).toBe(3);
    await server.dispose();
    await inner.close();
  });
});
