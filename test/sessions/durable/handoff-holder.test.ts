/**
 * The holder's side of a handoff (`probe.requestHandoff(session, until)`, what the router calls for a
 * process waiting to open the session): a session that is not pinned closes at once; a
 * pinned one (from its open until its first turn settles or `handoffGraceMs` passed, and
 * while a turn runs or waits) closes the moment it is unpinned, if the request's deadline has
 * not passed; `'never'` (the plugin's, or the open's) ignores requests.
 */
import { MemorySessionStore, Sessions } from '../../../src/index.js';
import { probe } from '../../../src/testing/probe.js';
import { serverOn, sleep } from '../harness.js';
import { deferred, opened, rejection } from './helpers.js';

const soon = (ms = 10_000): number => Date.now() + ms;

describe('handoff requests on the holder', () => {
  test('a session that is not pinned closes at once; its turns then reject with SESSION_CLOSED naming the handoff', async () => {
    const { server, ctx, durable, store } = await opened({ handoffGraceMs: 0 });
    probe.requestHandoff(durable, soon());
    expect(probe.isClosing(durable)).toBe(true);
    expect(probe.closedBy(durable)).toBe('handoff');
    await probe.whenEnded(durable);
    expect(durable.isDisposed).toBe(true);
    expect(ctx.get(Sessions).get(durable.id)).toBeUndefined();
    expect((await store.load(durable.id)).info.lease).toBeUndefined();
    const err = await rejection(durable.turn(() => 1));
    expect(err.code).toBe('SESSION_CLOSED');
    expect(err.reason).toBe('handoff');
    expect(err.message).toMatch(/closed: another process asked for it \(handoff\)/);
    expect(err.message).toMatch(/sessions\.open\(/);
    await server.dispose();
  });

  test('pinned by the grace: closes when handoffGraceMs has passed since the open', async () => {
    const { server, durable } = await opened({ handoffGraceMs: 80 });
    const asked = performance.now();
    probe.requestHandoff(durable, soon());
    await sleep(20);
    expect(probe.isClosing(durable)).toBe(false);
    await probe.whenEnded(durable);
    expect(performance.now() - asked).toBeGreaterThanOrEqual(50);
    expect(probe.closedBy(durable)).toBe('handoff');
    await server.dispose();
  });

  test('pinned by the grace: closes right after its first turn settles, which commits', async () => {
    const { server, durable } = await opened({ handoffGraceMs: 60_000 });
    probe.requestHandoff(durable, soon());
    await sleep(10);
    expect(probe.isClosing(durable)).toBe(false);
    await durable.turn(() => 'first');
    expect(durable.committedTurn).toBe(1);
    expect(probe.closedBy(durable)).toBe('handoff');
    await probe.whenEnded(durable);
    await server.dispose();
  });

  test('pinned while a turn is in flight or queued: closes once the queue drained; every queued turn runs', async () => {
    const { server, durable } = await opened({ handoffGraceMs: 0 });
    const gate = deferred();
    const first = durable.turn(() => gate.promise.then(() => 'first'));
    const second = durable.turn(() => 'second', { waitMs: 10_000 });
    probe.requestHandoff(durable, soon());
    await sleep(10);
    expect(probe.isClosing(durable)).toBe(false);
    gate.resolve();
    expect(await first).toBe('first');
    expect(await second).toBe('second');
    expect(durable.committedTurn).toBe(2);
    expect(probe.closedBy(durable)).toBe('handoff');
    await probe.whenEnded(durable);
    await server.dispose();
  });

  test('a request whose deadline passed is ignored, at once or by the time the session is unpinned', async () => {
    const { server, durable } = await opened({ handoffGraceMs: 0 });
    probe.requestHandoff(durable, Date.now() - 1);
    expect(probe.isClosing(durable)).toBe(false);
    const gate = deferred();
    const turn = durable.turn(() => gate.promise);
    probe.requestHandoff(durable, Date.now() + 30);
    await sleep(60);
    gate.resolve();
    await turn;
    await sleep(10);
    expect(probe.isClosing(durable)).toBe(false);
    expect(durable.isDisposed).toBe(false);
    await durable.turn(() => undefined);
    await server.dispose();
  });

  test("handoff: 'never' (the plugin's or the open's) ignores every request", async () => {
    const a = await opened({ handoff: 'never', handoffGraceMs: 0 });
    probe.requestHandoff(a.durable, soon());
    await sleep(10);
    expect(probe.isClosing(a.durable)).toBe(false);
    await a.durable.turn(() => undefined);
    expect(a.durable.isDisposed).toBe(false);
    await a.server.dispose();

    const { server, ctx } = await serverOn(new MemorySessionStore(), { handoffGraceMs: 0 });
    // (an open that resumes a stored session)
    await (await ctx.get(Sessions).create({ agentId: 'never-agent', sessionId: 'never-session' })).close();
    const pinned = await ctx.get(Sessions).open({ agentId: 'never-agent', sessionId: 'never-session', handoff: 'never' });
    expect(pinned.opened).toBe('resumed');
    probe.requestHandoff(pinned, soon());
    const other = await ctx.get(Sessions).open({ agentId: 'idle-agent', sessionId: 'idle-session' });
    probe.requestHandoff(other, soon());
    await sleep(10);
    expect(probe.isClosing(pinned) || pinned.isDisposed).toBe(false);
    expect(probe.closedBy(other)).toBe('handoff');
    await server.dispose();
  });

  test('_whenEnded settles for a dispose too, and never rejects', async () => {
    const { server, durable } = await opened();
    const ended = probe.whenEnded(durable);
    await durable.dispose();
    await expect(ended).resolves.toBeUndefined();
    expect(probe.closedBy(durable)).toBeUndefined();
    await server.dispose();
  });
});
