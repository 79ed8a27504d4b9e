/**
 * One FIFO turn slot per durable session: without `waitMs` a second turn is `SESSION_BUSY`;
 * with it, turns (and rollbacks and checkpoints) queue and run in call order, leave the
 * queue with `SESSION_BUSY` when their wait passes, and `close()` rejects the queued ones
 * while draining the one in flight.
 */
import { SessionError } from '../../../src/index.js';
import { sleep } from '../harness.js';
import { deferred, opened, rejection, say, tick } from './helpers.js';

describe('durable turn queue', () => {
  test('without waitMs (or waitMs: 0) a turn while another runs is SESSION_BUSY', async () => {
    const { server, durable } = await opened();
    const gate = deferred();
    const first = durable.turn(() => gate.promise);
    for (const options of [undefined, { waitMs: 0 }]) {
      const err = await rejection(durable.turn(() => 'second', options));
      expect(err).toBeInstanceOf(SessionError);
      expect(err.code).toBe('SESSION_BUSY');
      expect(err.message).toMatch(/turn 1 of session ".*" is running/);
      expect(err.message).toMatch(/waitMs/);
    }
    gate.resolve();
    await first;
    expect(durable.committedTurn).toBe(1);
    await server.dispose();
  });

  test('with waitMs turns queue and run in call order, each committed', async () => {
    const { server, durable } = await opened();
    const order: string[] = [];
    const gate = deferred();
    const first = durable.turn(async (_c, session) => {
      await gate.promise;
      order.push('a');
      session.history.append(say('a'));
      return 'a';
    });
    const rest = ['b', 'c', 'd'].map((name) =>
      durable.turn(
        (_c, session) => {
          order.push(name);
          session.history.append(say(name));
          return name;
        },
        { waitMs: 5_000 },
      ),
    );
    // a turn without waitMs does not jump the queue
    expect((await rejection(durable.turn(() => 'x'))).code).toBe('SESSION_BUSY');
    await tick();
    expect(order).toEqual([]);
    gate.resolve();
    expect(await Promise.all([first, ...rest])).toEqual(['a', 'b', 'c', 'd']);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(durable.committedTurn).toBe(4);
    expect(durable.session.history.messages.map((m) => m.content)).toEqual(['a', 'b', 'c', 'd']);
    await server.dispose();
  });

  test('a queued turn whose waitMs passes leaves the queue with SESSION_BUSY naming the wait and the turn in flight', async () => {
    const { server, durable } = await opened();
    const gate = deferred();
    const first = durable.turn(() => gate.promise);
    let ran = false;
    const started = performance.now();
    const err = await rejection(
      durable.turn(
        () => {
          ran = true;
        },
        { waitMs: 40 },
      ),
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(err.code).toBe('SESSION_BUSY');
    expect(err.message).toMatch(new RegExp(`waited \\d+ ms \\(waitMs: 40\\) for turn 1 of session "${durable.id}"`));
    // the next queued one still runs after it left
    const later = durable.turn(() => 'later', { waitMs: 5_000 });
    gate.resolve();
    await first;
    expect(await later).toBe('later');
    expect(ran).toBe(false);
    expect(durable.committedTurn).toBe(2);
    await server.dispose();
  });

  test('close() rejects the queued turns with SESSION_CLOSED and drains only the turn in flight', async () => {
    const { server, durable } = await opened();
    const gate = deferred();
    const first = durable.turn(async (_c, session) => {
      await gate.promise;
      session.history.append(say('first'));
      return 'first';
    });
    let queuedRan = false;
    const queued = [1, 2].map(() =>
      durable.turn(
        () => {
          queuedRan = true;
        },
        { waitMs: 10_000 },
      ),
    );
    const closing = durable.close();
    for (const q of queued) {
      const err = await rejection(q);
      expect(err.code).toBe('SESSION_CLOSED');
    }
    gate.resolve();
    expect(await first).toBe('first');
    await closing;
    expect(queuedRan).toBe(false);
    expect(durable.committedTurn).toBe(1);
    expect((await rejection(durable.turn(() => 1, { waitMs: 100 }))).code).toBe('SESSION_CLOSED');
    await server.dispose();
  });

  test('rollback and checkpoint take the slot: SESSION_BUSY without waitMs, queued in call order with it', async () => {
    const { server, durable } = await opened();
    await durable.turn((_c, s) => s.history.append(say('one')));
    const gate = deferred();
    const order: string[] = [];
    const second = durable.turn(async (_c, s) => {
      await gate.promise;
      s.history.append(say('two'));
      order.push('turn 2');
    });
    expect((await rejection(durable.checkpoint('busy'))).code).toBe('SESSION_BUSY');
    expect((await rejection(durable.rollback(1))).code).toBe('SESSION_BUSY');
    const pinned = durable.checkpoint('after two', { waitMs: 5_000 }).then((turn) => {
      order.push(`checkpoint ${turn}`);
      return turn;
    });
    // (the turn queued after it sees the rolled-back history: it ran after the rollback)
    const rolled = durable.rollback(1, { waitMs: 5_000 });
    const third = durable.turn(
      (_c, s) => {
        order.push(`turn after rollback, history ${s.history.length}`);
      },
      { waitMs: 5_000 },
    );
    gate.resolve();
    await Promise.all([second, pinned, rolled, third]);
    expect(await pinned).toBe(2);
    expect(order).toEqual(['turn 2', 'checkpoint 2', 'turn after rollback, history 1']);
    expect(durable.committedTurn).toBe(2);
    // the old signatures still work
    expect(await durable.checkpoint()).toBe(2);
    await durable.rollback(1);
    expect(durable.committedTurn).toBe(1);
    await server.dispose();
  });

  test('bad waitMs is a TypeError naming the option, for turn, rollback and checkpoint', async () => {
    const { server, durable } = await opened();
    let runs = 0;
    for (const waitMs of [-1, Number.NaN, '5', Number.POSITIVE_INFINITY, 2 ** 31, null, {}]) {
      const t = await rejection(durable.turn(() => void runs++, { waitMs } as never));
      expect(t).toBeInstanceOf(TypeError);
      expect(t.message).toMatch(/durableSession\.turn\(fn, options\) on session ".*": options\.waitMs must be a finite number of milliseconds/);
      const r = await rejection(durable.rollback(0, { waitMs } as never));
      expect(r).toBeInstanceOf(TypeError);
      expect(r.message).toMatch(/options\.waitMs/);
      const c = await rejection(durable.checkpoint(undefined, { waitMs } as never));
      expect(c).toBeInstanceOf(TypeError);
      expect(c.message).toMatch(/options\.waitMs/);
    }
    expect((await rejection(durable.rollback(0, 5 as never))).message).toMatch(/options must be an object/);
    expect(runs).toBe(0);
    expect(durable.committedTurn).toBe(0);
    await server.dispose();
  });

  test('a queued turn in a session disposed meanwhile rejects with SESSION_CLOSED', async () => {
    const { server, durable } = await opened();
    const gate = deferred();
    const first = durable.turn(() => gate.promise);
    const queued = durable.turn(() => 'never', { waitMs: 10_000 });
    const disposing = durable.dispose();
    expect((await rejection(queued)).code).toBe('SESSION_CLOSED');
    gate.resolve();
    await rejection(first);
    await disposing;
    await sleep(1);
    await server.dispose();
  });
});
