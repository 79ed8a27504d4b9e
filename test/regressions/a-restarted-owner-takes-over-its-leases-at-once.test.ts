/**
 * Bug: after a crash, the restarted service was locked out of its own conversations for
 * `leaseTtlMs`: it had a new owner id, and there was no way to say "I am the same instance".
 * Fixed: `SessionsPlugin({ owner })` is passed to the store with a fresh incarnation; a
 * new incarnation of the owner takes its leases over at once, and the stale one gets
 * `LEASE_LOST` (reported once as a warning) and opens nothing more under that owner id.
 */
import { jest } from '@jest/globals';
import { MemorySessionStore, Sessions } from '../../src/index.js';
import { serverOn } from '../sessions/harness.js';

test('a second server with the same owner resumes at once; the first gets LEASE_LOST, warns once and opens nothing more', async () => {
  const store = new MemorySessionStore();
  const leaseTtlMs = 60_000;
  const first = await serverOn(store, { owner: 'pod-7', leaseTtlMs });
  const old = await first.ctx.get(Sessions).create({ agentId: 'a', sessionId: 's' });
  await old.turn((_c, s) => void s.history.append({ role: 'user', content: 'before the restart' }));
  const other = await first.ctx.get(Sessions).create({ agentId: 'b', sessionId: 'other' });

  const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  try {
    // The restarted process: same owner id, new incarnation. No SESSION_BUSY, no waiting for the TTL.
    const second = await serverOn(store, { owner: 'pod-7', leaseTtlMs });
    const started = Date.now();
    const taken = await second.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' });
    expect(Date.now() - started).toBeLessThan(leaseTtlMs / 10);
    expect(taken.session.history.messages.map((m) => m.content)).toEqual(['before the restart']);
    const takenOther = await second.ctx.get(Sessions).resume({ agentId: 'b', sessionId: 'other' });

    // The old incarnation is fenced.
    await expect(old.turn((_c, s) => void s.history.append({ role: 'user', content: 'stale' }))).rejects.toMatchObject({ code: 'LEASE_LOST', sessionId: 's' });
    await expect(other.turn(() => undefined)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    const reused = warn.mock.calls.filter((c) => (c[1] as { code?: string } | undefined)?.code === 'POLESTAR_OWNER_REUSED');
    expect(reused).toHaveLength(1);
    expect(reused[0][1]).toMatchObject({ type: 'PolestarWarning' });
    expect(String(reused[0][0])).toMatch(/owner "pod-7"/);

    // ...and refuses to open anything more under that owner id.
    for (const open of [
      () => first.ctx.get(Sessions).resume({ agentId: 'a', sessionId: 's' }),
      () => first.ctx.get(Sessions).create({ agentId: 'c', sessionId: 'new' }),
    ]) {
      await expect(open()).rejects.toMatchObject({ code: 'LEASE_LOST', message: /two live processes share the owner id/ });
    }
    expect((await store.list()).items.map((i) => i.sessionId)).toEqual(['other', 's']);

    // The new incarnation works, and is not fenced by itself.
    await taken.turn((_c, s) => void s.history.append({ role: 'user', content: 'after the restart' }));
    await expect(second.ctx.get(Sessions).resume({ agentId: 'b', sessionId: 'other' })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    expect(taken.committedTurn).toBe(2);
    await takenOther.close();
    await second.server.dispose();
  } finally {
    warn.mockRestore();
  }
  await first.server.dispose();
  await store.close();
});
