/**
 * @internal The routing checks of the session store conformance suite: handoff and cancel
 * requests (`requestHandoff`, `requestCancel`, `requests`) and wake-ups (`watch`), run when
 * the store has those optional methods.
 */
import assert from 'node:assert/strict';
import type { HolderRequest, SessionStore, StoreWake, StoreWatch } from '../../sessions/store/contract.js';
import { type Check, create, describe, LONG_TTL, locals, msg, rejects, sleep } from './harness.js';
import { type Hostile, nameJunk, objectJunk, stringJunk, throwingGetters, throwingProxy } from './hostile-values.js';

/** The routing methods of a store the `routing` requirement found. */
type Routing = Required<Pick<SessionStore, 'requestHandoff' | 'requestCancel' | 'requests'>>;
const routed = (s: SessionStore): Routing => s as SessionStore & Routing;

/** A deadline far away. */
const far = (): Date => new Date(Date.now() + LONG_TTL);

/** The requests of `owner` about `ids` only (other checks may share the backend), with `until` as milliseconds. */
async function requestsOf(store: SessionStore, owner: string, ids?: readonly string[]): Promise<unknown[]> {
  const all = await routed(store).requests(owner);
  assert.ok(Array.isArray(all), 'requests() resolves to an array');
  return all
    .filter((r) => ids === undefined || ids.includes(r.sessionId))
    .map((r: HolderRequest) => {
      if (r.kind !== 'handoff') return { ...r };
      assert.ok(r.until instanceof Date, 'a handoff request has its until as a Date');
      return { ...r, until: r.until.getTime() };
    });
}

/** Waits until `wakes` holds one like `expected` (at most `ms`); resolves how long it took. */
async function wakeWithin(wakes: readonly { wake: StoreWake; at: number }[], expected: StoreWake, since: number, ms: number, what: string): Promise<number> {
  const match = (w: StoreWake): boolean => JSON.stringify(w) === JSON.stringify(expected);
  for (;;) {
    const hit = wakes.find((w) => w.at >= since && match(w.wake));
    if (hit !== undefined) return hit.at - since;
    if (performance.now() - since > ms) assert.fail(`${what}: no ${JSON.stringify(expected)} wake-up within ${ms} ms (got ${JSON.stringify(wakes.map((w) => w.wake))})`);
    await sleep(5);
  }
}

/** The routing checks (each skipped on a store without the methods it is about). */
export const routingChecks: Check[] = [
  {
    name: "requestHandoff records a request only for another owner's live lease, addressed to that owner",
    requires: 'routing',
    run: async (ctx) => {
      const [sa, sb] = await ctx.peers(2);
      const [a, b] = [routed(sa), routed(sb)];
      assert.equal(await b.requestHandoff(ctx.id('missing'), { owner: 'waiter', until: far() }), false, 'an unknown session');
      const lease = await create(sa, ctx, 'holder');
      const id = lease.sessionId;
      assert.equal(await a.requestHandoff(id, { owner: 'holder', until: far() }), false, 'a session leased to the requester itself');
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'nothing was recorded for the own lease');
      const until = far();
      assert.equal(await b.requestHandoff(id, { owner: 'waiter', until }), true, "another owner's live lease");
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [{ kind: 'handoff', sessionId: id, from: 'waiter', until: until.getTime() }]);
      assert.deepEqual(await requestsOf(sb, 'waiter', [id]), [], 'requests() lists only the requests addressed to the owner');
      assert.equal(await sa.release(lease), true);
      assert.equal(await b.requestHandoff(id, { owner: 'waiter', until: far() }), false, 'a released session');
      const short = await create(sa, ctx, 'holder', { ttlMs: ctx.ttl });
      await sleep(ctx.ttl + 150);
      assert.equal(await b.requestHandoff(short.sessionId, { owner: 'waiter', until: far() }), false, 'a session whose lease expired');
      assert.deepEqual(await requestsOf(sa, 'holder', [id, short.sessionId]), []);
    },
  },
  {
    name: 'a later handoff request replaces an earlier one; a release, an acquire and the deadline remove it',
    requires: 'routing',
    run: async (ctx) => {
      const [sa, sb] = await ctx.peers(2);
      const b = routed(sb);
      const lease = await create(sa, ctx, 'holder');
      const id = lease.sessionId;
      const until = far();
      assert.equal(await b.requestHandoff(id, { owner: 'waiter-1', until: far() }), true);
      assert.equal(await b.requestHandoff(id, { owner: 'waiter-2', until }), true);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [{ kind: 'handoff', sessionId: id, from: 'waiter-2', until: until.getTime() }], 'the later request replaced the earlier one');
      assert.equal(await sa.release(lease), true);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'a release removes the request');
      await sa.acquire(id, { owner: 'holder', ttlMs: LONG_TTL });
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'a released request does not come back with the next lease of the same owner');
      // the waiter's deadline
      const soon = new Date(Date.now() + ctx.ttl);
      assert.equal(await b.requestHandoff(id, { owner: 'waiter-3', until: soon }), true);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [{ kind: 'handoff', sessionId: id, from: 'waiter-3', until: soon.getTime() }]);
      await sleep(ctx.ttl + 150);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'a request whose deadline passed is ignored');
      // an acquire by another owner, after the lease it asked expired
      const short = await create(sa, ctx, 'holder', { ttlMs: ctx.ttl });
      assert.equal(await b.requestHandoff(short.sessionId, { owner: 'waiter', until: far() }), true);
      await sleep(ctx.ttl + 150);
      assert.deepEqual(await requestsOf(sa, 'holder', [short.sessionId]), [], 'a request to an expired lease is ignored');
      await sb.acquire(short.sessionId, { owner: 'waiter', ttlMs: LONG_TTL });
      assert.deepEqual(await requestsOf(sb, 'waiter', [short.sessionId]), [], 'the new holder is not asked by the request made to the old one');
      assert.deepEqual(await requestsOf(sa, 'holder', [short.sessionId]), []);
    },
  },
  {
    name: 'requestCancel records a cancel of the open attempt only, with its reason; it is gone once that attempt ended',
    requires: 'routing',
    run: async (ctx) => {
      const [sa, sb] = await ctx.peers(2);
      const b = routed(sb);
      const lease = await create(sa, ctx, 'holder');
      const id = lease.sessionId;
      assert.equal(await b.requestCancel(ctx.id('missing'), 'stop'), undefined, 'an unknown session');
      assert.equal(await b.requestCancel(id, 'stop'), undefined, 'no attempt is open');
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), []);
      const t1 = await sa.begin(lease);
      assert.deepEqual(await b.requestCancel(id, 'stop it'), { turn: t1.turn, attempt: t1.attempt });
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [{ kind: 'cancel', sessionId: id, turn: t1.turn, attempt: t1.attempt, reason: 'stop it' }]);
      assert.deepEqual(await requestsOf(sb, 'someone-else', [id]), [], 'requests() lists only the requests addressed to the owner');
      const odd = 'a reason with NUL \u0000, a lone surrogate \ud800 and "quotes"';
      await b.requestCancel(id, odd);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [{ kind: 'cancel', sessionId: id, turn: t1.turn, attempt: t1.attempt, reason: odd }], 'a later cancel replaces the reason, read back exactly');
      await sa.commit(lease, { ...t1, events: [msg('one')], locals: locals(1) });
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'gone once the attempt committed');
      const t2 = await sa.begin(lease);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'a cancel of an ended attempt does not apply to the next one');
      assert.deepEqual(await b.requestCancel(id, 'again'), { turn: t2.turn, attempt: t2.attempt });
      await sa.abort(lease, { ...t2, reason: 'cancelled' });
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'gone once the attempt aborted');
      const t3 = await sa.begin(lease);
      assert.deepEqual([t3.turn, t3.attempt], [t2.turn, t2.attempt + 1]);
      assert.deepEqual(await requestsOf(sa, 'holder', [id]), [], 'not carried over to the next attempt of the same turn');
    },
  },
  {
    name: 'requests() lists the requests of one owner by session id (code point order), a cancel before the handoff of its session',
    requires: 'routing',
    run: async (ctx) => {
      const [sa, sb] = await ctx.peers(2);
      const b = routed(sb);
      const ids = [`${ctx.prefix}order-\u{1F600}`, `${ctx.prefix}order-b`, `${ctx.prefix}order-\uFFFD`, `${ctx.prefix}order-a`];
      const leases = [];
      for (const id of ids) leases.push(await create(sa, ctx, id.endsWith('b') ? 'other-holder' : 'holder', { id }));
      for (const l of leases) {
        const t = await sa.begin(l);
        assert.deepEqual(await b.requestCancel(l.sessionId, `cancel ${l.sessionId}`), { turn: t.turn, attempt: t.attempt });
        assert.equal(await b.requestHandoff(l.sessionId, { owner: 'waiter', until: far() }), true);
      }
      const mine = ((await requestsOf(sa, 'holder', ids)) as HolderRequest[]).map((r) => [r.sessionId, r.kind]);
      const order = [ids[3], ids[2], ids[0]];
      assert.deepEqual(
        mine,
        order.flatMap((id) => [
          [id, 'cancel'],
          [id, 'handoff'],
        ]),
        'ordered by session id in code point order (U+FFFD before U+1F600), cancel before handoff',
      );
      assert.deepEqual(
        ((await requestsOf(sa, 'other-holder', ids)) as HolderRequest[]).map((r) => [r.sessionId, r.kind]),
        [
          [ids[1], 'cancel'],
          [ids[1], 'handoff'],
        ],
      );
    },
  },
  {
    name: "watch: a watcher in 'notify' mode hears release, handoff and cancel wake-ups within 1 s (never a commit's), and nothing once closed",
    requires: 'watch',
    run: async (ctx) => {
      const [a, b] = await ctx.peers(2);
      const wakes: { wake: StoreWake; at: number }[] = [];
      const errors: Error[] = [];
      const watch = (a.watch as NonNullable<SessionStore['watch']>)((wake) => wakes.push({ wake, at: performance.now() }), (err) => errors.push(err));
      checkShape(watch);
      // a store may need a moment to set up its notification connection
      for (let waited = 0; watch.mode !== 'notify' && waited < 2_000; waited += 20) await sleep(20);
      if (watch.mode !== 'notify') {
        await watch.close();
        return; // 'poll' mode: the callers poll; there is no delivery to check
      }
      await sleep(50);
      const lease = await create(b, ctx, 'holder');
      const id = lease.sessionId;
      const routing = typeof b.requestHandoff === 'function' && typeof b.requestCancel === 'function';
      if (routing) {
        let since = performance.now();
        await (b.requestHandoff as Routing['requestHandoff'])(id, { owner: 'waiter', until: far() });
        await wakeWithin(wakes, { kind: 'handoff', sessionId: id, owner: 'holder' }, since, 1_000, 'a handoff request');
        const t = await b.begin(lease);
        since = performance.now();
        await (b.requestCancel as Routing['requestCancel'])(id, 'stop');
        await wakeWithin(wakes, { kind: 'cancel', sessionId: id, owner: 'holder' }, since, 1_000, 'a cancel request');
        await b.commit(lease, { ...t, events: [msg('one')], locals: locals(1) });
      } else await b.commit(lease, { ...(await b.begin(lease)), events: [msg('one')], locals: locals(1) });
      const quiet = await create(b, ctx, 'holder');
      const qt = await b.begin(quiet);
      await b.commit(quiet, { ...qt, events: [msg('one')], locals: locals(1) });
      await b.renew(quiet);
      const since = performance.now();
      assert.equal(await b.release(lease), true);
      await wakeWithin(wakes, { kind: 'release', sessionId: id }, since, 1_000, 'a release');
      await sleep(100);
      const noisy = wakes.filter((w) => 'sessionId' in w.wake && w.wake.sessionId === quiet.sessionId);
      assert.deepEqual(noisy, [], 'create, begin, commit and renew wake nobody');
      await watch.close();
      await watch.close();
      const after = wakes.length;
      assert.equal(await b.release(quiet), true);
      await sleep(150);
      assert.deepEqual(wakes.slice(after).filter((w) => 'sessionId' in w.wake && w.wake.sessionId === quiet.sessionId), [], 'a closed watcher hears nothing');
      assert.deepEqual(errors.map((e) => describe(e)), [], 'no subscription error');
    },
  },
  {
    name: 'the routing methods reject hostile input with a TypeError, writing nothing; after close they reject with STORE_ERROR and watch() polls',
    requires: 'routing',
    run: async (ctx) => {
      const store = await ctx.store();
      const r = routed(store);
      const lease = await create(store, ctx, 'holder');
      const id = lease.sessionId;
      await store.begin(lease);
      const untilJunk: Hostile[] = [
        ['undefined', undefined],
        ['null', null],
        ['a number', Date.now() + LONG_TTL],
        ['an ISO string', far().toISOString()],
        ['an Invalid Date', new Date(NaN)],
        ['an empty object', {}],
        ['an object with throwing getters', throwingGetters()],
        ['a Proxy whose traps throw', throwingProxy({})],
      ];
      for (const [label, v] of nameJunk(true)) await rejects(() => r.requestHandoff(v as string, { owner: 'waiter', until: far() }), 'TypeError', `requestHandoff(sessionId = ${label})`);
      for (const [label, v] of objectJunk(true)) await rejects(() => r.requestHandoff(id, v as never), 'TypeError', `requestHandoff(sessionId, request = ${label})`);
      for (const [label, v] of nameJunk(true)) await rejects(() => r.requestHandoff(id, { owner: v as string, until: far() }), 'TypeError', `requestHandoff: request.owner = ${label}`);
      for (const [label, v] of untilJunk) await rejects(() => r.requestHandoff(id, { owner: 'waiter', until: v as Date }), 'TypeError', `requestHandoff: request.until = ${label}`);
      for (const [label, v] of nameJunk(true)) await rejects(() => r.requestCancel(v as string, 'stop'), 'TypeError', `requestCancel(sessionId = ${label})`);
      for (const [label, v] of [['undefined', undefined] as Hostile, ...stringJunk()]) await rejects(() => r.requestCancel(id, v as string), 'TypeError', `requestCancel(sessionId, reason = ${label})`);
      for (const [label, v] of nameJunk(true)) await rejects(() => r.requests(v as string), 'TypeError', `requests(owner = ${label})`);
      assert.deepEqual(await requestsOf(store, 'holder', [id]), [], 'nothing was recorded by a refused call');
      if (typeof store.watch === 'function') {
        const watch = store.watch.bind(store);
        assert.throws(() => watch('not a function' as never), TypeError, 'watch(onWake) that is not a function');
        assert.throws(() => watch(() => undefined, 5 as never), TypeError, 'watch(onWake, onError) with an onError that is not a function');
      }
      const closing = await ctx.store();
      const c = routed(closing);
      await closing.close();
      await rejects(() => c.requestHandoff(id, { owner: 'waiter', until: far() }), 'STORE_ERROR', 'requestHandoff after close');
      await rejects(() => c.requestCancel(id, 'stop'), 'STORE_ERROR', 'requestCancel after close');
      await rejects(() => c.requests('holder'), 'STORE_ERROR', 'requests after close');
      if (typeof closing.watch === 'function') {
        const w = closing.watch(() => undefined);
        assert.equal(w.mode, 'poll', 'watch() on a closed store is in poll mode');
        await w.close();
      }
    },
  },
];

/** A subscription's mode, pollMs and close() are what the contract says. */
function checkShape(watch: StoreWatch): void {
  assert.ok(watch !== null && typeof watch === 'object', 'watch() returns a subscription');
  assert.ok(watch.mode === 'notify' || watch.mode === 'poll', `mode is 'notify' or 'poll', got ${String(watch.mode)}`);
  assert.ok(typeof watch.pollMs === 'number' && Number.isFinite(watch.pollMs) && watch.pollMs >= 1, `pollMs is a finite number >= 1, got ${String(watch.pollMs)}`);
  assert.equal(typeof watch.close, 'function', 'the subscription has close()');
}
