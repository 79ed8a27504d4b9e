/**
 * The store may write a turn's started record without waiting for the disk; `TurnLog.flush()`
 * is always durable and makes that record durable with it. So the first flush of an attempt
 * reaches the store even with nothing buffered, and later empty flushes of the same attempt
 * do not (its start is already on record).
 */
import { MemorySessionStore, Sessions, TurnLog } from '../../src/index.js';
import type { BegunAttempt, Lease, NewSessionEvent } from '../../src/sessions.js';
import { serverOn } from './harness.js';

class CountingStore extends MemorySessionStore {
  readonly appends: number[] = [];
  override append(lease: Lease, attempt: BegunAttempt, events: readonly NewSessionEvent[]): Promise<void> {
    this.appends.push(events.length);
    return super.append(lease, attempt, events);
  }
}

test('the first flush of an attempt writes even with nothing buffered; later empty flushes do not', async () => {
  const store = new CountingStore();
  const { server, ctx } = await serverOn(store);
  const d = await ctx.get(Sessions).create({ agentId: 'a-flush', sessionId: 'flush' });
  await d.turn(async (turnCtx) => {
    const log = turnCtx.get(TurnLog);
    await log.flush();
    await log.flush();
    log.record('tool/call', { name: 'charge' });
    await log.flush();
    await log.flush();
  });
  expect(store.appends).toEqual([0, 1]);
  // The next attempt is a new start: its first flush writes again.
  await d.turn(async (turnCtx) => {
    await turnCtx.get(TurnLog).flush();
  });
  expect(store.appends).toEqual([0, 1, 0]);
  expect(d.committedTurn).toBe(2);
  await server.dispose();
});
