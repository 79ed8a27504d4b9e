/**
 * Bug: when the reply to `store.create` was lost (the row and its first lease were written,
 * the caller heard an error), `sessions.create` rejected but left the row behind, leased to
 * this very process: retrying the create said SESSION_ALREADY_EXISTS and a resume said
 * SESSION_BUSY until the lease expired (30 s by default).
 * Fixed: a create that never settled removes the row it may have written, with the lease it
 * would have been given (owner, incarnation, epoch 1), so the retry works at once.
 */
import { MemorySessionStore, Sessions, type SessionStore } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverOn } from '../sessions/harness.js';
import { faultyStore, lostReply } from '../sessions/faulty-store.js';

const stores: [string, () => { store: SessionStore; done: () => Promise<void> }][] = [
  ['memory', () => ({ store: new MemorySessionStore(), done: async () => undefined })],
  [
    'sqlite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'polestar-lost-create-'));
      const store = new SqliteSessionStore({ path: join(dir, 's.db') });
      return { store, done: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
    },
  ],
];

test.each(stores)('%s: a lost create reply rejects, leaves no row, and the retry creates the session', async (_name, make) => {
  const { store: inner, done } = make();
  let armed = true;
  const store = faultyStore(inner, {
    create: async (real, ...args) => {
      const lease = await real(...args);
      if (!armed) return lease;
      armed = false;
      throw lostReply('create');
    },
  });
  const { server, ctx } = await serverOn(store);
  await expect(ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' })).rejects.toMatchObject({ code: 'STORE_ERROR' });
  await expect(inner.load('s')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  const again = await ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  expect(again.committedTurn).toBe(0);
  await server.dispose();
  await done();
});
