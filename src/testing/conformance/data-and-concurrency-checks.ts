/**
 * @internal The storage checks of the session store conformance suite, part two: exact data,
 * malformed input, reads, several owners and store objects, races and close.
 */
import assert from 'node:assert/strict';
import { SessionError } from '../../sessions/errors.js';
import type { JsonValue } from '../../util/lossless-json.js';
import type { Lease, PersistedLocal, SessionStore } from '../../sessions/store/contract.js';
import { type Check, collect, create, describe, locals, LONG_TTL, msg, note, rejects, rng, same, sleep, turn } from './harness.js';

/** The storage checks of part two (see {@link leaseAndTurnChecks} for part one). */
export const dataAndConcurrencyChecks: Check[] = [
  {
    name: 'bodies, meta, locals and ids round-trip exactly (\\u0000, lone surrogates, key order, __proto__, large strings)',
    run: async (ctx) => {
      const store = await ctx.store();
      const odd = JSON.parse('{"__proto__": {"x": 1}, "z": 0}') as JsonValue;
      const tricky: JsonValue[] = [
        'a\u0000b',
        '\ud800 lone high',
        'lone low \udfff',
        '\u2028\u2029 and 😀 and ü',
        { b: 1, a: 2, c: { z: null, y: [true, false] } },
        { '10': 'ten', '2': 'two', x: 'x' },
        odd,
        [1e21, -1.5, 0, Number.MAX_SAFE_INTEGER, 5e-324, -1e-7],
        'x'.repeat(200_000),
        '',
        null,
        [],
        {},
      ];
      const id = `${ctx.prefix}ü-😀-"quoted"-'single'-%`;
      const lease = await store.create({ sessionId: id, agentId: 'agent-😀', owner: 'owner-ü', ttlMs: LONG_TTL, meta: tricky.slice(0, 8), locals: [{ key: 'k-😀', scope: 'agent', version: 1, data: tricky }] });
      const a = await store.begin(lease);
      const events = tricky.map((body, i) => ({ kind: i % 2 === 0 ? 'history/append' : 'kind-😀', body }));
      await store.append(lease, a, events.slice(0, 5));
      await store.commit(lease, { ...a, events: events.slice(5), locals: [{ key: 'k-😀', scope: 'session', version: 3, data: tricky }] });
      const read = await collect(store.events(id));
      assert.equal(read.length, tricky.length);
      read.forEach((e, i) => {
        same(e.body, tricky[i], `event ${i + 1} body`);
        assert.equal(e.kind, events[i].kind);
      });
      const loaded = await store.load(id);
      same(loaded.info.meta, tricky.slice(0, 8), 'meta');
      assert.equal(loaded.info.agentId, 'agent-😀');
      same(loaded.checkpoint.locals[0].data, tricky, 'locals');
      assert.equal(loaded.checkpoint.locals[0].key, 'k-😀');
      assert.equal(Object.getPrototypeOf(read[6].body), Object.prototype, '__proto__ stays an own key');
      assert.ok(Object.hasOwn(read[6].body as object, '__proto__'));
      same(
        loaded.history.map((e) => e.body),
        tricky.filter((_, i) => i % 2 === 0),
        'history',
      );
      assert.equal((await store.list({ agentId: 'agent-😀' })).items.some((s) => s.sessionId === id), true);
    },
  },
  {
    name: 'malformed input is a TypeError (a rejection, never a synchronous throw) and writes nothing',
    run: async (ctx) => {
      const store = await ctx.store();
      const id = ctx.id();
      const good = { sessionId: id, agentId: 'a', owner: 'o', ttlMs: LONG_TTL, locals: [] as PersistedLocal[] };
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const bad: [string, () => unknown][] = [
        ['create(undefined)', () => store.create(undefined as never)],
        ['empty session id', () => store.create({ ...good, sessionId: '' })],
        ['NUL in the session id', () => store.create({ ...good, sessionId: `${id}\u0000x` })],
        ['lone surrogate in the agent id', () => store.create({ ...good, agentId: 'a\ud800' })],
        ['number as owner', () => store.create({ ...good, owner: 7 as never })],
        ['ttl 0', () => store.create({ ...good, ttlMs: 0 })],
        ['ttl 1.5', () => store.create({ ...good, ttlMs: 1.5 })],
        ['NaN in meta', () => store.create({ ...good, meta: { n: NaN } as never })],
        ['a Date in meta', () => store.create({ ...good, meta: new Date() as never })],
        ['a cycle in meta', () => store.create({ ...good, meta: cyclic as never })],
        ['-0 in locals', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 1, data: -0 }] })],
        ['undefined in locals', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 1, data: { x: undefined } as never }] })],
        ['bad scope', () => store.create({ ...good, locals: [{ key: 'k', scope: 'turn' as never, version: 1, data: 1 }] })],
        ['version 0', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 0, data: 1 }] })],
        ['duplicate local', () => store.create({ ...good, locals: [{ key: 'k', scope: 'agent', version: 1, data: 1 }, { key: 'k', scope: 'agent', version: 1, data: 2 }] })],
        ['locals missing', () => store.create({ ...good, locals: undefined as never })],
        ['acquire without options', () => store.acquire(id, undefined as never)],
        ['load with a bad turn', () => store.load(id, { turn: -1 })],
        ['list with limit 0', () => store.list({ limit: 0 })],
        ['list with a forged cursor', () => store.list({ cursor: 'nope' })],
        ['delete with force "yes"', () => store.delete(id, { force: 'yes' as never })],
        ['begin with a malformed lease', () => store.begin({ sessionId: id, owner: 'o', epoch: 0 })],
        ['renew with ttl -1', () => store.renew({ sessionId: id, owner: 'o', epoch: 1 }, { ttlMs: -1 })],
      ];
      for (const [what, call] of bad) await rejects(call, 'TypeError', what);
      const it = store.events(id, { afterSeq: -1 })[Symbol.asyncIterator]();
      await rejects(() => it.next(), 'TypeError', 'events with afterSeq -1');
      await rejects(() => store.load(id), 'SESSION_NOT_FOUND', 'nothing was created');
      const lease = await store.create(good);
      const a = await store.begin(lease);
      const badEvents: [string, () => unknown][] = [
        ['events not an array', () => store.append(lease, a, 'x' as never)],
        ['event without body', () => store.append(lease, a, [{ kind: 'k' } as never])],
        ['event with an empty kind', () => store.append(lease, a, [{ kind: '', body: 1 }])],
        ['event body with a function', () => store.append(lease, a, [{ kind: 'k', body: { f: () => 1 } as never }])],
        ['commit with a bigint', () => store.commit(lease, { ...a, events: [{ kind: 'k', body: 1n as never }], locals: [] })],
        ['commit with keepCheckpoints -1', () => store.commit(lease, { ...a, events: [], locals: [], keepCheckpoints: -1 })],
        ['abort with a numeric reason', () => store.abort(lease, { ...a, reason: 5 as never })],
        ['rollback to turn 1.5', () => store.rollback(lease, 1.5)],
        ['pin with an empty label', () => store.pin(lease, 0, '')],
      ];
      for (const [what, call] of badEvents) await rejects(call, 'TypeError', what);
      const loaded = await store.load(id);
      assert.equal(loaded.info.lastSeq, 0, 'no event was written');
      assert.deepEqual(loaded.open && [loaded.open.turn, loaded.open.attempt], [1, 1], 'the attempt is still open');
      assert.deepEqual(
        loaded.checkpoints.map((c) => [c.turn, c.pinned]),
        [[0, false]],
      );
    },
  },
  {
    name: 'list pages by session id in Unicode code point order, optionally of one agent',
    run: async (ctx) => {
      const store = await ctx.store();
      const agent = `${ctx.prefix}agent-list`;
      const other = `${ctx.prefix}agent-other`;
      const suffixes = ['b', 'a', 'Z', 'é', '\uffff', '😀', 'a0'];
      for (const s of suffixes) await store.create({ sessionId: `${ctx.prefix}${s}`, agentId: agent, owner: 'o', ttlMs: LONG_TTL, meta: { s }, locals: [] });
      await store.create({ sessionId: `${ctx.prefix}c`, agentId: other, owner: 'o', ttlMs: LONG_TTL, locals: [] });
      const expected = ['Z', 'a', 'a0', 'b', 'é', '\uffff', '😀'].map((s) => `${ctx.prefix}${s}`);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.list({ agentId: agent, limit: 2, ...(cursor === undefined ? {} : { cursor }) });
        assert.ok(page.items.length <= 2);
        for (const item of page.items) {
          assert.equal(item.agentId, agent);
          assert.equal(item.committedTurn, 0);
          assert.ok(item.updatedAt instanceof Date);
          assert.deepEqual(item.meta, { s: item.sessionId.slice(ctx.prefix.length) });
          seen.push(item.sessionId);
        }
        cursor = page.cursor;
        pages += 1;
      } while (cursor !== undefined && pages < 10);
      assert.deepEqual(seen, expected);
      assert.equal(pages, 4);
      const all = await store.list({ agentId: agent });
      assert.deepEqual(
        all.items.map((s) => s.sessionId),
        expected,
      );
      assert.equal(all.cursor, undefined, 'no cursor after the last page');
      assert.deepEqual(
        (await store.list({ agentId: other })).items.map((s) => s.sessionId),
        [`${ctx.prefix}c`],
      );
      const lease = await store.acquire(`${ctx.prefix}c`, { owner: 'o2', ttlMs: LONG_TTL }).catch(() => undefined);
      assert.equal(lease, undefined, 'busy');
    },
  },
  {
    name: 'delete refuses while another owner holds a live lease (SESSION_BUSY) unless forced or asked by the holder; it removes every row',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const lease = await create(a, ctx, 'owner-1');
      await turn(a, lease, [msg('one')], 1);
      await a.pin(lease, 1, 'x');
      const err = (await rejects(() => b.delete(lease.sessionId), 'SESSION_BUSY', 'delete of a leased session')) as SessionError;
      assert.equal(err.holder?.owner, 'owner-1');
      await rejects(() => b.delete(lease.sessionId, { lease: { ...lease, owner: 'owner-2' } }), 'SESSION_BUSY', 'delete with a lease that is not the live one');
      assert.equal(await a.delete(lease.sessionId, { lease }), true);
      await rejects(() => b.load(lease.sessionId), 'SESSION_NOT_FOUND', 'load after delete');
      await rejects(() => b.checkpoints(lease.sessionId), 'SESSION_NOT_FOUND', 'checkpoints after delete');
      await rejects(() => b.events(lease.sessionId)[Symbol.asyncIterator]().next(), 'SESSION_NOT_FOUND', 'events after delete');
      await rejects(() => a.begin(lease), 'LEASE_LOST', 'a write with the lease of a deleted session');
      await rejects(() => b.acquire(lease.sessionId, { owner: 'owner-2', ttlMs: LONG_TTL }), 'SESSION_NOT_FOUND', 'acquire after delete');
      assert.equal(await b.delete(lease.sessionId), false, 'deleting again finds nothing');
      const again = await b.create({ sessionId: lease.sessionId, agentId: 'reborn', owner: 'owner-2', ttlMs: LONG_TTL, locals: [] });
      const loaded = await a.load(lease.sessionId);
      assert.equal(loaded.info.agentId, 'reborn');
      assert.equal(loaded.info.lastSeq, 0, 'no event of the deleted session is left');
      assert.deepEqual(
        loaded.checkpoints.map((c) => [c.turn, c.pinned]),
        [[0, false]],
      );
      assert.deepEqual(await collect(a.events(lease.sessionId)), []);
      assert.deepEqual([(await b.begin(again)).turn, (await b.load(lease.sessionId)).open?.attempt], [1, 1]);
      const forced = await create(a, ctx, 'owner-1');
      assert.equal(await b.delete(forced.sessionId, { force: true }), true);
      await rejects(() => a.begin(forced), 'LEASE_LOST', 'the holder of a force-deleted session');
      const released = await create(a, ctx, 'owner-1');
      await a.release(released);
      assert.equal(await b.delete(released.sessionId), true, 'a free session is deleted without a lease');
    },
  },
  {
    name: 'events() reads every event in seq order, page by page, from afterSeq, at most limit',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      for (let n = 1; n <= 3; n++) await turn(store, lease, [msg(`m${n}`), note(`a${n}`), note(`b${n}`)], n);
      const all = await collect(store.events(lease.sessionId));
      assert.deepEqual(
        all.map((e) => e.seq),
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
      assert.deepEqual(
        all.map((e) => e.turn),
        [1, 1, 1, 2, 2, 2, 3, 3, 3],
      );
      assert.deepEqual(
        (await collect(store.events(lease.sessionId, { afterSeq: 2, limit: 4 }))).map((e) => e.seq),
        [3, 4, 5, 6],
      );
      assert.deepEqual(await collect(store.events(lease.sessionId, { afterSeq: 9 })), []);
      assert.deepEqual(await collect(store.events(lease.sessionId, { limit: 0 })), []);
      const big = await store.begin(lease);
      const many = Array.from({ length: 1234 }, (_, i) => note(`e${i}`));
      await store.commit(lease, { ...big, events: many, locals: locals(4) });
      const read = await collect(store.events(lease.sessionId, { afterSeq: 9 }));
      assert.equal(read.length, 1234);
      read.forEach((e, i) => {
        assert.equal(e.seq, 10 + i);
        assert.deepEqual(e.body, { text: `e${i}` });
      });
      const partial: number[] = [];
      for await (const e of store.events(lease.sessionId, { afterSeq: 600 })) {
        partial.push(e.seq);
        if (partial.length === 3) break;
      }
      assert.deepEqual(partial, [601, 602, 603], 'an iteration can stop early');
      await rejects(() => store.events(ctx.id('missing'))[Symbol.asyncIterator]().next(), 'SESSION_NOT_FOUND', 'events of an unknown session');
    },
  },
  {
    name: 'several lease owners on one store object, and several store objects on one backend, see one state',
    run: async (ctx) => {
      const [a, b, c] = await ctx.peers(3);
      const l1 = await create(a, ctx, 'owner-a');
      await turn(a, l1, [msg('from a')], 1);
      await a.release(l1);
      const l2 = await b.acquire(l1.sessionId, { owner: 'owner-b', ttlMs: LONG_TTL });
      await turn(b, l2, [msg('from b')], 2);
      const seen = await c.load(l1.sessionId);
      assert.equal(seen.info.committedTurn, 2);
      assert.deepEqual(
        seen.history.map((e) => (e.body as { content: string }).content),
        ['from a', 'from b'],
      );
      assert.equal(seen.info.lease?.owner, 'owner-b');
      await rejects(() => c.acquire(l1.sessionId, { owner: 'owner-c', ttlMs: LONG_TTL }), 'SESSION_BUSY', 'a third owner');
      assert.equal((await a.list({ agentId: `${ctx.prefix}agent` })).items[0].committedTurn, 2);
    },
  },
  {
    name: 'exactly one of many concurrent acquires of a free session wins (seeded interleavings)',
    run: async (ctx) => {
      const stores = await ctx.peers(3);
      const seed = Math.floor(Math.random() * 2 ** 31);
      const rand = rng(seed);
      const owners = Array.from({ length: 6 }, (_, i) => ({ owner: `owner-${i}`, store: stores[i % stores.length] }));
      for (let round = 0; round < 8; round++) {
        const first = await create(stores[0], ctx, 'creator');
        await stores[0].release(first);
        const results = await Promise.allSettled(
          owners.map(async ({ owner, store }) => {
            await sleep(Math.floor(rand() * 4));
            return store.acquire(first.sessionId, { owner, ttlMs: LONG_TTL });
          }),
        );
        const won = results.filter((r): r is PromiseFulfilledResult<Lease> => r.status === 'fulfilled');
        assert.equal(won.length, 1, `seed ${seed}, round ${round}: ${won.length} owners won`);
        assert.equal(won[0].value.epoch, 2, `seed ${seed}`);
        for (const r of results) {
          if (r.status === 'rejected') {
            assert.ok(r.reason instanceof SessionError && r.reason.code === 'SESSION_BUSY', `seed ${seed}: ${describe(r.reason)}`);
            assert.equal(r.reason.holder?.owner, won[0].value.owner, `seed ${seed}: the refusal names the winner`);
          }
        }
      }
    },
  },
  {
    name: 'racing owners with stale leases never commit twice or out of turn: every acknowledged commit is in the log once (seeded interleavings)',
    run: async (ctx) => {
      const stores = await ctx.peers(3);
      const seed = Math.floor(Math.random() * 2 ** 31);
      const rand = rng(seed);
      const first = await create(stores[0], ctx, 'creator');
      await stores[0].release(first);
      const sid = first.sessionId;
      interface Actor {
        owner: string;
        store: SessionStore;
        lease?: Lease;
        stale: Lease[];
      }
      const actors: Actor[] = Array.from({ length: 4 }, (_, i) => ({ owner: `racer-${i}`, store: stores[i % stores.length], stale: [] }));
      const acked: string[] = [];
      const refusedMarks = new Set<string>();
      let mark = 0;
      const step = async (actor: Actor): Promise<void> => {
        const r = rand();
        if (actor.lease === undefined) {
          if (r < 0.7) {
            try {
              actor.lease = await actor.store.acquire(sid, { owner: actor.owner, ttlMs: LONG_TTL });
              const loaded = await actor.store.load(sid);
              if (loaded.open !== undefined) await actor.store.abort(actor.lease, { turn: loaded.open.turn, attempt: loaded.open.attempt, reason: 'interrupted' });
            } catch (err) {
              if (!(err instanceof SessionError) || !['SESSION_BUSY', 'LEASE_LOST'].includes(err.code)) throw err;
              if (err.code === 'LEASE_LOST' && actor.lease !== undefined) {
                actor.stale.push(actor.lease);
                actor.lease = undefined;
              }
            }
          } else if (actor.stale.length > 0) {
            // a paused former holder wakes up and writes with its old lease
            const old = actor.stale[Math.floor(rand() * actor.stale.length)];
            const m = `stale-${actor.owner}-${++mark}`;
            refusedMarks.add(m);
            await rejects(() => actor.store.begin(old), 'LEASE_LOST', `seed ${seed}: begin with a stale lease`);
            await rejects(() => actor.store.commit(old, { turn: 1, attempt: 1, events: [note(m)], locals: [] }), 'LEASE_LOST', `seed ${seed}: commit with a stale lease`);
          }
          return;
        }
        const lease = actor.lease;
        if (r < 0.2) {
          await actor.store.release(lease);
          actor.stale.push(lease);
          actor.lease = undefined;
          return;
        }
        const m = `turn-${actor.owner}-${++mark}`;
        try {
          const a = await actor.store.begin(lease);
          if (rand() < 0.3) await actor.store.append(lease, a, [note(`${m}-flushed`)]);
          if (rand() < 0.15) {
            await actor.store.abort(lease, { ...a, events: [note(`${m}-aborted`)] });
            refusedMarks.add(m);
            return;
          }
          await sleep(Math.floor(rand() * 3));
          await actor.store.commit(lease, { ...a, events: [msg(m)], locals: locals(mark) });
          acked.push(m);
        } catch (err) {
          if (!(err instanceof SessionError) || !['LEASE_LOST', 'SESSION_BUSY'].includes(err.code)) throw err;
          refusedMarks.add(m);
          if (err.code === 'LEASE_LOST') {
            actor.stale.push(lease);
            actor.lease = undefined;
          }
        }
      };
      for (let i = 0; i < 40; i++) {
        // two or three actors act at once
        const batch = actors.filter(() => rand() < 0.6);
        await Promise.all(batch.map(step));
        // a holder is occasionally pushed out: it releases (as if its lease were lost) without knowing
        if (rand() < 0.15) {
          const holder = actors.find((x) => x.lease !== undefined);
          if (holder?.lease !== undefined) {
            await holder.store.release(holder.lease);
            const other = actors.find((x) => x !== holder && x.lease === undefined);
            if (other !== undefined) {
              try {
                other.lease = await other.store.acquire(sid, { owner: other.owner, ttlMs: LONG_TTL });
                const loaded = await other.store.load(sid);
                if (loaded.open !== undefined) await other.store.abort(other.lease, { turn: loaded.open.turn, attempt: loaded.open.attempt, reason: 'interrupted' });
              } catch (err) {
                if (!(err instanceof SessionError) || err.code !== 'SESSION_BUSY') throw err;
              }
            }
          }
        }
      }
      const loaded = await stores[1].load(sid);
      const events = await collect(stores[2].events(sid));
      const committed = events.filter((e) => e.status === 'committed' && e.kind === 'history/append').map((e) => (e.body as { content: string }).content);
      assert.deepEqual(committed, acked, `seed ${seed}: the committed turns are exactly the acknowledged commits, in order`);
      assert.equal(loaded.info.committedTurn, acked.length, `seed ${seed}`);
      assert.deepEqual(
        loaded.history.map((e) => (e.body as { content: string }).content),
        acked,
        `seed ${seed}: history`,
      );
      const committedTurns = events.filter((e) => e.status === 'committed' && e.kind === 'history/append').map((e) => e.turn);
      assert.deepEqual(committedTurns, acked.map((_, i) => i + 1), `seed ${seed}: committed turns are 1..n, each once`);
      for (const e of events) {
        const text = JSON.stringify(e.body);
        for (const m of refusedMarks) if (text.includes(`"${m}"`)) assert.notEqual(e.status, 'committed', `seed ${seed}: refused ${m} is committed`);
      }
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
        `seed ${seed}: seq contiguous`,
      );
    },
  },
  {
    name: 'close() waits for work in flight; later calls reject with STORE_ERROR; close is idempotent',
    run: async (ctx) => {
      const store = await ctx.store();
      const lease = await create(store, ctx);
      const a = await store.begin(lease);
      const inflight = store.commit(lease, { ...a, events: [msg('in flight')], locals: locals(1) });
      const closing = store.close();
      assert.equal((await inflight).turn, 1, 'the commit started before close() finished');
      await closing;
      await store.close();
      await rejects(() => store.load(lease.sessionId), 'STORE_ERROR', 'load after close');
      await rejects(() => store.begin(lease), 'STORE_ERROR', 'begin after close');
      await rejects(() => store.list(), 'STORE_ERROR', 'list after close');
      await rejects(() => store.events(lease.sessionId)[Symbol.asyncIterator]().next(), 'STORE_ERROR', 'events after close');
      if (await ctx.shared()) {
        const other = await ctx.store();
        assert.equal((await other.load(lease.sessionId)).info.committedTurn, 1, 'the commit is durable and another store object is unaffected');
      }
    },
  },
];
