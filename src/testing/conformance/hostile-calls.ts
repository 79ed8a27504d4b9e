/**
 * @internal The hostile calls of the session store conformance suite's fault rules: the
 * state they run against, every call grouped by method and argument, and the helpers of the
 * fault checks.
 */
import assert from 'node:assert/strict';
import { SessionError } from '../../sessions/errors.js';
import type { AttemptStatus, LoadedSession, SessionStore, TurnAttempt } from '../../sessions/store/contract.js';
import { CallTimeoutError, CheckContext, collect, describe, isThenable, locals, LONG_TTL, msg, note } from './harness.js';
import { attemptJunk, boolJunk, eventsJunk, type Hostile, intJunk, jsonJunk, leaseJunk, localsJunk, nameJunk, objectJunk, stringJunk, withExtras } from './hostile-values.js';
import type { HostileSetup } from './hostile-types.js';

/** Makes the state of {@link HostileSetup} in `store`, with ids from `ctx`. */
export async function hostileSetup(store: SessionStore, ctx: CheckContext): Promise<HostileSetup> {
  const agentId = `${ctx.prefix}agent`;
  const a = ctx.id('a');
  const b = ctx.id('b');
  const c = ctx.id('c');
  const la = await store.create({ sessionId: a, agentId, owner: 'hostile-a', ttlMs: LONG_TTL, meta: { m: 1 }, locals: locals(0) });
  const t1 = await store.begin(la);
  await store.commit(la, { ...t1, events: [msg('one')], locals: locals(1) });
  const t2 = await store.begin(la);
  await store.abort(la, { ...t2, events: [note('aborted')], reason: 'Error: boom' });
  const t3 = await store.begin(la);
  await store.append(la, t3, [note('flushed')]);
  const lb = await store.create({ sessionId: b, agentId, owner: 'hostile-b', ttlMs: LONG_TTL, locals: [] });
  assert.equal(await store.release(lb), true);
  const at = (x: TurnAttempt): TurnAttempt => ({ turn: x.turn, attempt: x.attempt });
  return { agentId, la, lb, forged: { sessionId: b, owner: la.owner, epoch: la.epoch }, committed: at(t1), aborted: at(t2), open: at(t3), c, ids: [a, b, c] };
}

/** One hostile call: how to name it, whether it must reject, and the call itself. */
export interface HostileCase {
  readonly call: string;
  readonly mustReject: boolean;
  readonly run: () => unknown;
}

/** The hostile calls of one argument of one method. */
export interface HostileGroup {
  readonly what: string;
  readonly cases: readonly HostileCase[];
}

/** The parameter names of the store methods, for the failure messages. */
export const PARAMS: Record<string, readonly string[]> = {
  create: ['input'],
  acquire: ['sessionId', 'options'],
  renew: ['lease', 'options'],
  release: ['lease'],
  begin: ['lease', 'options'],
  append: ['lease', 'attempt', 'events'],
  commit: ['lease', 'input'],
  abort: ['lease', 'input'],
  rollback: ['lease', 'turn'],
  pin: ['lease', 'turn', 'label'],
  load: ['sessionId', 'options'],
  attemptStatus: ['sessionId', 'attempt'],
  checkpoints: ['sessionId'],
  list: ['query'],
  delete: ['sessionId', 'options'],
  events: ['sessionId', 'query'],
};

/** `{ ...base }` with `field` set to each hostile value (or removed, for `undefined`). */
export function fieldJunk(param: string, base: Record<string, unknown>, field: string, values: Hostile[]): Hostile[] {
  return values.map(([label, value]): Hostile => {
    if (value === undefined) {
      const { [field]: _dropped, ...rest } = base;
      return [`${param} without ${field}`, rest];
    }
    return [`${param}.${field} = ${label}`, { ...base, [field]: value }];
  });
}

/** Every hostile call, grouped by method and argument. */
export function hostileGroups(store: SessionStore, h: HostileSetup): HostileGroup[] {
  const groups: HostileGroup[] = [];
  const s = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const { la, forged, lb, open, committed, aborted, agentId } = h;
  const A = la.sessionId;
  const B = lb.sessionId;
  /** Hostile values for argument `pos` of `method`; the other arguments are `args`. */
  const group = (method: string, pos: number, args: readonly unknown[], values: Hostile[], mustReject = true): void => {
    const params = PARAMS[method];
    const cases = values.map(([label, value]): HostileCase => {
      const shown = params.map((p, i) => (i !== pos ? p : label.startsWith(`${p} `) || label.startsWith(`${p}.`) ? label : `${p} = ${label}`));
      const callArgs = args.slice();
      callArgs[pos] = value;
      while (callArgs.length > 0 && callArgs[callArgs.length - 1] === undefined && callArgs.length - 1 !== pos) callArgs.pop();
      const run =
        method === 'events'
          ? () => {
              const iterator = (s.events(...callArgs) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
              const first = iterator.next();
              if (!isThenable(first)) return first;
              return Promise.resolve(first).then(async (r) => {
                await iterator.return?.();
                return r;
              });
            }
          : () => s[method](...callArgs);
      return { call: `store.${method}(${shown.join(', ')})`, mustReject, run };
    });
    groups.push({ what: `store.${method}() with ${params[pos].endsWith('s') ? '' : 'a '}hostile ${params[pos]}`, cases });
  };
  /** A lease argument: junk must reject; a lease of another session is refused by every fenced write, and `release` may answer false. */
  const leaseGroup = (method: string, pos: number, args: readonly unknown[], fenced: boolean): void => {
    group(method, pos, args, leaseJunk(h, true));
    group(
      method,
      pos,
      args,
      [
        ['the released lease of another session', lb],
        ["this lease's owner and epoch on another session", forged],
        ['a lease of another session with extra fields', withExtras(forged)],
      ],
      fenced,
    );
  };

  // create
  const createInput = { sessionId: h.c, agentId, owner: 'hostile-c', incarnation: 'hostile-incarnation', ttlMs: LONG_TTL, meta: { m: 1 }, locals: locals(0) };
  group('create', 0, [createInput], [
    ...objectJunk(true),
    ...fieldJunk('input', createInput, 'sessionId', nameJunk(true)),
    ...fieldJunk('input', createInput, 'agentId', nameJunk(true)),
    ...fieldJunk('input', createInput, 'owner', nameJunk(true)),
    ...fieldJunk('input', createInput, 'incarnation', nameJunk(false)),
    ...fieldJunk('input', createInput, 'ttlMs', intJunk(true, 1)),
    ...fieldJunk('input', createInput, 'meta', jsonJunk(false)),
    ...fieldJunk('input', createInput, 'locals', localsJunk(true)),
  ]);
  group('create', 0, [createInput], [['input with extra fields (for a stored id)', withExtras({ ...createInput, sessionId: A })]], false);

  // acquire: B is free, so a malformed acquire that got through would take it
  const acquireOptions = { owner: 'hostile-x', incarnation: 'hostile-incarnation', ttlMs: LONG_TTL };
  group('acquire', 0, [undefined, acquireOptions], nameJunk(true));
  group('acquire', 1, [B, undefined], [
    ...objectJunk(true),
    ...fieldJunk('options', acquireOptions, 'owner', nameJunk(true)),
    ...fieldJunk('options', acquireOptions, 'incarnation', nameJunk(false)),
    ...fieldJunk('options', acquireOptions, 'ttlMs', intJunk(true, 1)),
  ]);
  group('acquire', 1, [A, undefined], [['options with extra fields (for a leased session)', withExtras(acquireOptions)]], false);

  // lease methods
  leaseGroup('renew', 0, [undefined], true);
  group('renew', 1, [la, undefined], [...objectJunk(false), ...fieldJunk('options', {}, 'ttlMs', intJunk(false, 1))]);
  leaseGroup('release', 0, [undefined], false);
  leaseGroup('begin', 0, [undefined], true);
  group('begin', 1, [la, undefined], [
    ...objectJunk(false),
    ...fieldJunk('options', {}, 'replaceOpen', boolJunk()),
    ...fieldJunk('options', {}, 'key', nameJunk(false)),
    ...fieldJunk('options', { key: 'k' }, 'keyWindow', intJunk(false, 1)),
  ]);
  group('begin', 1, [la, undefined], [['options with extra fields (an attempt is open)', withExtras({})]], false);
  const events = [note('hostile append')];
  leaseGroup('append', 0, [undefined, open, events], true);
  group('append', 1, [la, undefined, events], [
    ...attemptJunk(),
    ['the committed attempt', committed],
    ['the aborted attempt', aborted],
    ['an attempt never begun', { turn: open.turn, attempt: open.attempt + 1 }],
    ['an attempt of a future turn', { turn: open.turn + 5, attempt: 1 }],
  ]);
  group('append', 2, [la, open, undefined], eventsJunk(true).filter(([label]) => label !== 'undefined'));
  group('append', 2, [la, open, undefined], [['undefined', undefined]]);
  const commitInput = { ...open, events: [msg('hostile commit')], locals: locals(2) };
  leaseGroup('commit', 0, [undefined, commitInput], true);
  group('commit', 1, [la, undefined], [
    ...objectJunk(true),
    ...fieldJunk('input', commitInput, 'turn', intJunk(true, 1)),
    ...fieldJunk('input', commitInput, 'attempt', intJunk(true, 1)),
    ...fieldJunk('input', commitInput, 'events', eventsJunk(false)),
    ...fieldJunk('input', commitInput, 'locals', localsJunk(true)),
    ...fieldJunk('input', commitInput, 'keepCheckpoints', intJunk(false, 0)),
    ['input of the aborted attempt', { ...commitInput, ...aborted }],
    ['input of an attempt never begun', { ...commitInput, attempt: open.attempt + 1 }],
    ['input of a future turn', { ...commitInput, turn: open.turn + 1, attempt: 1 }],
  ]);
  group('commit', 1, [la, undefined], [['input with extra fields (a repeat of the committed attempt)', withExtras({ ...committed, events: [msg('one')], locals: locals(1) })]], false);
  const abortInput = { ...open, events: [note('hostile abort')], reason: 'hostile' };
  leaseGroup('abort', 0, [undefined, abortInput], true);
  group('abort', 1, [la, undefined], [
    ...objectJunk(true),
    ...fieldJunk('input', abortInput, 'turn', intJunk(true, 1)),
    ...fieldJunk('input', abortInput, 'attempt', intJunk(true, 1)),
    ...fieldJunk('input', abortInput, 'events', eventsJunk(false)),
    ...fieldJunk('input', abortInput, 'reason', stringJunk()),
    ['input of the committed attempt', { ...abortInput, ...committed }],
    ['input of an attempt never begun', { ...abortInput, attempt: open.attempt + 1 }],
  ]);
  group('abort', 1, [la, undefined], [['input with extra fields (a repeat of the aborted attempt)', withExtras({ ...aborted })]], false);
  leaseGroup('rollback', 0, [undefined, 0], true);
  group('rollback', 1, [la, undefined], intJunk(true, 0));
  leaseGroup('pin', 0, [undefined, 0, 'hostile'], true);
  group('pin', 1, [la, undefined, 'hostile'], intJunk(true, 0));
  group('pin', 2, [la, 0, undefined], nameJunk(false));

  // reads
  group('load', 0, [undefined], nameJunk(true));
  group('load', 1, [A, undefined], [...objectJunk(false), ...fieldJunk('options', {}, 'turn', intJunk(false, 0))]);
  group('load', 1, [A, undefined], [['options with extra fields', withExtras({})]], false);
  if (typeof store.attemptStatus === 'function') {
    group('attemptStatus', 0, [undefined, committed], nameJunk(true));
    group('attemptStatus', 1, [A, undefined], attemptJunk());
    group('attemptStatus', 1, [A, undefined], [['an attempt with extra fields', withExtras({ ...committed })]], false);
  }
  group('checkpoints', 0, [undefined], nameJunk(true));
  group('list', 0, [undefined], [
    ...objectJunk(false),
    ...fieldJunk('query', {}, 'agentId', nameJunk(false)),
    ...fieldJunk('query', {}, 'limit', intJunk(false, 1, 1000)),
    ...fieldJunk('query', {}, 'cursor', [...stringJunk(), ['a forged cursor', 'hostile']]),
  ]);
  group('list', 0, [undefined], [['a query with extra fields', withExtras({ agentId })]], false);
  group('events', 0, [undefined], nameJunk(true));
  group('events', 1, [A, undefined], [...objectJunk(false), ...fieldJunk('query', {}, 'afterSeq', intJunk(false, 0)), ...fieldJunk('query', {}, 'limit', intJunk(false, 0))]);
  group('events', 1, [A, undefined], [['a query with extra fields', withExtras({})]], false);

  // delete: A is leased by la, so only a malformed option could delete it
  group('delete', 0, [undefined], nameJunk(true));
  group('delete', 1, [A, undefined], [
    ...objectJunk(false),
    ...fieldJunk(
      'options',
      {},
      'lease',
      leaseJunk(h, false).filter(([label]) => label !== 'undefined'),
    ),
    ...fieldJunk('options', {}, 'force', boolJunk()),
  ]);
  group('delete', 1, [A, undefined], [
    ['options with extra fields', withExtras({})],
    ['options with the lease of another session', { lease: forged }],
  ], false);
  return groups;
}

/** Runs one hostile call: a failure message, or `undefined` when the store handled it. */
export async function tryHostile(c: HostileCase): Promise<{ failure?: string; resolved: boolean; timedOut: boolean }> {
  let r: unknown;
  try {
    r = c.run();
  } catch (err) {
    return { failure: `${c.call} threw synchronously instead of rejecting: ${describe(err)}`, resolved: false, timedOut: false };
  }
  if (!isThenable(r)) return { failure: `${c.call} returned ${r === null ? 'null' : typeof r}, not a promise`, resolved: false, timedOut: false };
  try {
    await r;
  } catch (err) {
    if (err instanceof CallTimeoutError) return { failure: `${c.call}: ${err.message}`, resolved: false, timedOut: true };
    if (err instanceof TypeError || err instanceof SessionError) return { resolved: false, timedOut: false };
    return { failure: `${c.call} rejected with ${describe(err)}; bad input is refused with a TypeError (or a SessionError)`, resolved: false, timedOut: false };
  }
  return { failure: c.mustReject ? `${c.call} resolved; it must reject (a TypeError for malformed input)` : undefined, resolved: true, timedOut: false };
}

/**
 * What a store holds of `ids` and of `agentId`'s list, as plain JSON (the lease's remaining
 * time left out): two equal results mean nothing was written.
 */
export async function stateOf(store: SessionStore, ids: readonly string[], agentId: string): Promise<unknown> {
  const out: unknown[] = [];
  for (const id of ids) {
    let loaded: LoadedSession;
    try {
      loaded = await store.load(id);
    } catch (err) {
      if (err instanceof SessionError && err.code === 'SESSION_NOT_FOUND') {
        out.push({ id, absent: true });
        continue;
      }
      throw err;
    }
    const { lease, ...info } = loaded.info;
    out.push({
      id,
      info,
      lease: lease === undefined ? null : { owner: lease.owner, epoch: lease.epoch },
      checkpoint: loaded.checkpoint,
      history: loaded.history,
      open: loaded.open ?? null,
      checkpoints: loaded.checkpoints,
      events: await collect(store.events(id)),
    });
  }
  out.push({ list: (await store.list({ agentId })).items });
  return JSON.parse(JSON.stringify(out)) as unknown;
}

/** Whether two {@link stateOf} results are the same. */
export function sameState(a: unknown, b: unknown): boolean {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

/** Calls `call` (which must not throw synchronously) and expects a rejection with a `TypeError` or a `SessionError`. */
export async function refused(call: () => unknown, what: string): Promise<void> {
  let p: unknown;
  try {
    p = call();
  } catch (err) {
    assert.fail(`${what}: threw synchronously instead of rejecting: ${describe(err)}`);
  }
  assert.ok(isThenable(p), `${what}: did not return a promise`);
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TypeError || err instanceof SessionError, `${what}: expected a TypeError or a SessionError, got ${describe(err)}`);
    return;
  }
  assert.fail(`${what}: resolved, expected a rejection`);
}

/** Awaits a call that must resolve; a rejection fails with `what` and the error (its code included). */
export async function resolves<T>(p: Promise<T>, what: string): Promise<T> {
  try {
    return await p;
  } catch (err) {
    assert.fail(`${what}: rejected with ${describe(err)}`);
  }
}

/** The store's `attemptStatus`, which the check requiring it knows is there. */
export function statusOf(store: SessionStore, sessionId: string, attempt: TurnAttempt): Promise<AttemptStatus> {
  const f = store.attemptStatus;
  if (f === undefined) throw new TypeError('the store has no attemptStatus()');
  return f.call(store, sessionId, attempt);
}

export const attemptOf = (x: TurnAttempt): [number, number] => [x.turn, x.attempt];
