/**
 * Resume failures on a real SQLite file (SPEC §12.2): a corrupt row, a row written by a
 * newer format and a newer local version each reject, publish nothing, release the lease
 * at once (another owner acquires without waiting for the TTL) and free both ids; after
 * the repair the same ids resume.
 */
import { createClient } from '@libsql/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agents, Sessions } from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { serverOn } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-resume-failures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function seeded(name: string): Promise<{ store: SqliteSessionStore; sql: (q: string) => Promise<void>; close: () => void }> {
  const path = join(dir, `${name}.db`);
  const store = new SqliteSessionStore({ path });
  const h = await serverOn(store);
  const s = await h.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  await s.turn((_c, session) => void session.history.append({ role: 'user', content: 'hello' }));
  await h.server.dispose();
  const client = createClient({ url: `file:${path}` });
  return {
    store,
    close: () => client.close(),
    sql: async (q) => {
      await client.execute(q);
    },
  };
}

test.each([
  ['a corrupt event body', 'CORRUPT_ROW', "UPDATE polestar_events SET body = '{not json' WHERE seq = 1", "UPDATE polestar_events SET body = '{\"role\":\"user\",\"content\":\"hello\"}' WHERE seq = 1"],
  ['an event written by a newer format', 'UNSUPPORTED_FORMAT', 'UPDATE polestar_events SET format = 99', 'UPDATE polestar_events SET format = 1'],
  [
    'a local written by a newer serializer version',
    'UNSUPPORTED_FORMAT',
    "UPDATE polestar_checkpoints SET locals = replace(locals, '\"version\":1', '\"version\":7')",
    "UPDATE polestar_checkpoints SET locals = replace(locals, '\"version\":7', '\"version\":1')",
  ],
])('%s: resume rejects with %s, publishes nothing, releases the lease; after the repair it resumes', async (name, code, breakIt, repair) => {
  const { store, sql, close } = await seeded(name.replace(/\W+/g, '-'));
  await sql(breakIt);
  const h = await serverOn(store);
  const err = await h.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code });
  expect(h.ctx.get(Sessions).get('s')).toBeUndefined();
  expect(h.ctx.get(Agents).get('a')).toBeUndefined();
  // released at once: another owner takes it without waiting for the TTL
  const lease = await store.acquire('s', { owner: 'someone-else', ttlMs: 10_000 });
  await store.release(lease);
  await sql(repair);
  const again = await h.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
  expect(again.session.history.messages).toEqual([{ role: 'user', content: 'hello' }]);
  await h.server.dispose();
  await store.close();
  close();
});
