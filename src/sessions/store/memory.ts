/**
 * The in-memory session store: the default of `SessionsPlugin`, and the reference the SQL
 * stores are checked against. Same storage model, lease and fencing rules as the SQL
 * stores; nothing survives the process.
 */
import type { JsonValue } from '../../util/lossless-json.js';
import { SessionError } from '../errors.js';
import * as check from './input.js';
import * as fail from './failures.js';
import { HISTORY_KIND_PREFIX } from './contract.js';
import type * as store from './contract.js';
import { WakeHub } from './sql/wakes.js';

/** Options of {@link MemorySessionStore}. */
export interface MemorySessionStoreOptions {
  /**
   * The store's clock in milliseconds since the epoch (default `Date.now`). Inject a fake
   * clock to test lease expiry without waiting.
   */
  readonly now?: () => number;
  /** What `watch()` reports as `pollMs` (a finite number >= 1, default 250); its wake-ups are delivered in-process. */
  readonly pollMs?: number;
}

interface MemEvent {
  readonly seq: number;
  readonly turn: number;
  readonly attempt: number;
  readonly kind: string;
  readonly body: JsonValue;
  readonly at: number;
}

interface MemAttempt {
  status: 'started' | 'committed' | 'aborted';
  readonly epoch: number;
  readonly startedAt: number;
  endedAt: number;
  endRev: number;
  endSeq: number;
  reason: string | undefined;
  /** The turn's key given to `begin`, if any. */
  readonly key: string | undefined;
}

interface MemCheckpoint {
  readonly turn: number;
  readonly locals: readonly store.PersistedLocal[];
  readonly createdAt: number;
  pinned: boolean;
  label: string | undefined;
}

interface MemSession {
  readonly sessionId: string;
  readonly agentId: string;
  readonly meta: JsonValue;
  readonly createdAt: number;
  updatedAt: number;
  committedTurn: number;
  rev: number;
  readonly events: MemEvent[];
  readonly attempts: Map<string, MemAttempt>;
  readonly maxAttempt: Map<number, number>;
  readonly checkpoints: Map<number, MemCheckpoint>;
  /**
   * The turns (> 0) of the kept checkpoints that are not pinned: the only ones retention may
   * drop, so a commit looks at these (at most the largest `keepCheckpoints` used) and not
   * at every pinned checkpoint of a long session.
   */
  readonly unpinned: Set<number>;
  readonly rollbacks: { readonly rev: number; readonly toTurn: number }[];
  /**
   * The keys of the committed turns of the current timeline that were begun with one, by
   * turn: set by a commit, dropped for the turns a rollback supersedes.
   */
  readonly keys: Map<number, string>;
  /**
   * `laterMin[i]` is the lowest `toTurn` of `rollbacks[i..]` (rollbacks are in `rev`
   * order), so an event's status takes a binary search, not a walk over every rollback;
   * made on demand, dropped by each new rollback.
   */
  laterMin: number[] | undefined;
  leaseOwner: string | undefined;
  leaseIncarnation: string | undefined;
  leaseEpoch: number;
  leaseExpiresAt: number;
  leaseTtlMs: number;
  open: { readonly turn: number; readonly attempt: number; readonly epoch: number } | undefined;
  /** The handoff request, addressed to the lease (`holder`, `epoch`) it was made to; the cancel of an attempt begun under `epoch`. */
  handoff: { readonly from: string; readonly until: number; readonly holder: string; readonly epoch: number } | undefined;
  cancel: { readonly turn: number; readonly attempt: number; readonly epoch: number; readonly reason: string } | undefined;
}

const attemptKey = (turn: number, attempt: number): string => `${turn}:${attempt}`;

/**
 * A {@link SessionStore} in this process's memory. It follows the same rules as the SQL
 * stores (leases on its own clock, fencing, retention, rollback records, exact JSON round
 * trips through lossless snapshots), so code tested against it behaves the same on SQLite
 * or PostgreSQL; but nothing survives the process, and store objects do not share data.
 * Returned bodies and locals are deep-frozen.
 */
export class MemorySessionStore implements store.SessionStore {
  /** {@inheritDoc SessionStore.turnKeys} */
  readonly turnKeys = true;
  readonly #sessions = new Map<string, MemSession>();
  readonly #now: () => number;
  /** The sessions with a handoff or cancel request recorded. */
  readonly #requested = new Set<string>();
  readonly #hub: WakeHub;
  #closed = false;

  /** @param options - `now`: the store's clock; `pollMs`. */
  constructor(options: MemorySessionStoreOptions = {}) {
    const o = check.checkObject<MemorySessionStoreOptions>(options, 'new MemorySessionStore(options)', true);
    if (o.now !== undefined && typeof o.now !== 'function') throw new TypeError('options.now must be a function returning milliseconds.');
    this.#now = o.now ?? Date.now;
    this.#hub = new WakeHub(check.checkPollMs(o.pollMs, 'options.pollMs'), () => 'notify');
  }

  /** {@inheritDoc SessionStore.create} */
  async create(input: store.CreateSessionInput): Promise<store.Lease> {
    this.#open('create');
    const c = check.checkCreate(input);
    if (this.#sessions.has(c.sessionId)) {
      throw new SessionError('SESSION_ALREADY_EXISTS', `session already exists: "${c.sessionId}" is stored already; resume it, or pick another id.`, {
        sessionId: c.sessionId,
      });
    }
    const now = this.#clock();
    this.#sessions.set(c.sessionId, {
      sessionId: c.sessionId,
      agentId: c.agentId,
      meta: c.meta,
      createdAt: now,
      updatedAt: now,
      committedTurn: 0,
      rev: 1,
      events: [],
      attempts: new Map(),
      maxAttempt: new Map(),
      checkpoints: new Map([[0, { turn: 0, locals: c.locals, createdAt: now, pinned: false, label: undefined }]]),
      unpinned: new Set(),
      laterMin: undefined,
      rollbacks: [],
      keys: new Map(),
      leaseOwner: c.owner,
      leaseIncarnation: c.incarnation,
      leaseEpoch: 1,
      leaseExpiresAt: now + c.ttlMs,
      leaseTtlMs: c.ttlMs,
      open: undefined,
      handoff: undefined,
      cancel: undefined,
    });
    return check.leaseOf(c.sessionId, c.owner, 1, c.incarnation);
  }

  /** {@inheritDoc SessionStore.acquire} */
  async acquire(sessionId: string, options: store.AcquireOptions): Promise<store.Lease> {
    this.#open('acquire');
    const a = check.checkAcquire(sessionId, options);
    const s = this.#get(a.sessionId);
    const now = this.#clock();
    // A live lease is taken over at once only by another incarnation of its own owner (a
    // restarted process with a stable owner id); any other live lease is SESSION_BUSY.
    const takeover = s.leaseOwner === a.owner && a.incarnation !== undefined && s.leaseIncarnation !== undefined && s.leaseIncarnation !== a.incarnation;
    if (s.leaseOwner !== undefined && s.leaseExpiresAt > now && !takeover) {
      throw fail.busyLease(s.sessionId, { owner: s.leaseOwner, epoch: s.leaseEpoch, remainingMs: s.leaseExpiresAt - now });
    }
    s.leaseOwner = a.owner;
    s.leaseIncarnation = a.incarnation;
    s.leaseEpoch += 1;
    s.leaseExpiresAt = now + a.ttlMs;
    s.leaseTtlMs = a.ttlMs;
    s.handoff = undefined;
    return check.leaseOf(s.sessionId, a.owner, s.leaseEpoch, a.incarnation);
  }

  /** {@inheritDoc SessionStore.renew} */
  async renew(lease: store.Lease, options?: { readonly ttlMs?: number }): Promise<void> {
    this.#open('renew');
    const l = check.checkLease(lease);
    const ttl = check.checkRenew(options);
    const { s, now } = this.#fence(l, 'renew');
    if (ttl !== undefined) s.leaseTtlMs = ttl;
    s.leaseExpiresAt = now + s.leaseTtlMs;
  }

  /** {@inheritDoc SessionStore.release} */
  async release(lease: store.Lease): Promise<boolean> {
    this.#open('release');
    const l = check.checkLease(lease);
    const s = this.#sessions.get(l.sessionId);
    if (s === undefined || s.leaseOwner !== l.owner || s.leaseEpoch !== l.epoch) return false;
    s.leaseOwner = undefined;
    s.leaseIncarnation = undefined;
    s.leaseExpiresAt = 0;
    s.handoff = undefined;
    this.#hub.emit({ kind: 'release', sessionId: s.sessionId });
    return true;
  }

  /** {@inheritDoc SessionStore.begin} */
  async begin(lease: store.Lease, options?: store.BeginOptions): Promise<store.BegunAttempt> {
    this.#open('begin');
    const l = check.checkLease(lease);
    const o = check.checkBegin(options);
    const { s, now } = this.#fence(l, 'begin');
    if (o.key !== undefined) {
      // the committed turns of the current timeline among the last keyWindow ones
      for (let turn = s.committedTurn; turn >= 1 && turn > s.committedTurn - o.keyWindow; turn--) {
        if (s.keys.get(turn) === o.key) throw check.alreadyCommitted(s.sessionId, o.key, turn);
      }
    }
    if (s.open !== undefined) {
      if (!o.replaceOpen || s.open.epoch !== l.epoch) throw fail.busyAttempt(s.sessionId, s.open, 'beginning another');
      // begun with this very lease, by a begin (or left by an abort) whose reply was lost
      this.#end(s, s.open, 'aborted', 'begin outcome unknown', now);
    }
    const turn = s.committedTurn + 1;
    const attempt = (s.maxAttempt.get(turn) ?? 0) + 1;
    s.maxAttempt.set(turn, attempt);
    s.attempts.set(attemptKey(turn, attempt), { status: 'started', epoch: l.epoch, startedAt: now, endedAt: 0, endRev: 0, endSeq: 0, reason: undefined, key: o.key });
    s.open = { turn, attempt, epoch: l.epoch };
    this.#touch(s, now);
    return { turn, attempt, startedAt: new Date(now) };
  }

  /** {@inheritDoc SessionStore.append} */
  async append(lease: store.Lease, attempt: store.TurnAttempt, events: readonly store.NewSessionEvent[]): Promise<void> {
    this.#open('append');
    const l = check.checkLease(lease);
    const a = check.checkAttempt(attempt, 'attempt');
    const evs = check.checkEvents(events, 'events');
    const { s, now } = this.#fence(l, 'append');
    if (s.open === undefined || s.open.turn !== a.turn || s.open.attempt !== a.attempt || s.open.epoch !== l.epoch) {
      throw fail.notOpen(s.sessionId, a, s.open, 'append');
    }
    this.#push(s, a, evs, now);
    this.#touch(s, now);
  }

  /** {@inheritDoc SessionStore.commit} */
  async commit(lease: store.Lease, input: store.CommitInput): Promise<store.CommittedTurn> {
    this.#open('commit');
    const l = check.checkLease(lease);
    const c = check.checkCommit(input);
    // A repeat of a commit this lease made answers the same, writing nothing, even once the
    // lease expired (as long as no acquire or release replaced it).
    const done = this.#ended(l, c);
    if (done?.status === 'committed' && done.epoch === l.epoch) {
      return { turn: c.turn, attempt: c.attempt, committedAt: new Date(done.endedAt), lastSeq: done.endSeq };
    }
    const { s, now } = this.#fence(l, 'commit');
    if (s.open === undefined || s.open.turn !== c.turn || s.open.attempt !== c.attempt || s.open.epoch !== l.epoch) {
      throw fail.notOpen(s.sessionId, c, s.open, 'commit');
    }
    this.#push(s, c, c.events, now);
    const key = this.#end(s, c, 'committed', undefined, now).key;
    s.committedTurn = c.turn;
    if (key === undefined) s.keys.delete(c.turn);
    else s.keys.set(c.turn, key);
    s.checkpoints.set(c.turn, { turn: c.turn, locals: c.locals, createdAt: now, pinned: false, label: undefined });
    for (const turn of s.unpinned) {
      if (turn < c.turn && turn <= c.turn - c.keepCheckpoints) {
        s.checkpoints.delete(turn);
        s.unpinned.delete(turn);
      }
    }
    s.unpinned.add(c.turn);
    return { turn: c.turn, attempt: c.attempt, committedAt: new Date(now), lastSeq: s.events.length };
  }

  /** {@inheritDoc SessionStore.abort} */
  async abort(lease: store.Lease, input: store.AbortInput): Promise<void> {
    this.#open('abort');
    const l = check.checkLease(lease);
    const a = check.checkAbort(input);
    if (this.#ended(l, a)?.status === 'aborted') return;
    const { s, now } = this.#fence(l, 'abort');
    if (s.open === undefined || s.open.turn !== a.turn || s.open.attempt !== a.attempt) {
      throw fail.notOpen(s.sessionId, a, s.open, 'abort');
    }
    this.#push(s, a, a.events, now);
    this.#end(s, a, 'aborted', a.reason, now);
  }

  /** Ends the open attempt `a` of `s` (its events already pushed); returns its record. */
  #end(s: MemSession, a: store.TurnAttempt, status: 'committed' | 'aborted', reason: string | undefined, now: number): MemAttempt {
    this.#touch(s, now);
    const rec = s.attempts.get(attemptKey(a.turn, a.attempt)) as MemAttempt;
    rec.status = status;
    rec.endedAt = now;
    rec.endRev = s.rev;
    rec.endSeq = s.events.length;
    rec.reason = reason;
    s.open = undefined;
    return rec;
  }

  /** {@inheritDoc SessionStore.attemptStatus} */
  async attemptStatus(sessionId: string, attempt: store.TurnAttempt): Promise<store.AttemptStatus> {
    this.#open('attemptStatus');
    const id = check.checkName(sessionId, 'sessionId');
    const a = check.checkAttempt(attempt, 'attempt');
    const rec = this.#get(id).attempts.get(attemptKey(a.turn, a.attempt));
    if (rec === undefined) return 'absent';
    return rec.status === 'started' ? 'open' : rec.status;
  }

  /** {@inheritDoc SessionStore.rollback} */
  async rollback(lease: store.Lease, turn: number): Promise<void> {
    this.#open('rollback');
    const l = check.checkLease(lease);
    const t = check.checkInt(turn, 'turn', 0);
    const { s, now } = this.#fence(l, 'rollback');
    if (s.open !== undefined) throw fail.busyAttempt(s.sessionId, s.open, 'rolling back');
    if (t > s.committedTurn || !s.checkpoints.has(t)) throw fail.noCheckpoint(s.sessionId, t, s.committedTurn);
    this.#touch(s, now);
    s.rollbacks.push({ rev: s.rev, toTurn: t });
    s.laterMin = undefined;
    for (const k of [...s.checkpoints.keys()]) {
      if (k > t) {
        s.checkpoints.delete(k);
        s.unpinned.delete(k);
      }
    }
    // the later turns are superseded: their keys no longer count
    for (let k = s.committedTurn; k > t; k--) s.keys.delete(k);
    s.committedTurn = t;
  }

  /** {@inheritDoc SessionStore.pin} */
  async pin(lease: store.Lease, turn: number, label?: string): Promise<void> {
    this.#open('pin');
    const l = check.checkLease(lease);
    const t = check.checkInt(turn, 'turn', 0);
    const lb = check.checkLabel(label);
    const { s, now } = this.#fence(l, 'pin');
    const cp = s.checkpoints.get(t);
    if (cp === undefined) throw fail.noCheckpoint(s.sessionId, t, s.committedTurn);
    this.#touch(s, now);
    cp.pinned = true;
    s.unpinned.delete(t);
    if (lb !== undefined) cp.label = lb;
  }

  /** {@inheritDoc SessionStore.load} */
  async load(sessionId: string, options?: { readonly turn?: number }): Promise<store.LoadedSession> {
    this.#open('load');
    const id = check.checkName(sessionId, 'sessionId');
    const wanted = check.checkLoad(options);
    const s = this.#get(id);
    const turn = wanted ?? s.committedTurn;
    const cp = turn <= s.committedTurn ? s.checkpoints.get(turn) : undefined;
    if (cp === undefined) throw fail.noCheckpoint(s.sessionId, turn, s.committedTurn);
    const history: store.StoredSessionEvent[] = [];
    for (const e of s.events) {
      if (e.turn > turn || !e.kind.startsWith(HISTORY_KIND_PREFIX)) continue;
      const status = this.#status(s, e);
      if (status === 'committed') history.push(this.#stored(e, status));
    }
    let open: store.LoadedSession['open'];
    if (s.open !== undefined) {
      const { turn: ot, attempt: oa, epoch } = s.open;
      const rec = s.attempts.get(attemptKey(ot, oa)) as MemAttempt;
      const events = s.events.filter((e) => e.turn === ot && e.attempt === oa).map((e) => this.#stored(e, 'pending'));
      open = { turn: ot, attempt: oa, epoch, startedAt: new Date(rec.startedAt), events };
    }
    return { info: this.#info(s), checkpoint: { ...this.#checkpointInfo(cp), locals: cp.locals }, history, open, checkpoints: this.#checkpointList(s) };
  }

  /** {@inheritDoc SessionStore.checkpoints} */
  async checkpoints(sessionId: string): Promise<readonly store.CheckpointInfo[]> {
    this.#open('checkpoints');
    return this.#checkpointList(this.#get(check.checkName(sessionId, 'sessionId')));
  }

  /** {@inheritDoc SessionStore.list} */
  async list(query?: store.ListQuery): Promise<store.SessionPage> {
    this.#open('list');
    const q = check.checkList(query);
    const ids = [...this.#sessions.values()]
      .filter((s) => (q.agentId === undefined || s.agentId === q.agentId) && (q.after === undefined || check.compareCodePoints(s.sessionId, q.after) > 0))
      .map((s) => s.sessionId)
      .sort(check.compareCodePoints);
    const page = ids.slice(0, q.limit).map((id) => {
      const s = this.#sessions.get(id) as MemSession;
      return { sessionId: s.sessionId, agentId: s.agentId, committedTurn: s.committedTurn, updatedAt: new Date(s.updatedAt), meta: s.meta };
    });
    return ids.length > q.limit ? { items: page, cursor: check.encodeCursor(page[page.length - 1].sessionId) } : { items: page };
  }

  /** {@inheritDoc SessionStore.delete} */
  async delete(sessionId: string, options?: store.DeleteOptions): Promise<boolean> {
    this.#open('delete');
    const id = check.checkName(sessionId, 'sessionId');
    const d = check.checkDelete(options);
    const s = this.#sessions.get(id);
    if (s === undefined) return false;
    const now = this.#clock();
    const live = s.leaseOwner !== undefined && s.leaseExpiresAt > now;
    const mine = d.lease !== undefined && d.lease.sessionId === id && d.lease.owner === s.leaseOwner && d.lease.epoch === s.leaseEpoch;
    if (live && !mine && !d.force) {
      throw fail.busyLease(id, { owner: s.leaseOwner as string, epoch: s.leaseEpoch, remainingMs: s.leaseExpiresAt - now });
    }
    this.#sessions.delete(id);
    this.#requested.delete(id);
    this.#hub.emit({ kind: 'release', sessionId: id });
    return true;
  }

  /** {@inheritDoc SessionStore.events} */
  events(sessionId: string, query?: store.EventsQuery): AsyncIterable<store.StoredSessionEvent> {
    return {
      [Symbol.asyncIterator]: () => this.#iterate(sessionId, query),
    };
  }

  async *#iterate(sessionId: string, query: store.EventsQuery | undefined): AsyncGenerator<store.StoredSessionEvent> {
    this.#open('events');
    const id = check.checkName(sessionId, 'sessionId');
    const q = check.checkEventsQuery(query);
    this.#get(id);
    let seq = q.afterSeq;
    let left = q.limit;
    while (left > 0) {
      this.#open('events');
      const s = this.#sessions.get(id);
      const e = s?.events[seq];
      if (s === undefined || e === undefined) return;
      seq += 1;
      left -= 1;
      yield this.#stored(e, this.#status(s, e));
    }
  }

  /** {@inheritDoc SessionStore.close} */
  async close(): Promise<void> {
    this.#closed = true;
    this.#sessions.clear();
    this.#requested.clear();
    this.#hub.closeAll();
  }

  // ---- routing: handoff and cancel requests, wake-ups -----------------------------------

  /** {@inheritDoc SessionStore.requestHandoff} */
  async requestHandoff(sessionId: string, request: { readonly owner: string; readonly until: Date }): Promise<boolean> {
    this.#open('requestHandoff');
    const h = check.checkHandoffRequest(sessionId, request);
    const s = this.#sessions.get(h.sessionId);
    if (s === undefined || s.leaseOwner === undefined || s.leaseExpiresAt <= this.#clock() || s.leaseOwner === h.owner) return false;
    s.handoff = { from: h.owner, until: h.until, holder: s.leaseOwner, epoch: s.leaseEpoch };
    this.#requested.add(s.sessionId);
    this.#hub.emit({ kind: 'handoff', sessionId: s.sessionId, owner: s.leaseOwner });
    return true;
  }

  /** {@inheritDoc SessionStore.requestCancel} */
  async requestCancel(sessionId: string, reason: string): Promise<store.TurnAttempt | undefined> {
    this.#open('requestCancel');
    const c = check.checkCancelRequest(sessionId, reason);
    const s = this.#sessions.get(c.sessionId);
    if (s?.open === undefined) return undefined;
    const { turn, attempt } = s.open;
    s.cancel = { ...s.open, reason: c.reason };
    this.#requested.add(s.sessionId);
    if (s.leaseOwner !== undefined) this.#hub.emit({ kind: 'cancel', sessionId: s.sessionId, owner: s.leaseOwner });
    return { turn, attempt };
  }

  /** See {@link SessionStore.requests}. A moot cancel, of an attempt that ended, is dropped here. */
  async requests(owner: string): Promise<readonly store.HolderRequest[]> {
    this.#open('requests');
    const o = check.checkName(owner, 'owner');
    const now = this.#clock();
    const out: store.HolderRequest[] = [];
    for (const id of [...this.#requested].sort(check.compareCodePoints)) {
      const s = this.#sessions.get(id);
      if (s?.cancel !== undefined && (s.open?.turn !== s.cancel.turn || s.open.attempt !== s.cancel.attempt)) s.cancel = undefined;
      if (s === undefined || (s.handoff === undefined && s.cancel === undefined)) this.#requested.delete(id);
      if (s === undefined || s.leaseOwner !== o) continue;
      const { cancel: c, handoff: h } = s;
      if (c !== undefined && c.epoch === s.leaseEpoch) out.push({ kind: 'cancel', sessionId: id, turn: c.turn, attempt: c.attempt, reason: c.reason });
      if (h !== undefined && h.holder === o && h.epoch === s.leaseEpoch && s.leaseExpiresAt > now && h.until > now) {
        out.push({ kind: 'handoff', sessionId: id, from: h.from, until: new Date(h.until) });
      }
    }
    return out;
  }

  /** {@inheritDoc SessionStore.watch} */
  watch(onWake: (wake: store.StoreWake) => void, onError?: (err: Error) => void): store.StoreWatch {
    check.checkWatch(onWake, onError);
    return this.#hub.subscribe(onWake, onError, this.#closed ? fail.storeClosed('store.watch()') : undefined);
  }

  #open(what: string): void {
    if (this.#closed) throw fail.storeClosed(`store.${what}()`);
  }

  #clock(): number {
    const t = this.#now();
    if (!Number.isFinite(t)) throw new SessionError('STORE_ERROR', `store error: the MemorySessionStore clock returned ${String(t)} instead of milliseconds.`);
    return t;
  }

  #get(id: string): MemSession {
    const s = this.#sessions.get(id);
    if (s === undefined) throw fail.notFound(id);
    return s;
  }

  #fence(l: store.Lease, what: string): { s: MemSession; now: number } {
    const s = this.#sessions.get(l.sessionId);
    const now = this.#clock();
    const state: fail.FenceState =
      s === undefined
        ? { exists: false, owner: null, epoch: 0, expiresAt: null, now, incarnation: null }
        : { exists: true, owner: s.leaseOwner ?? null, epoch: s.leaseEpoch, expiresAt: s.leaseOwner === undefined ? null : s.leaseExpiresAt, now, incarnation: s.leaseIncarnation ?? null };
    const lost = fail.leaseLost(l, state, `store.${what}()`);
    if (lost !== undefined || s === undefined) throw lost;
    return { s, now };
  }

  /** The record of attempt `a` when `l` is still the session's recorded lease (live or expired), else `undefined`. */
  #ended(l: store.Lease, a: store.TurnAttempt): MemAttempt | undefined {
    const s = this.#sessions.get(l.sessionId);
    if (s === undefined || s.leaseOwner !== l.owner || s.leaseEpoch !== l.epoch) return undefined;
    return s.attempts.get(attemptKey(a.turn, a.attempt));
  }

  #touch(s: MemSession, now: number): void {
    s.rev += 1;
    s.updatedAt = now;
  }

  #push(s: MemSession, a: store.TurnAttempt, events: readonly store.NewSessionEvent[], now: number): void {
    for (const e of events) s.events.push({ seq: s.events.length + 1, turn: a.turn, attempt: a.attempt, kind: e.kind, body: e.body, at: now });
  }

  #status(s: MemSession, e: MemEvent): store.SessionEventStatus {
    const rec = s.attempts.get(attemptKey(e.turn, e.attempt)) as MemAttempt;
    if (rec.status === 'started') return 'pending';
    if (rec.status === 'aborted') return 'aborted';
    // Superseded when a rollback after the commit went back before the event's turn.
    const rb = s.rollbacks;
    if (rb.length === 0) return 'committed';
    let lo = 0;
    let hi = rb.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rb[mid].rev > rec.endRev) hi = mid;
      else lo = mid + 1;
    }
    if (lo === rb.length) return 'committed';
    let later = s.laterMin;
    if (later === undefined) {
      later = new Array<number>(rb.length);
      let min = Infinity;
      for (let i = rb.length - 1; i >= 0; i--) later[i] = min = Math.min(min, rb[i].toTurn);
      s.laterMin = later;
    }
    return later[lo] < e.turn ? 'superseded' : 'committed';
  }

  #stored(e: MemEvent, status: store.SessionEventStatus): store.StoredSessionEvent {
    return { seq: e.seq, turn: e.turn, attempt: e.attempt, kind: e.kind, body: e.body, status, at: new Date(e.at) };
  }

  #info(s: MemSession): store.SessionInfo {
    const now = this.#clock();
    const live = s.leaseOwner !== undefined && s.leaseExpiresAt > now;
    return {
      sessionId: s.sessionId,
      agentId: s.agentId,
      meta: s.meta,
      createdAt: new Date(s.createdAt),
      updatedAt: new Date(s.updatedAt),
      committedTurn: s.committedTurn,
      lastSeq: s.events.length,
      lease: live
        ? { owner: s.leaseOwner as string, epoch: s.leaseEpoch, remainingMs: s.leaseExpiresAt - now, expiresAt: new Date(s.leaseExpiresAt) }
        : undefined,
    };
  }

  #checkpointInfo(cp: MemCheckpoint): store.CheckpointInfo {
    return cp.label === undefined
      ? { turn: cp.turn, pinned: cp.pinned, createdAt: new Date(cp.createdAt) }
      : { turn: cp.turn, label: cp.label, pinned: cp.pinned, createdAt: new Date(cp.createdAt) };
  }

  #checkpointList(s: MemSession): store.CheckpointInfo[] {
    return [...s.checkpoints.values()].sort((a, b) => a.turn - b.turn).map((cp) => this.#checkpointInfo(cp));
  }
}
