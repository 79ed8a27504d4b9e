/**
 * Bug: a commit whose reply was lost, repeated after the lease had expired (nobody else
 * acquired the session meanwhile), was refused with LEASE_LOST although the attempt had
 * committed, so the caller was told its committed turn failed. The same for a repeated
 * abort. Fixed: a repeat of a commit (or abort) this lease already made answers as the
 * first did, writing nothing, for as long as the lease is still the session's recorded one
 * (expired or not); once another acquire replaced it, LEASE_LOST (and `attemptStatus`,
 * which needs no lease, tells the outcome).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySessionStore } from '../../src/sessions/store/memory.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import type { SessionStore } from '../../src/sessions/store/contract.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-repeat-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const stores: [string, () => SessionStore][] = [
  ['MemorySessionStore', () => new MemorySessionStore()],
  ['SqliteSessionStore', () => new SqliteSessionStore({ path: join(dir, `${Math.random().toString(36).slice(2)}.db`) })],
];

test.each(stores)('%s: the repeat of a commit after the lease expired resolves to the same CommittedTurn', async (_name, make) => {
  const store = make();
  const lease = await store.create({ sessionId: 's', agentId: 'a', owner: 'o', ttlMs: 150, locals: [] });
  const a = await store.begin(lease);
  const input = { ...a, events: [{ kind: 'history/append', body: { role: 'user', content: 'hi' } }], locals: [] };
  const first = await store.commit(lease, input);
  const b = await store.begin(lease);
  await store.abort(lease, { ...b, reason: 'failed' });
  await sleep(250);
  expect(await store.commit(lease, input)).toEqual(first);
  await expect(store.abort(lease, { ...b, reason: 'failed' })).resolves.toBeUndefined();
  expect((await store.load('s')).info.lastSeq).toBe(1);
  await store.close();
});
