/**
 * The cancel hook of a durable session (`probe.cancelTurn`, what `sessions.cancel` calls in the
 * process that runs the turn): it reaches only the turn in flight, never a queued one, a
 * rollback or a checkpoint; a turn whose started record is still being written is cancelled
 * without running `fn`.
 */
import { probe } from '../../../src/testing/probe.js';
import { deferred, heldCall, opened, rejection } from './helpers.js';

describe('cancelling a durable session\'s turn (probe.cancelTurn)', () => {
  test('a queued turn is not cancelled: the one in flight is, and the queued one then runs', async () => {
    const { server, durable } = await opened();
    const gate = deferred();
    const first = durable.turn(async (turnCtx) => {
      await new Promise((resolve) => {
        turnCtx.signal.addEventListener('abort', resolve);
        gate.resolve();
      });
      return 'first';
    });
    const queued = durable.turn(() => 'queued', { waitMs: 10_000 });
    await gate.promise;
    expect(probe.cancelTurn(durable, 'stop')).toBe(true);
    const err = await rejection(first);
    expect(err.code).toBe('TURN_CANCELLED');
    expect(err.reason).toBe('stop');
    expect(await queued).toBe('queued');
    expect(durable.committedTurn).toBe(1);
    await server.dispose();
  });

  test('a rollback or a checkpoint holding the slot is not a turn: false', async () => {
    const { store, entered: pinning, go } = heldCall('pin');
    const { server, durable } = await opened({}, store);
    const p = durable.checkpoint('held');
    await pinning.promise;
    expect(probe.openAttempt(durable)).toBeUndefined();
    expect(probe.cancelTurn(durable, 'not a turn')).toBe(false);
    go.resolve();
    expect(await p).toBe(0);
    await server.dispose();
  });

  test('while the started record is written: no open attempt yet; a cancel without attempt stops the turn before fn', async () => {
    const { inner, store, entered: begun, go } = heldCall('begin');
    const { server, durable } = await opened({}, store);
    let ran = false;
    const p = durable.turn(() => {
      ran = true;
    });
    await begun.promise;
    expect(probe.openAttempt(durable)).toBeUndefined();
    expect(probe.cancelTurn(durable, 'with an attempt', { turn: 1, attempt: 1 })).toBe(true);
    expect(probe.cancelTurn(durable, 'early')).toBe(true);
    go.resolve();
    const err = await rejection(p);
    expect(err.code).toBe('TURN_CANCELLED');
    expect(err.message).toMatch(/turn 1 of session ".*" was cancelled \(early\)/);
    expect(ran).toBe(false);
    expect((await inner.load(durable.id)).open).toBeUndefined();
    await server.dispose();
  });
});
