/**
 * `SessionsPlugin({ idleCloseMs })`: a session with no turn for that long (from the end of its
 * last turn, or its open) closes itself, never while a turn runs or waits; a turn on it then
 * rejects with `SESSION_CLOSED` naming the reason and saying to open it again.
 */
import { Sessions } from '../../../src/index.js';
import { probe } from '../../../src/testing/probe.js';
import { sleep } from '../harness.js';
import { deferred, opened, rejection } from './helpers.js';

const waitFor = async (cond: () => boolean, ms = 2_000): Promise<void> => {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error('timed out waiting');
    await sleep(5);
  }
};

describe('idleCloseMs', () => {
  test('a session with no turn since its open closes itself; its turns then reject with SESSION_CLOSED naming idleCloseMs', async () => {
    const { server, ctx, durable, store } = await opened({ idleCloseMs: 60 });
    const started = performance.now();
    expect(probe.closedBy(durable)).toBeUndefined();
    await probe.whenEnded(durable);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(probe.closedBy(durable)).toBe('idle');
    expect(probe.isClosing(durable)).toBe(false);
    expect(durable.isDisposed).toBe(true);
    expect(ctx.get(Sessions).get(durable.id)).toBeUndefined();
    expect((await store.load(durable.id)).info.lease).toBeUndefined();
    for (const call of [() => durable.turn(() => 1), () => durable.rollback(0), () => durable.checkpoint()]) {
      const err = await rejection(call());
      expect(err.code).toBe('SESSION_CLOSED');
      expect(err.reason).toBe('idle');
      expect(err.message).toMatch(/closed after idleCloseMs \(60 ms\) without a turn/);
      expect(err.message).toMatch(/sessions\.open\(/);
    }
    // and it opens again
    const again = await ctx.get(Sessions).resume({ agentId: durable.agent.id, sessionId: durable.id });
    expect(again.committedTurn).toBe(0);
    await server.dispose();
  });

  test('turns keep it open; it closes idleCloseMs after the end of the last one', async () => {
    const { server, durable } = await opened({ idleCloseMs: 80 });
    for (let i = 0; i < 6; i++) {
      await sleep(30);
      await durable.turn(() => undefined);
    }
    const lastEnd = performance.now();
    expect(durable.isDisposed).toBe(false);
    await probe.whenEnded(durable);
    expect(performance.now() - lastEnd).toBeGreaterThanOrEqual(75);
    expect(probe.closedBy(durable)).toBe('idle');
    expect(durable.committedTurn).toBe(6);
    await server.dispose();
  });

  test('never while a turn is in flight or queued', async () => {
    const { server, durable } = await opened({ idleCloseMs: 30 });
    const gate = deferred();
    const long = durable.turn(() => gate.promise);
    const queued = durable.turn(() => 'queued', { waitMs: 10_000 });
    await sleep(120);
    expect(durable.isDisposed).toBe(false);
    gate.resolve();
    await long;
    expect(await queued).toBe('queued');
    const end = performance.now();
    await probe.whenEnded(durable);
    expect(performance.now() - end).toBeGreaterThanOrEqual(25);
    expect(durable.committedTurn).toBe(2);
    await server.dispose();
  });

  test('without idleCloseMs a session stays open; close() reports closedBy close', async () => {
    const { server, durable } = await opened();
    await sleep(50);
    expect(durable.isDisposed).toBe(false);
    const closing = durable.close();
    expect(probe.isClosing(durable)).toBe(true);
    await closing;
    await probe.whenEnded(durable);
    expect(probe.isClosing(durable)).toBe(false);
    expect(probe.closedBy(durable)).toBe('close');
    const err = await rejection(durable.turn(() => 1));
    expect(err.code).toBe('SESSION_CLOSED');
    expect(err.reason).toBeUndefined();
    await server.dispose();
  });

  test('a session closed meanwhile by close() is not closed again by the idle timer', async () => {
    const { server, durable } = await opened({ idleCloseMs: 20 });
    await durable.close();
    await sleep(40);
    expect(probe.closedBy(durable)).toBe('close');
    await waitFor(() => durable.isDisposed);
    await server.dispose();
  });
});
