/**
 * @internal The router of one `SessionsPlugin`: how this process hears about the other
 * processes sharing its store. It subscribes to the store's wake-ups (`store.watch`: a
 * PostgreSQL LISTEN connection, or in-process delivery), or polls the store every `pollMs`
 * when wake-ups can only be polled, and:
 *
 * - wakes the waits of this process (`open`/`resume` with `waitMs`) when a session they
 *   wait for is released;
 * - reads the requests addressed to this process's lease owner (handoff requests and
 *   cancels, `store.requests(owner)`) and hands each to the live session it is about.
 *
 * It starts with the first session published or the first wait, and stops at the plugin's
 * cleanup. Every store call it makes is bounded like the others; a failure is retried at the
 * next wake-up or poll, never thrown.
 */
import { errorText } from '../../context/token.js';
import type { LiveRuntime } from '../runtime.js';
import type { HolderRequest, StoreWake, StoreWatch } from '../store/contract.js';

/** How often requests are polled when the store can not wake this process (and its default `pollMs`). */
const DEFAULT_POLL_MS = 250;
/** How long a wait sleeps at most between two tries when wake-ups are notified (a lease may expire unnoticed). */
const NOTIFIED_SAFETY_MS = 1_000;

/** What the router needs of a live durable session (a `DurableSession`, through its internal hooks). */
export interface RoutedSession {
  readonly id: string;
  readonly isDisposed: boolean;
  /** @internal From the start of its close until it has ended. */
  readonly _closing: boolean;
  /** @internal Settles once it is disposed, its lease given up and its id free. */
  _whenEnded(): Promise<void>;
  /** @internal A handoff request with its deadline. */
  _requestHandoff(until: number): void;
  /** @internal Cancels the turn in flight. */
  _cancel(reason: string, attempt?: { readonly turn: number; readonly attempt: number }): boolean;
}

const routers = new WeakMap<LiveRuntime, Router>();

/** @internal The router of `rt` (made on first use). */
export function routerOf(rt: LiveRuntime): Router {
  let r = routers.get(rt);
  if (r === undefined) {
    r = new Router(rt);
    routers.set(rt, r);
  }
  return r;
}

/** @internal Stops the router of `rt`, if it was made (the plugin's cleanup). */
export function stopRouter(rt: LiveRuntime): Promise<void> {
  const r = routers.get(rt);
  if (r === undefined) return Promise.resolve();
  routers.delete(rt);
  return r.stop();
}

/** @internal See the module's comment. */
export class Router {
  readonly #rt: LiveRuntime;
  #watch: StoreWatch | undefined;
  #started = false;
  #stopped = false;
  /** The waits of this process, by session id: each is woken once. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** The poll timer of the requests (unref'd: polling never keeps the process alive). */
  #poll: ReturnType<typeof setTimeout> | undefined;
  /** A read of the requests is in flight; `#again`: another was asked for meanwhile. */
  #reading = false;
  #again = false;
  /** The retry of a read of the requests that failed (unref'd). */
  #retryRead: ReturnType<typeof setTimeout> | undefined;
  #warned = false;
  /** The sessions published in this process, by id, until they have ended (the registry forgets them when their disposal starts). */
  readonly #tracked = new Map<string, RoutedSession>();

  constructor(rt: LiveRuntime) {
    this.#rt = rt;
  }

  /** True when the store wakes this process as things happen (no polling needed for releases). */
  get notified(): boolean {
    return this.#watch?.mode === 'notify';
  }

  /** How long a wait sleeps at most before it tries again. */
  get retryMs(): number {
    return this.notified ? NOTIFIED_SAFETY_MS : this.pollMs;
  }

  /** The store's polling interval. */
  get pollMs(): number {
    return this.#watch?.pollMs ?? DEFAULT_POLL_MS;
  }

  /** A session was published in this process: requests addressed to it must be heard. */
  held(session: RoutedSession): void {
    this.#tracked.set(session.id, session);
    void session._whenEnded().then(() => {
      if (this.#tracked.get(session.id) === session) this.#tracked.delete(session.id);
    });
    this.#start();
    if (!this.notified) this.#armPoll();
  }

  /** The session of `sessionId` of this process whose disposal started and has not ended (it still gives its lease up), if any. */
  ending(sessionId: string): RoutedSession | undefined {
    const s = this.#tracked.get(sessionId);
    return s !== undefined && s.isDisposed ? s : undefined;
  }

  /**
   * Sleeps until a release of `sessionId` is heard or `ms` passed (a ref'd timer: the
   * caller waits for it). Never rejects.
   */
  sleep(sessionId: string, ms: number): Promise<void> {
    this.#start();
    return new Promise<void>((resolve) => {
      let set = this.#waiters.get(sessionId);
      if (set === undefined) this.#waiters.set(sessionId, (set = new Set()));
      const waiters = set;
      const wake = (): void => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.#waiters.get(sessionId) === waiters) this.#waiters.delete(sessionId);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(1, Math.ceil(ms)));
      waiters.add(wake);
    });
  }

  /** Asks the store to wake whoever holds `sessionId` (no-op on a store that can not). Never rejects. */
  async askHandoff(sessionId: string, until: number): Promise<boolean> {
    const store = this.#rt.store;
    if (!store.routes) return false;
    try {
      return await store.requestHandoff(sessionId, { owner: this.#rt.owner, until: new Date(until) });
    } catch {
      // A handoff request is a courtesy: the wait goes on without it.
      return false;
    }
  }

  /** Stops listening and polling (idempotent). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#poll !== undefined) clearTimeout(this.#poll);
    this.#poll = undefined;
    clearTimeout(this.#retryRead);
    this.#retryRead = undefined;
    for (const set of [...this.#waiters.values()]) for (const wake of [...set]) wake();
    const watch = this.#watch;
    this.#watch = undefined;
    if (watch !== undefined) await watch.close().catch(() => undefined);
  }

  #start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const inner = this.#rt.store.inner;
    if (typeof inner.watch !== 'function') return;
    try {
      this.#watch = inner.watch(
        (wake) => this.#onWake(wake),
        (err) => this.#report(err),
      );
    } catch (err) {
      this.#report(err);
    }
    // Requests recorded before this subscription were not heard: read them once.
    if (this.notified) void this.#read();
  }

  #onWake(wake: StoreWake): void {
    if (this.#stopped) return;
    if (wake.kind === 'release') {
      this.#wakeWaiters(wake.sessionId);
      return;
    }
    if (wake.kind === 'resync') {
      for (const id of [...this.#waiters.keys()]) this.#wakeWaiters(id);
      void this.#read();
      return;
    }
    if (wake.owner === this.#rt.owner) void this.#read();
  }

  #wakeWaiters(sessionId: string): void {
    const set = this.#waiters.get(sessionId);
    if (set === undefined) return;
    for (const wake of [...set]) wake();
  }

  /** Polls the requests every `pollMs` while this process holds a session. */
  #armPoll(): void {
    if (this.#poll !== undefined || this.#stopped || !this.#rt.store.routes) return;
    this.#poll = setTimeout(() => {
      this.#poll = undefined;
      if (this.#stopped || this.#rt.registry.list().length === 0) return;
      void this.#read().finally(() => {
        if (!this.notified) this.#armPoll();
      });
    }, this.pollMs);
    this.#poll.unref();
  }

  /** Reads the requests addressed to this owner and hands each to its live session (one read at a time). */
  async #read(): Promise<void> {
    const rt = this.#rt;
    if (!rt.store.routes) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    try {
      do {
        this.#again = false;
        let requests: readonly HolderRequest[];
        try {
          requests = await rt.store.requests(rt.owner);
        } catch {
          // Read again soon: on a store that notifies, no other wake-up may come for these requests.
          this.#readLater();
          return;
        }
        for (const r of requests) this.#deliver(r);
      } while (this.#again && !this.#stopped);
    } finally {
      this.#reading = false;
    }
  }

  /** Reads the requests again after `pollMs`, while this process holds a session (one retry pending at a time). */
  #readLater(): void {
    if (this.#retryRead !== undefined || this.#stopped) return;
    this.#retryRead = setTimeout(() => {
      this.#retryRead = undefined;
      if (!this.#stopped && this.#rt.registry.list().length > 0) void this.#read();
    }, this.pollMs);
    this.#retryRead.unref();
  }

  #deliver(r: HolderRequest): void {
    if (r.kind === 'handoff') {
      // A session still being opened here remembers the request and honours it once it is
      // published and its grace is over (nothing reads this request again on a notifying store).
      const held = this.#rt.registry.liveHolder(r.sessionId) as RoutedSession | undefined;
      if (held !== undefined) held._requestHandoff(r.until.getTime());
      return;
    }
    const live = this.#rt.registry.get(r.sessionId) as RoutedSession | undefined;
    if (live === undefined || live.isDisposed) return;
    live._cancel(r.reason, { turn: r.turn, attempt: r.attempt });
  }

  #report(err: unknown): void {
    // The subscription fell back to polling: requests of the sessions held here are polled.
    if (this.#rt.registry.list().length > 0) this.#armPoll();
    if (this.#warned) return;
    this.#warned = true;
    process.emitWarning(
      `SessionsPlugin owner "${this.#rt.owner}": the store's wake-ups failed (${errorText(err)}); waits, handoff requests and cancels are polled every ${this.pollMs} ms instead.`,
      { type: 'PolestarWarning', code: 'POLESTAR_WAKEUPS_POLLED' },
    );
  }
}
