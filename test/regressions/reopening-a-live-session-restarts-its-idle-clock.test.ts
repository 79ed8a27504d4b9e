/**
 * Regression: `sessions.open` of a session already live in this process returned it without
 * restarting its idle clock or its handoff grace, so a request that had just opened it could
 * see it closed by `idleCloseMs` (or handed off) before its first turn.
 */
import { Sessions } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';
import { sleep } from '../sessions/harness.js';
import { opened } from '../sessions/durable/helpers.js';

test('an open of the live session counts as activity: idleCloseMs runs from the last open', async () => {
  const { server, ctx, durable } = await opened({ idleCloseMs: 800 });
  const sessions = ctx.get(Sessions);
  for (let i = 0; i < 4; i++) {
    await sleep(400); // each wait alone is half the idle time; together they are twice it
    const again = await sessions.open({ agentId: durable.agent.id, sessionId: durable.id });
    expect(again).toBe(durable);
    expect(durable.isDisposed).toBe(false);
  }
  const lastOpen = performance.now();
  await probe.whenEnded(durable);
  expect(performance.now() - lastOpen).toBeGreaterThanOrEqual(790);
  expect(probe.closedBy(durable)).toBe('idle');
  await server.dispose();
});

test('an open of the live session pins it again: a handoff request waits for the new grace', async () => {
  const { server, ctx, durable } = await opened({ handoffGraceMs: 1_500 });
  await durable.turn(() => undefined); // the first grace is over once a turn settled
  await ctx.get(Sessions).open({ agentId: durable.agent.id, sessionId: durable.id });
  const asked = performance.now();
  probe.requestHandoff(durable, Date.now() + 5_000);
  await sleep(300);
  expect(durable.isDisposed).toBe(false); // pinned by the open
  await probe.whenEnded(durable);
  expect(performance.now() - asked).toBeGreaterThanOrEqual(1_000);
  expect(probe.closedBy(durable)).toBe('handoff');
  await server.dispose();
});
