/**
 * @internal The fault checks of the session store conformance suite: hostile input,
 * idempotent ends, bounded calls, the optional methods.
 */
import assert from 'node:assert/strict';
import { SessionError } from '../../sessions/errors.js';
import type { CommittedTurn, Lease, SessionStore, TurnAttempt } from '../../sessions/store/contract.js';
import { type Check, collect, create, locals, LONG_TTL, msg, note, rejects, sleep } from './harness.js';
import { attemptOf, hostileGroups, hostileSetup, refused, resolves, sameState, stateOf, statusOf, tryHostile } from './hostile-calls.js';

export const faultChecks: Check[] = [
  {
    name: 'every method rejects for hostile input of any type (never a synchronous throw), with a TypeError or a SessionError, and writes nothing',
    run: async (ctx) => {
      const store = await ctx.store();
      const h = await hostileSetup(store, ctx);
      // the report shows the first few failures of each method and argument, then a count
      const lines: string[] = [];
      let failed = 0;
      let timeouts = 0;
      let before = await stateOf(store, h.ids, h.agentId);
      let calls = 0;
      outer: for (const g of hostileGroups(store, h)) {
        const resolved: string[] = [];
        const failures: string[] = [];
        let stop = false;
        for (const c of g.cases) {
          calls += 1;
          const r = await tryHostile(c);
          if (r.failure !== undefined) failures.push(r.failure);
          if (r.resolved) resolved.push(c.call);
          if (r.timedOut && ++timeouts >= 3) {
            stop = true;
            break;
          }
        }
        failed += failures.length;
        lines.push(...failures.slice(0, 3));
        if (failures.length > 3) lines.push(`… and ${failures.length - 3} more of ${g.what}`);
        const after = await stateOf(store, h.ids, h.agentId);
        if (!sameState(before, after)) {
          failed += 1;
          lines.push(`${g.what} wrote to the store (its state changed); ${resolved.length > 0 ? `the calls that resolved: ${resolved.slice(0, 5).join('; ')}${resolved.length > 5 ? `; … and ${resolved.length - 5} more` : ''}` : 'although every call rejected'}`);
          before = after;
        }
        if (stop) {
          lines.push('(stopped after 3 calls that did not settle)');
          break outer;
        }
      }
      if (failed > 0) assert.fail(`${failed} of ${calls} hostile calls were mishandled:\n- ${lines.join('\n- ')}`);
    },
  },
  {
    name: 'a repeated commit or abort of an attempt its lease ended resolves to the same result and writes nothing (after later turns, from another store object, after the lease expired); a commit of an aborted attempt is refused',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx);
      const id = lease.sessionId;
      const state = (): Promise<unknown> => stateOf(a, [id], `${ctx.prefix}agent`);
      const t1 = await a.begin(lease);
      await a.append(lease, t1, [note('flushed')]);
      const input1 = { ...t1, events: [msg('one'), note('buffered')], locals: locals(1) };
      const c1 = await a.commit(lease, input1);
      const asFirst = async (p: Promise<CommittedTurn>, what: string): Promise<void> => {
        const c = await p;
        assert.deepEqual([c.turn, c.attempt, c.lastSeq, c.committedAt.getTime()], [c1.turn, c1.attempt, c1.lastSeq, c1.committedAt.getTime()], `${what}: resolves to the first commit's result`);
      };
      let before = await state();
      await asFirst(a.commit(lease, input1), 'a repeated commit');
      await asFirst(b.commit(lease, input1), 'a repeated commit through another store object');
      assert.deepEqual(await state(), before, 'the repeated commits wrote nothing (same events, same lastSeq, same checkpoints)');
      const t2 = await a.begin(lease);
      before = await state();
      await asFirst(a.commit(lease, input1), 'a repeated commit while the next attempt is open');
      assert.deepEqual(await state(), before, 'a repeat while the next attempt is open wrote nothing and left that attempt open');
      await a.commit(lease, { ...t2, events: [msg('two')], locals: locals(2) });
      before = await state();
      await asFirst(b.commit(lease, input1), 'a repeated commit after a later turn committed');
      assert.deepEqual(await state(), before, 'a repeat after a later turn wrote nothing and did not set committedTurn back');
      assert.equal((await a.load(id)).info.committedTurn, 2);
      const t3 = await a.begin(lease);
      const abort3 = { ...t3, events: [note('tool ran')], reason: 'Error: boom' };
      await a.abort(lease, abort3);
      before = await state();
      assert.equal(await a.abort(lease, abort3), undefined, 'a repeated abort resolves');
      assert.equal(await b.abort(lease, abort3), undefined, 'a repeated abort through another store object resolves');
      assert.deepEqual(await state(), before, 'the repeated aborts wrote nothing');
      await refused(() => a.commit(lease, { ...t3, events: [msg('late')], locals: locals(3) }), 'commit of the aborted attempt');
      await refused(() => b.commit(lease, { ...t3, events: [], locals: locals(3) }), 'commit of the aborted attempt through another store object');
      await refused(() => a.abort(lease, { ...t1 }), 'abort of a committed attempt');
      assert.deepEqual(await state(), before, 'the refused calls wrote nothing');
      assert.deepEqual(attemptOf(await a.begin(lease)), [3, 2], 'the next attempt reuses the turn number');
      // a retry that comes after the lease expired: still the recorded lease, so still answered
      const short = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const s1 = await a.begin(short);
      const sInput = { ...s1, events: [msg('just before expiry')], locals: locals(1) };
      const first = await a.commit(short, sInput);
      await sleep(ctx.ttl * 1.5 + 50);
      const late = await resolves(b.commit(short, sInput), 'a repeated commit after the lease expired (no other acquire meanwhile)');
      assert.deepEqual([late.turn, late.attempt, late.lastSeq], [first.turn, first.attempt, first.lastSeq], 'a repeated commit after the lease expired resolves to the first result');
      await b.acquire(short.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL });
      await rejects(() => a.commit(short, sInput), 'LEASE_LOST', 'a repeated commit after another owner acquired the session');
    },
  },
  {
    name: 'every store call settles within callTimeoutMs: each method once, refusals, the events iterator and close',
    run: async (ctx) => {
      const [store, other] = await ctx.peers(2);
      const lease = await create(store, ctx, 'owner-1');
      const id = lease.sessionId;
      await refused(() => other.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL }), 'acquire of a leased session');
      const a = await store.begin(lease);
      await refused(() => store.begin(lease), 'begin while an attempt is open');
      await store.append(lease, a, [note('flushed')]);
      await store.commit(lease, { ...a, events: [msg('one')], locals: locals(1) });
      await store.commit(lease, { ...a, events: [msg('one')], locals: locals(1) });
      const b = await store.begin(lease);
      await store.abort(lease, { ...b, reason: 'Error: boom' });
      await store.abort(lease, { ...b, reason: 'Error: boom' });
      await store.pin(lease, 1, 'one');
      await store.renew(lease);
      await store.rollback(lease, 0);
      await store.load(id);
      if (typeof store.attemptStatus === 'function') await store.attemptStatus(id, a);
      await store.checkpoints(id);
      await store.list({ agentId: `${ctx.prefix}agent` });
      await collect(other.events(id));
      await refused(() => other.load(ctx.id('missing')), 'load of an unknown session');
      assert.equal(await store.release(lease), true);
      assert.equal(await store.release(lease), false);
      await refused(() => store.begin(lease), 'begin with a released lease');
      const next = await other.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(await other.delete(id, { lease: next }), true);
      assert.equal(await other.delete(id), false);
      await store.close();
      await store.close();
      await refused(() => store.load(id), 'load after close');
    },
  },
  {
    name: 'attemptStatus (optional) reports committed, aborted, open and absent, and needs no lease: after an expiry, a take-over or a release, from any store object',
    requires: 'attemptStatus',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1', { ttlMs: ctx.ttl });
      const id = lease.sessionId;
      assert.equal(await statusOf(a, id, { turn: 1, attempt: 1 }), 'absent', 'an attempt never begun');
      const t1 = await a.begin(lease);
      assert.equal(await statusOf(b, id, t1), 'open', 'a begun attempt');
      await a.abort(lease, { ...t1, events: [note('failed')] });
      assert.equal(await statusOf(b, id, t1), 'aborted', 'an aborted attempt');
      const t2 = await a.begin(lease);
      assert.deepEqual(attemptOf(t2), [1, 2]);
      await a.commit(lease, { ...t2, events: [msg('one')], locals: locals(1) });
      assert.equal(await statusOf(a, id, t2), 'committed', 'a committed attempt');
      assert.equal(await statusOf(b, id, t2), 'committed', 'a committed attempt, read through another store object');
      assert.equal(await statusOf(b, id, t1), 'aborted', 'the earlier attempt of a committed turn stays aborted');
      for (const x of [
        { turn: 1, attempt: 3 },
        { turn: 2, attempt: 1 },
        { turn: 7, attempt: 1 },
      ]) {
        assert.equal(await statusOf(b, id, x), 'absent', `attempt ${x.turn}.${x.attempt}, never begun`);
      }
      const t3 = await a.begin(lease);
      await a.append(lease, t3, [note('flushed')]);
      await sleep(ctx.ttl * 1.5 + 50);
      await refused(() => a.renew(lease), 'renew after expiry');
      assert.equal(await statusOf(b, id, t3), 'open', 'an open attempt whose lease expired');
      assert.equal(await statusOf(a, id, t2), 'committed', 'a committed attempt, read after its lease expired');
      const taken = await b.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      assert.equal(await statusOf(a, id, t3), 'open', 'taken over, the attempt is still open until aborted');
      assert.equal(await statusOf(a, id, t2), 'committed', 'read by the former holder after a take-over');
      await b.abort(taken, { ...t3, reason: 'interrupted' });
      assert.equal(await statusOf(a, id, t3), 'aborted', 'an interrupted attempt aborted by the new holder');
      assert.equal(await b.release(taken), true);
      assert.equal((await a.load(id)).info.lease, undefined);
      assert.deepEqual([await statusOf(a, id, t1), await statusOf(a, id, t2), await statusOf(b, id, t3)], ['aborted', 'committed', 'aborted'], 'read with no lease at all');
      await rejects(() => statusOf(b, ctx.id('missing'), { turn: 1, attempt: 1 }), 'SESSION_NOT_FOUND', 'attemptStatus of an unknown session');
    },
  },
  {
    name: 'begin({ replaceOpen: true }) ends an attempt left open by the same lease as aborted and opens the next attempt of the turn; an attempt of another epoch stays SESSION_BUSY',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      const id = lease.sessionId;
      const t1 = await resolves(a.begin(lease, { replaceOpen: true }), 'begin({ replaceOpen: true }) with nothing open');
      assert.deepEqual(attemptOf(t1), [1, 1], 'with nothing open, replaceOpen is a plain begin');
      await a.append(lease, t1, [note('flushed by the attempt whose begin reply was lost')]);
      await rejects(() => a.begin(lease), 'SESSION_BUSY', 'begin without replaceOpen while an attempt is open');
      await rejects(() => a.begin(lease, { replaceOpen: false }), 'SESSION_BUSY', 'begin({ replaceOpen: false }) while an attempt is open');
      const t2 = await resolves(b.begin(lease, { replaceOpen: true }), 'begin({ replaceOpen: true }) through another store object while an attempt begun with this lease is open');
      assert.deepEqual(attemptOf(t2), [1, 2], 'the next attempt of the same turn');
      let loaded = await a.load(id);
      assert.deepEqual(loaded.open && attemptOf(loaded.open), [1, 2], 'the new attempt is the open one');
      assert.deepEqual(
        (await collect(a.events(id))).map((e) => [e.turn, e.attempt, e.status]),
        [[1, 1, 'aborted']],
        'the replaced attempt is aborted with its events',
      );
      if (typeof a.attemptStatus === 'function') assert.deepEqual([await statusOf(a, id, t1), await statusOf(a, id, t2)], ['aborted', 'open']);
      await refused(() => a.commit(lease, { ...t1, events: [], locals: locals(1) }), 'commit of the replaced attempt');
      await refused(() => a.append(lease, t1, [note('late')]), 'append to the replaced attempt');
      await a.commit(lease, { ...t2, events: [msg('one')], locals: locals(1) });
      loaded = await a.load(id);
      assert.equal(loaded.info.committedTurn, 1);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['one'],
      );
      const t3 = await a.begin(lease);
      assert.equal(await a.release(lease), true);
      const next = await b.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      const seq = (await b.load(id)).info.lastSeq;
      await rejects(() => b.begin(next, { replaceOpen: true }), 'SESSION_BUSY', 'replaceOpen with an attempt begun under another epoch');
      loaded = await b.load(id);
      assert.deepEqual(loaded.open && [loaded.open.turn, loaded.open.attempt, loaded.open.epoch], [2, 1, lease.epoch], 'the attempt of the other epoch is still open');
      assert.equal(loaded.info.lastSeq, seq, 'the refused begin wrote nothing');
      await b.abort(next, { ...t3, reason: 'interrupted' });
      assert.deepEqual(attemptOf(await b.begin(next, { replaceOpen: true })), [2, 2]);
    },
  },
  {
    name: "acquire by the same owner with another incarnation takes a live lease over at once (epoch + 1) and the old lease is LEASE_LOST ('owner-reused'); with the same incarnation it is SESSION_BUSY",
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const id = ctx.id();
      const ttlMs = LONG_TTL;
      const first = await a.create({ sessionId: id, agentId: `${ctx.prefix}agent`, owner: 'svc', incarnation: 'inc-1', ttlMs, locals: locals(0) });
      assert.deepEqual([first.owner, first.epoch, first.incarnation], ['svc', 1, 'inc-1'], 'the lease records its incarnation');
      const open = await a.begin(first);
      await a.append(first, open, [note('before the restart')]);
      await rejects(() => b.acquire(id, { owner: 'svc', incarnation: 'inc-1', ttlMs }), 'SESSION_BUSY', 'acquire by the same incarnation');
      await rejects(() => b.acquire(id, { owner: 'svc', ttlMs }), 'SESSION_BUSY', 'acquire by the same owner without an incarnation');
      await rejects(() => b.acquire(id, { owner: 'other', incarnation: 'inc-2', ttlMs }), 'SESSION_BUSY', 'acquire by another owner');
      const second = await resolves(b.acquire(id, { owner: 'svc', incarnation: 'inc-2', ttlMs }), 'acquire by the same owner with another incarnation, while the lease is live');
      assert.deepEqual([second.sessionId, second.owner, second.epoch, second.incarnation], [id, 'svc', 2, 'inc-2'], 'taken over at once, one epoch up');
      const held = (await a.load(id)).info.lease;
      assert.deepEqual(held && [held.owner, held.epoch], ['svc', 2]);
      const seq = (await a.load(id)).info.lastSeq;
      const lost = (await rejects(() => a.commit(first, { ...open, events: [msg('stale')], locals: locals(1) }), 'LEASE_LOST', 'commit with the lease of the old incarnation')) as SessionError;
      assert.equal((lost.cause as { reason?: unknown } | undefined)?.reason, 'owner-reused', "the LEASE_LOST of a lease taken over by another incarnation of its owner has cause.reason 'owner-reused'");
      await rejects(() => a.append(first, open, [note('stale')]), 'LEASE_LOST', 'append with the lease of the old incarnation');
      await rejects(() => a.begin(first), 'LEASE_LOST', 'begin with the lease of the old incarnation');
      await rejects(() => a.renew(first), 'LEASE_LOST', 'renew with the lease of the old incarnation');
      assert.equal(await a.release(first), false, 'the old incarnation can not release the new lease');
      assert.equal((await a.load(id)).info.lastSeq, seq, 'the old incarnation wrote nothing');
      await rejects(() => a.acquire(id, { owner: 'svc', incarnation: 'inc-2', ttlMs }), 'SESSION_BUSY', 'the new incarnation does not take its own lease over');
      await rejects(() => b.begin(second, { replaceOpen: true }), 'SESSION_BUSY', "the old incarnation's attempt is of another epoch");
      await b.abort(second, { ...open, reason: 'interrupted' });
      const t = await b.begin(second);
      assert.deepEqual(attemptOf(t), [1, 2]);
      await b.commit(second, { ...t, events: [msg('after the restart')], locals: locals(1) });
      const third = await resolves(a.acquire(id, { owner: 'svc', incarnation: 'inc-3', ttlMs }), 'acquire by a third incarnation');
      assert.equal(third.epoch, 3);
      await rejects(() => b.begin(second), 'LEASE_LOST', 'the second incarnation, taken over in turn');
      const loaded = await a.load(id);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        ['after the restart'],
      );
    },
  },
  {
    name: 'begin({ key }) (a store whose turnKeys is true): a key of a committed turn of the current timeline among the last keyWindow turns is TURN_ALREADY_COMMITTED with turn, writing nothing, from any store object and any later lease; aborted attempts, older turns and turns superseded by a rollback do not count',
    requires: 'turnKeys',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      const id = lease.sessionId;
      const commitKeyed = async (store: SessionStore, key: string, content: string): Promise<TurnAttempt> => {
        const t = await resolves(store.begin(lease, { key }), `begin({ key: ${JSON.stringify(key)} })`);
        await store.commit(lease, { ...t, events: [msg(content)], locals: locals(t.turn) });
        return t;
      };
      const refusedKey = async (store: SessionStore, l: Lease, options: { key: string; keyWindow?: number; replaceOpen?: boolean }, turn: number, what: string): Promise<void> => {
        const before = await store.load(id);
        const events = (await collect(store.events(id))).length;
        const err = (await rejects(() => store.begin(l, options), 'TURN_ALREADY_COMMITTED', what)) as SessionError;
        assert.equal(err.turn, turn, `${what}: the error's turn is the committed turn with that key`);
        assert.equal(err.sessionId, id, `${what}: the error names the session`);
        const after = await store.load(id);
        assert.deepEqual(
          [after.info.committedTurn, after.info.lastSeq, after.open && attemptOf(after.open), (await collect(store.events(id))).length],
          [before.info.committedTurn, before.info.lastSeq, before.open && attemptOf(before.open), events],
          `${what}: nothing was written`,
        );
      };
      // an aborted attempt's key does not count
      const t1 = await resolves(a.begin(lease, { key: 'k1' }), 'begin({ key })');
      await a.abort(lease, { ...t1, reason: 'failed' });
      const t1b = await commitKeyed(a, 'k1', 'one');
      assert.deepEqual(attemptOf(t1b), [1, 2], 'the key of an aborted attempt does not count');
      await refusedKey(b, lease, { key: 'k1' }, 1, 'begin with the key of committed turn 1, through another store object');
      await refusedKey(a, lease, { key: 'k1', replaceOpen: true }, 1, 'begin({ key, replaceOpen: true }) with that key');
      // the key is checked before an open attempt: nothing is replaced
      const open = await resolves(a.begin(lease, { key: 'k2' }), 'begin with a new key');
      await refusedKey(a, lease, { key: 'k1', replaceOpen: true }, 1, 'begin({ key, replaceOpen: true }) with that key while an attempt is open');
      await a.commit(lease, { ...open, events: [msg('two')], locals: locals(2) });
      await commitKeyed(b, 'k3', 'three');
      // the window: the last keyWindow committed turns (default 20)
      await refusedKey(a, lease, { key: 'k2', keyWindow: 2 }, 2, 'begin with the key of turn 2 and keyWindow 2 (committed turn 3)');
      const outside = await resolves(a.begin(lease, { key: 'k1', keyWindow: 2 }), 'begin with the key of turn 1 and keyWindow 2 (committed turn 3): out of the window');
      assert.deepEqual(attemptOf(outside), [4, 1]);
      await a.abort(lease, { ...outside, reason: 'test' });
      await refusedKey(a, lease, { key: 'k1' }, 1, 'begin with the key of turn 1 and the default keyWindow');
      // a rollback supersedes the later turns: their keys are free, the replacing turn's count
      await a.rollback(lease, 1);
      await refusedKey(b, lease, { key: 'k1' }, 1, 'the key of turn 1 after a rollback to turn 1');
      const again = await commitKeyed(b, 'k3', 'three, after the rollback');
      assert.equal(again.turn, 2, 'the key of superseded turn 3 is free');
      await refusedKey(a, lease, { key: 'k3' }, 2, 'the key of the turn that replaced a superseded one');
      const freed = await resolves(a.begin(lease, { key: 'k2' }), 'the key of superseded turn 2');
      assert.equal(freed.turn, 3);
      await a.abort(lease, { ...freed, reason: 'test' });
      // the key belongs to the session, not to the lease
      assert.equal(await a.release(lease), true);
      const next = await b.acquire(id, { owner: 'owner-2', ttlMs: LONG_TTL });
      await refusedKey(b, next, { key: 'k1' }, 1, 'the key of turn 1 under another lease');
      await refusedKey(a, next, { key: 'k3' }, 2, 'the key of turn 2 under another lease, through another store object');
    },
  },
];
