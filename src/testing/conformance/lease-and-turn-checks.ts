/**
 * @internal The storage checks of the session store conformance suite, part one: leases,
 * turns, rollback, retention and pins.
 */
import assert from 'node:assert/strict';
import { SessionError } from '../../sessions/errors.js';
import { type Check, collect, create, locals, LONG_TTL, msg, note, rejects, same, sleep, turn } from './harness.js';

// ---- the checks ----------------------------------------------------------------------------

/** The storage checks of part one (see {@link dataAndConcurrencyChecks} for part two). */
export const leaseAndTurnChecks: Check[] = [
  {
    name: 'create writes checkpoint 0 and takes the first lease (epoch 1)',
    run: async (ctx) => {
      const store = await ctx.store();
      const id = ctx.id();
      const meta = { title: 'support', tags: ['a', 'b'], b: 1, a: 2 };
      const lease = await store.create({ sessionId: id, agentId: 'agent-x', owner: 'owner-1', ttlMs: LONG_TTL, meta, locals: locals(0) });
      assert.deepEqual(lease, { sessionId: id, owner: 'owner-1', epoch: 1 });
      const loaded = await store.load(id);
      assert.equal(loaded.info.sessionId, id);
      assert.equal(loaded.info.agentId, 'agent-x');
      same(loaded.info.meta, meta, 'meta');
      assert.equal(loaded.info.committedTurn, 0);
      assert.equal(loaded.info.lastSeq, 0);
      assert.ok(loaded.info.createdAt instanceof Date && loaded.info.updatedAt instanceof Date);
      assert.ok(loaded.info.lease !== undefined, 'the lease is live');
      assert.equal(loaded.info.lease.owner, 'owner-1');
      assert.equal(loaded.info.lease.epoch, 1);
      assert.ok(loaded.info.lease.remainingMs > 0 && loaded.info.lease.remainingMs <= LONG_TTL, `remainingMs ${loaded.info.lease.remainingMs}`);
      assert.equal(loaded.checkpoint.turn, 0);
      assert.deepEqual(loaded.checkpoint.locals, locals(0));
      assert.deepEqual(loaded.history, []);
      assert.equal(loaded.open, undefined);
      assert.deepEqual(
        loaded.checkpoints.map((c) => [c.turn, c.pinned, c.label]),
        [[0, false, undefined]],
      );
      const bare = ctx.id();
      await store.create({ sessionId: bare, agentId: 'agent-x', owner: 'owner-1', ttlMs: LONG_TTL, locals: [] });
      const b = await store.load(bare);
      assert.equal(b.info.meta, null, 'meta defaults to null');
      assert.deepEqual(b.checkpoint.locals, []);
    },
  },
  {
    name: 'create refuses an id that is stored already, from any store object (SESSION_ALREADY_EXISTS)',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const id = ctx.id();
      await a.create({ sessionId: id, agentId: 'first', owner: 'owner-1', ttlMs: LONG_TTL, meta: 1, locals: locals(0) });
      const err = await rejects(() => b.create({ sessionId: id, agentId: 'second', owner: 'owner-2', ttlMs: LONG_TTL, meta: 2, locals: [] }), 'SESSION_ALREADY_EXISTS', 'second create');
      assert.equal((err as SessionError).sessionId, id);
      const loaded = await a.load(id);
      assert.equal(loaded.info.agentId, 'first');
      assert.equal(loaded.info.meta, 1);
      assert.equal(loaded.info.lease?.owner, 'owner-1');
    },
  },
  {
    name: 'acquire refuses while any owner holds a live lease, naming it (SESSION_BUSY); unknown ids are SESSION_NOT_FOUND',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      const err = (await rejects(() => b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'acquire by another owner')) as SessionError;
      assert.equal(err.sessionId, lease.sessionId);
      assert.equal(err.holder?.owner, 'owner-1');
      assert.equal(err.holder?.epoch, 1);
      assert.ok((err.holder?.remainingMs ?? 0) > 0 && (err.holder?.remainingMs ?? 0) <= LONG_TTL);
      assert.match(err.message, /owner-1/);
      await rejects(() => a.acquire(lease.sessionId, { owner: 'owner-1', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'acquire by the holder itself');
      await rejects(() => b.acquire(ctx.id('missing'), { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_NOT_FOUND', 'acquire of an unknown id');
    },
  },
  {
    name: 'release frees the lease; the next acquire raises the epoch and every write of the old lease is LEASE_LOST',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const old = await create(a, ctx, 'owner-1');
      await turn(a, old, [msg('one')], 1);
      assert.equal(await a.release(old), true);
      assert.equal(await a.release(old), false, 'a second release finds nothing');
      const loadedFree = await b.load(old.sessionId);
      assert.equal(loadedFree.info.lease, undefined, 'released: no live lease');
      const next = await b.acquire(old.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(next.epoch, 2);
      const open = await b.begin(next);
      const before = await b.load(old.sessionId);
      await rejects(() => a.begin(old), 'LEASE_LOST', 'begin with the old lease');
      await rejects(() => a.renew(old), 'LEASE_LOST', 'renew with the old lease');
      await rejects(() => a.append(old, open, [note('x')]), 'LEASE_LOST', 'append with the old lease');
      await rejects(() => a.commit(old, { ...open, events: [msg('stale')], locals: locals(9) }), 'LEASE_LOST', 'commit with the old lease');
      await rejects(() => a.abort(old, { ...open, events: [note('stale')] }), 'LEASE_LOST', 'abort with the old lease');
      await rejects(() => a.rollback(old, 0), 'LEASE_LOST', 'rollback with the old lease');
      await rejects(() => a.pin(old, 0, 'stale'), 'LEASE_LOST', 'pin with the old lease');
      assert.equal(await a.release(old), false, 'the old lease can not release the new one');
      const after = await b.load(old.sessionId);
      assert.deepEqual(after.info.lastSeq, before.info.lastSeq, 'nothing was written');
      assert.deepEqual(after.checkpoints, before.checkpoints);
      assert.equal(after.info.lease?.owner, 'owner-2');
      assert.deepEqual(after.open && [after.open.turn, after.open.attempt], [open.turn, open.attempt]);
      await b.commit(next, { ...open, events: [msg('two')], locals: locals(2) });
      const again = await a.acquire(old.sessionId, { owner: 'owner-1', ttlMs: LONG_TTL }).catch((e: unknown) => e);
      assert.ok(again instanceof SessionError && again.code === 'SESSION_BUSY', 'still held by owner-2');
      assert.equal(await b.release(next), true);
      const third = await a.acquire(old.sessionId, { owner: 'owner-1', ttlMs: LONG_TTL });
      assert.equal(third.epoch, 3, 'the same owner gets a new epoch');
      await rejects(() => a.begin(old), 'LEASE_LOST', 'the epoch-1 lease of the same owner stays stale');
    },
  },
  {
    name: "a lease expires on the store's clock: its writes are LEASE_LOST after the TTL, even without a competitor",
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const open = await a.begin(lease);
      await a.append(lease, open, [note('before expiry')]);
      await sleep(ctx.ttl * 1.5 + 50);
      await rejects(() => a.commit(lease, { ...open, events: [msg('late')], locals: locals(1) }), 'LEASE_LOST', 'commit after expiry');
      await rejects(() => a.append(lease, open, [note('late')]), 'LEASE_LOST', 'append after expiry');
      await rejects(() => a.renew(lease), 'LEASE_LOST', 'renew after expiry');
      const loaded = await b.load(lease.sessionId);
      assert.equal(loaded.info.lease, undefined, 'an expired lease is not live');
      assert.equal(loaded.info.committedTurn, 0);
      assert.equal(loaded.info.lastSeq, 1);
      const taken = await b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(taken.epoch, 2);
      assert.equal(await a.release(lease), false, 'the expired lease was taken over');
      await b.abort(taken, { ...open, reason: 'interrupted' });
      assert.equal((await b.begin(taken)).attempt, 2);
    },
  },
  {
    name: 'renew keeps a lease alive beyond its TTL; renew({ ttlMs }) changes it',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const until = Date.now() + ctx.ttl * 2.5;
      while (Date.now() < until) {
        await sleep(ctx.ttl / 5);
        await a.renew(lease);
      }
      await rejects(() => b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'acquire of a renewed lease');
      assert.equal(await turn(a, lease, [msg('still mine')], 1), 1);
      await a.renew(lease, { ttlMs: LONG_TTL });
      await sleep(ctx.ttl * 1.5);
      assert.equal(await turn(a, lease, [msg('longer ttl')], 2), 2);
      const l = (await b.load(lease.sessionId)).info.lease;
      assert.ok(l !== undefined && l.remainingMs > ctx.ttl, 'the new ttl applies');
    },
  },
  {
    name: 'a turn: begin opens turn committedTurn + 1; commit writes its events, record and checkpoint at once',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const created = (await store.load(lease.sessionId)).info;
      const a = await store.begin(lease);
      assert.equal(a.turn, 1);
      assert.equal(a.attempt, 1);
      assert.ok(a.startedAt instanceof Date);
      await store.append(lease, a, [msg('hello'), note('flushed')]);
      const c = await store.commit(lease, { ...a, events: [{ kind: 'history/append', body: { role: 'assistant', content: 'hi' } }, note('buffered')], locals: locals(1) });
      assert.equal(c.turn, 1);
      assert.equal(c.attempt, 1);
      assert.equal(c.lastSeq, 4);
      assert.ok(c.committedAt instanceof Date);
      const loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 1);
      assert.equal(loaded.info.lastSeq, 4);
      assert.ok(loaded.info.updatedAt.getTime() >= created.updatedAt.getTime());
      assert.equal(loaded.info.createdAt.getTime(), created.createdAt.getTime());
      assert.equal(loaded.checkpoint.turn, 1);
      assert.deepEqual(loaded.checkpoint.locals, locals(1));
      assert.deepEqual(
        loaded.history.map((e) => [e.seq, e.turn, e.attempt, e.kind, e.body, e.status]),
        [
          [1, 1, 1, 'history/append', { role: 'user', content: 'hello' }, 'committed'],
          [3, 1, 1, 'history/append', { role: 'assistant', content: 'hi' }, 'committed'],
        ],
      );
      const events = await collect(store.events(lease.sessionId));
      assert.deepEqual(
        events.map((e) => [e.seq, e.kind, e.status]),
        [
          [1, 'history/append', 'committed'],
          [2, 'tool/result', 'committed'],
          [3, 'history/append', 'committed'],
          [4, 'tool/result', 'committed'],
        ],
      );
      assert.ok(events.every((e) => e.at instanceof Date));
      assert.deepEqual(
        loaded.checkpoints.map((x) => x.turn),
        [0, 1],
      );
      const b = await store.begin(lease);
      assert.deepEqual([b.turn, b.attempt], [2, 1]);
    },
  },
  {
    name: 'a failed attempt is aborted with its events, leaves the history, and the next attempt reuses the turn number',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const a1 = await store.begin(lease);
      await store.append(lease, a1, [msg('will fail')]);
      await store.abort(lease, { ...a1, events: [note('tool ran before the failure')], reason: 'Error: boom' });
      let loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 0);
      assert.deepEqual(loaded.history, []);
      assert.equal(loaded.open, undefined);
      const a2 = await store.begin(lease);
      assert.deepEqual([a2.turn, a2.attempt], [1, 2]);
      await store.commit(lease, { ...a2, events: [msg('works')], locals: locals(1) });
      loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 1);
      assert.deepEqual(
        loaded.history.map((e) => e.body),
        [{ role: 'user', content: 'works' }],
      );
      const events = await collect(store.events(lease.sessionId));
      assert.deepEqual(
        events.map((e) => [e.seq, e.turn, e.attempt, e.status]),
        [
          [1, 1, 1, 'aborted'],
          [2, 1, 1, 'aborted'],
          [3, 1, 2, 'committed'],
        ],
      );
      await store.abort(lease, { ...(await store.begin(lease)) });
      assert.equal((await store.load(lease.sessionId)).info.lastSeq, 3, 'an abort without events writes none');
    },
  },
  {
    name: 'an open attempt is pending, blocks begin and rollback (SESSION_BUSY), and load reports it until a new owner aborts it',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      await turn(a, lease, [msg('one')], 1);
      const open = await a.begin(lease);
      await a.append(lease, open, [msg('half a turn'), note('tool started')]);
      assert.deepEqual(
        (await collect(a.events(lease.sessionId))).map((e) => e.status),
        ['committed', 'pending', 'pending'],
      );
      await rejects(() => a.begin(lease), 'SESSION_BUSY', 'begin while an attempt is open');
      await rejects(() => a.rollback(lease, 0), 'SESSION_BUSY', 'rollback while an attempt is open');
      // the process "crashes": another owner takes over
      assert.equal(await a.release(lease), true);
      const next = await b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      const loaded = await b.load(lease.sessionId);
      assert.ok(loaded.open !== undefined, 'load reports the open attempt');
      assert.deepEqual([loaded.open.turn, loaded.open.attempt, loaded.open.epoch], [2, 1, 1]);
      assert.ok(loaded.open.startedAt instanceof Date);
      assert.deepEqual(
        loaded.open.events.map((e) => [e.seq, e.kind, e.status]),
        [
          [2, 'history/append', 'pending'],
          [3, 'tool/result', 'pending'],
        ],
      );
      assert.deepEqual(
        loaded.history.map((e) => e.seq),
        [1],
        'the pending message is not history',
      );
      await rejects(() => b.commit(next, { ...open, events: [], locals: locals(2) }), 'TypeError', 'commit of an attempt begun by another epoch');
      await rejects(() => b.append(next, open, [note('x')]), 'TypeError', 'append to an attempt begun by another epoch');
      await rejects(() => b.begin(next), 'SESSION_BUSY', 'begin before the interrupted attempt is aborted');
      await b.abort(next, { ...open, reason: 'interrupted' });
      assert.deepEqual(
        (await collect(b.events(lease.sessionId))).map((e) => e.status),
        ['committed', 'aborted', 'aborted'],
      );
      assert.equal((await b.load(lease.sessionId)).open, undefined);
      const again = await b.begin(next);
      assert.deepEqual([again.turn, again.attempt], [2, 2]);
    },
  },
  {
    name: 'commit and abort are idempotent for the attempt they ended; other attempts that are not open are a TypeError',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const a = await store.begin(lease);
      const input = { ...a, events: [msg('once')], locals: locals(1) };
      const first = await store.commit(lease, input);
      const second = await store.commit(lease, input);
      assert.deepEqual(
        [second.turn, second.attempt, second.lastSeq, second.committedAt.getTime()],
        [first.turn, first.attempt, first.lastSeq, first.committedAt.getTime()],
      );
      assert.equal((await collect(store.events(lease.sessionId))).length, 1, 'the retry wrote nothing');
      const b = await store.begin(lease);
      await store.abort(lease, { ...b, events: [note('x')] });
      await store.abort(lease, { ...b, events: [note('x')] });
      assert.equal((await store.load(lease.sessionId)).info.lastSeq, 2);
      await rejects(() => store.commit(lease, { turn: 9, attempt: 1, events: [], locals: [] }), 'TypeError', 'commit of an attempt never begun');
      await rejects(() => store.commit(lease, { ...b, events: [], locals: [] }), 'TypeError', 'commit of an aborted attempt');
      await rejects(() => store.abort(lease, { ...a }), 'TypeError', 'abort of a committed attempt');
      await rejects(() => store.append(lease, a, [note('late')]), 'TypeError', 'append to a committed attempt');
    },
  },
  {
    name: 'rollback supersedes the later turns (kept in the log), drops their checkpoints, and numbering continues from the checkpoint',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      for (let n = 1; n <= 3; n++) await turn(store, lease, [msg(`m${n}`)], n);
      await store.pin(lease, 1, 'one');
      await store.rollback(lease, 1);
      let loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 1);
      assert.equal(loaded.checkpoint.turn, 1);
      assert.equal(loaded.checkpoint.label, 'one');
      assert.deepEqual(loaded.checkpoint.locals, locals(1));
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['m1'],
      );
      assert.deepEqual(
        loaded.checkpoints.map((c) => c.turn),
        [0, 1],
      );
      assert.deepEqual(
        (await collect(store.events(lease.sessionId))).map((e) => [e.turn, e.status]),
        [
          [1, 'committed'],
          [2, 'superseded'],
          [3, 'superseded'],
        ],
      );
      const b = await store.begin(lease);
      assert.deepEqual([b.turn, b.attempt], [2, 2], 'turn 2 again, as its second attempt');
      await store.commit(lease, { ...b, events: [msg('m2 again')], locals: locals(22) });
      loaded = await store.load(lease.sessionId);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['m1', 'm2 again'],
      );
      assert.deepEqual(
        (await collect(store.events(lease.sessionId))).map((e) => [e.turn, e.attempt, e.status]),
        [
          [1, 1, 'committed'],
          [2, 1, 'superseded'],
          [3, 1, 'superseded'],
          [2, 2, 'committed'],
        ],
      );
      await rejects(() => store.rollback(lease, 3), 'CHECKPOINT_NOT_FOUND', 'rollback to a superseded turn');
      await rejects(() => store.rollback(lease, 7), 'CHECKPOINT_NOT_FOUND', 'rollback to a future turn');
      await store.rollback(lease, 0);
      loaded = await store.load(lease.sessionId);
      assert.equal(loaded.info.committedTurn, 0);
      assert.deepEqual(loaded.history, []);
      assert.deepEqual(loaded.checkpoint.locals, locals(0));
      assert.deepEqual(
        (await collect(store.events(lease.sessionId))).map((e) => e.status),
        ['superseded', 'superseded', 'superseded', 'superseded'],
      );
      assert.deepEqual([(await store.begin(lease)).turn], [1]);
    },
  },
  {
    name: "retention keeps checkpoint 0, the last keepCheckpoints turns', the pinned ones and the last committed; load({ turn }) reads a kept one",
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      for (let n = 1; n <= 6; n++) {
        await turn(store, lease, [msg(`m${n}`)], n, 2);
        if (n === 2) await store.pin(lease, 2);
      }
      assert.deepEqual(
        (await store.checkpoints(lease.sessionId)).map((c) => [c.turn, c.pinned]),
        [
          [0, false],
          [2, true],
          [5, false],
          [6, false],
        ],
      );
      await rejects(() => store.load(lease.sessionId, { turn: 3 }), 'CHECKPOINT_NOT_FOUND', 'load of a pruned checkpoint');
      await rejects(() => store.load(lease.sessionId, { turn: 7 }), 'CHECKPOINT_NOT_FOUND', 'load of a future turn');
      await rejects(() => store.rollback(lease, 4), 'CHECKPOINT_NOT_FOUND', 'rollback to a pruned checkpoint');
      const at2 = await store.load(lease.sessionId, { turn: 2 });
      assert.equal(at2.checkpoint.turn, 2);
      assert.deepEqual(at2.checkpoint.locals, locals(2));
      assert.deepEqual(
        at2.history.map((e) => (e.body as { content: string }).content),
        ['m1', 'm2'],
      );
      assert.equal(at2.info.committedTurn, 6, 'info is the head');
      await turn(store, lease, [msg('m7')], 7, 0);
      assert.deepEqual(
        (await store.checkpoints(lease.sessionId)).map((c) => c.turn),
        [0, 2, 7],
        'keepCheckpoints 0 still keeps the last committed turn',
      );
    },
  },
  {
    name: 'pin marks a kept checkpoint, sets or keeps its label; unknown turns are CHECKPOINT_NOT_FOUND',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      await store.pin(lease, 0);
      assert.deepEqual(
        (await store.checkpoints(lease.sessionId)).map((c) => [c.turn, c.pinned, c.label]),
        [[0, true, undefined]],
      );
      await store.pin(lease, 0, 'start');
      await store.pin(lease, 0);
      assert.equal((await store.checkpoints(lease.sessionId))[0].label, 'start', 'a pin without label keeps the label');
      await rejects(() => store.pin(lease, 5, 'x'), 'CHECKPOINT_NOT_FOUND', 'pin of a turn never committed');
      await rejects(() => store.checkpoints(ctx.id('missing')), 'SESSION_NOT_FOUND', 'checkpoints of an unknown session');
    },
  },
];
