/**
 * `SessionsPlugin`: installs `Sessions` over one `SessionStore`.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { ServerError } from '../context/errors.js';
import type { Plugin } from '../context/plugin.js';
import type { Server } from '../context/server.js';
import { describeValue } from '../context/token.js';
import { definePlugin } from '../registry/define-plugin.js';
import { checkMs } from '../util/check-ms.js';
import { checkName } from './store/input.js';
import { MemorySessionStore } from './store/memory.js';
import { SessionRegistry, liveRuntime, type InterruptedHandler, type SessionsRuntime } from './runtime.js';
import { stopRouter } from './routing/router.js';
import { checkSerializers, type SerializerEntry } from './serializers.js';
import { Sessions } from './sessions.js';
import type { SessionStore } from './store/contract.js';
import { applyStoreBounds } from './store/store-bound.js';
import { storeChannel, trace } from '../observability/channels.js';

const sessions = definePlugin<SessionsRuntime, Sessions>({
  plugin: 'SessionsPlugin',
  token: Sessions,
  view: (rt) => (ctx) => new Sessions(rt, ctx),
  leaks: (rt) => rt.registry.leaks(),
  installedBy: 'server.addPlugins(new AgentsPlugin(), new SessionsPlugin())',
});

/** @internal The live durable sessions of `server`, `undefined` when `SessionsPlugin` was not added (read by `inspect`). */
export function sessionRegistryOf(server: Server): SessionRegistry | undefined {
  return sessions.of(server)?.registry;
}

/** Options of {@link SessionsPlugin}. */
export interface SessionsPluginOptions {
  /** Where sessions live; a `MemorySessionStore` (made and closed by the plugin) by default. A store given here is the caller's to close. */
  readonly store?: SessionStore;
  /** Which locals persist: `[token, { key, version, scope, serialize, deserialize }]` pairs. */
  readonly serializers?: Iterable<SerializerEntry>;
  /** Lease time to live in milliseconds (default 30,000); the lease is renewed every `leaseTtlMs / 3`. */
  readonly leaseTtlMs?: number;
  /** Called by `resume` for a turn a crash interrupted; its messages are committed as the next turn before publication. */
  readonly interrupted?: InterruptedHandler;
  /** What `resume` does with a persisted local that has no serializer: `'fail'` (`UNKNOWN_LOCAL`, default) or `'drop'` (skip it). */
  readonly unknownLocals?: 'fail' | 'drop';
  /** How many of the last turns' checkpoints are kept besides checkpoint 0 and the pinned ones (default 20). */
  readonly keepCheckpoints?: number;
  /**
   * The bound on every store call, in milliseconds (default 10,000). A call that does not
   * answer in time rejects with `STORE_ERROR` (a lock wait with `STORE_LOCKED`); a commit
   * whose outcome is then unknown is found out before `turn()` settles, or reported as
   * `COMMIT_UNKNOWN`. Nothing the plugin does waits on the store without this bound.
   */
  readonly storeTimeoutMs?: number;
  /**
   * A stable lease-owner id for this process (default `host:pid:random`, new at every
   * start). A process started with the owner id of a dead one takes over the leases that
   * owner held at once, instead of waiting `leaseTtlMs` for them to expire (the old
   * incarnation's late writes are fenced). Two live processes must never share an owner
   * id: give each instance its own, e.g. the pod or host name (as Kafka's static
   * membership does). A non-empty string of at most 1024 characters.
   */
  readonly owner?: string;
  /**
   * What a process does when another one waits for a session it holds (`open` or `resume`
   * with `waitMs`): `'idle'` (default) asks the holder to release it, and a holder closes
   * such a session at once when it has no turn in flight, or right after that turn (unless
   * the session is pinned: from its open until its first turn settles or `handoffGraceMs`
   * passed, and while a turn is in flight or queued). `'never'`: a waiter does not ask, and
   * a holder keeps the session until it closes or loses its lease. `open({ handoff })`
   * overrides it for one session.
   */
  readonly handoff?: 'idle' | 'never';
  /** How long a freshly opened session ignores handoff requests unless its first turn settled earlier (default 2,000 ms). */
  readonly handoffGraceMs?: number;
  /**
   * Closes a session that ran no turn for this long (counted from the end of its last
   * turn, or from its open), in milliseconds; by default sessions stay open until closed.
   * A `turn()` on a session closed this way rejects with `SESSION_CLOSED`.
   */
  readonly idleCloseMs?: number;
}

const DEFAULT_LEASE_TTL_MS = 30_000;
const DEFAULT_KEEP = 20;
const DEFAULT_STORE_TIMEOUT_MS = 10_000;
const DEFAULT_HANDOFF_GRACE_MS = 2_000;

/** @internal Re-exported for the modules that check their own durations. */
export { checkMs };


/**
 * Installs `Sessions` (`ctx.get(Sessions)`, a view bound to `ctx`) backed by one store,
 * with one lease owner id per server. Needs `AgentsPlugin`: `finish()` rejects naming it
 * otherwise. The options are read and validated once, here (a `TypeError` names the bad
 * one).
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin } from 'polestar-di';
 *
 * const store = new MemorySessionStore(); // given, so it is ours to close
 * const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, leaseTtlMs: 10_000 }));
 * await server.finish();
 * await server.createContext().get(Sessions).create({ agentId: 'a', sessionId: 's' });
 * await server.dispose(); // disposes the session and releases its lease
 * assert.equal((await store.load('s')).info.lease, undefined);
 * await store.close();
 *
 * await assert.rejects(new Server().addPlugins(new SessionsPlugin()).finish(), /needs AgentsPlugin/);
 * ```
 */
export class SessionsPlugin implements Plugin {
  /** The plugin id: `sessions`. */
  readonly id = 'sessions';
  readonly #store: SessionStore | undefined;
  readonly #options: Omit<SessionsRuntime, 'store' | 'owner' | 'incarnation' | 'registry'>;
  readonly #owner: string | undefined;
  #made: SessionStore | undefined;
  #server: Server | undefined;

  /** @param options - see {@link SessionsPluginOptions}. */
  constructor(options: SessionsPluginOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`new SessionsPlugin(options): options must be an object, got ${describeValue(options)}.`);
    }
    const { store, serializers, leaseTtlMs, interrupted, unknownLocals, keepCheckpoints, storeTimeoutMs, owner, handoff, handoffGraceMs, idleCloseMs } = options;
    if (store !== undefined && (store === null || typeof store !== 'object' || typeof store.acquire !== 'function' || typeof store.commit !== 'function')) {
      throw new TypeError(`new SessionsPlugin({ store }): store must implement SessionStore (e.g. new MemorySessionStore()), got ${describeValue(store)}.`);
    }
    const ttl = leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl < 3 || ttl > 2 ** 31 - 1) {
      throw new TypeError(`new SessionsPlugin({ leaseTtlMs }): leaseTtlMs must be an integer of milliseconds from 3 to 2^31 - 1, got ${describeValue(ttl)}.`);
    }
    if (interrupted !== undefined && typeof interrupted !== 'function') {
      throw new TypeError(`new SessionsPlugin({ interrupted }): interrupted must be a function (turn, session) => ChatMessage[], got ${describeValue(interrupted)}.`);
    }
    const unknown = unknownLocals ?? 'fail';
    if (unknown !== 'fail' && unknown !== 'drop') {
      throw new TypeError(`new SessionsPlugin({ unknownLocals }): unknownLocals must be 'fail' or 'drop', got ${describeValue(unknown)}.`);
    }
    const keep = keepCheckpoints ?? DEFAULT_KEEP;
    if (typeof keep !== 'number' || !Number.isSafeInteger(keep) || keep < 0) {
      throw new TypeError(`new SessionsPlugin({ keepCheckpoints }): keepCheckpoints must be an integer >= 0, got ${describeValue(keep)}.`);
    }
    const bound = storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    if (typeof bound !== 'number' || !Number.isSafeInteger(bound) || bound < 1 || bound > 2 ** 31 - 1) {
      throw new TypeError(`new SessionsPlugin({ storeTimeoutMs }): storeTimeoutMs must be an integer of milliseconds from 1 to 2^31 - 1, got ${describeValue(bound)}.`);
    }
    if (owner !== undefined) {
      if (typeof owner !== 'string') throw new TypeError(`new SessionsPlugin({ owner }): owner must be a string (e.g. the pod or host name), got ${describeValue(owner)}.`);
      checkName(owner, 'new SessionsPlugin({ owner }): owner');
    }
    const handoffMode = handoff ?? 'idle';
    if (handoffMode !== 'idle' && handoffMode !== 'never') {
      throw new TypeError(`new SessionsPlugin({ handoff }): handoff must be 'idle' or 'never', got ${describeValue(handoffMode)}.`);
    }
    const grace = checkMs(handoffGraceMs ?? DEFAULT_HANDOFF_GRACE_MS, 'new SessionsPlugin({ handoffGraceMs }): handoffGraceMs');
    const idle = idleCloseMs === undefined ? undefined : checkMs(idleCloseMs, 'new SessionsPlugin({ idleCloseMs }): idleCloseMs');
    this.#owner = owner;
    this.#store = store;
    this.#options = Object.freeze({
      storeTimeoutMs: bound,
      serializers: checkSerializers(serializers),
      leaseTtlMs: ttl,
      keepCheckpoints: keep,
      unknownLocals: unknown,
      interrupted,
      handoff: handoffMode,
      handoffGraceMs: grace,
      idleCloseMs: idle,
    });
  }

  /** Installs `Sessions` (and the shared `Events`); refuses a server without `AgentsPlugin`. */
  build(server: Server): void {
    if (!server.hasPlugin('agents')) {
      throw new ServerError(
        'SessionsPlugin needs AgentsPlugin (each durable session creates its own agent): call server.addPlugins(new AgentsPlugin(), new SessionsPlugin(...)) before finish().',
      );
    }
    this.#server = server;
    sessions.install(server, () => {
      const store = this.#store ?? (this.#made = new MemorySessionStore());
      const rt: SessionsRuntime = Object.freeze({
        ...this.#options,
        store,
        registry: new SessionRegistry(),
        owner: this.#owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
        incarnation: randomUUID(),
      });
      applyStoreBounds(store, { callTimeoutMs: rt.storeTimeoutMs, leaseTtlMs: rt.leaseTtlMs });
      return rt;
    });
  }

  /** Stops hearing the store's wake-ups, and closes the store when the plugin made it (a store given in the options is the caller's). */
  async cleanup(): Promise<void> {
    // Stop hearing the store's wake-ups (the LISTEN connection, the polls) first.
    const rt = this.#server === undefined ? undefined : sessions.of(this.#server);
    if (rt !== undefined) await stopRouter(liveRuntime(rt));
    const made = this.#made;
    this.#made = undefined;
    if (made === undefined) return;
    // Traced like every other store call the plugin makes (the views' calls go through the
    // bounded store; this one is the plugin's own, at server disposal).
    if (storeChannel.hasSubscribers) await trace(storeChannel, { op: 'close' }, undefined, () => made.close());
    else await made.close();
  }
}
