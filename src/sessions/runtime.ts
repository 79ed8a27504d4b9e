/**
 * @internal What one `SessionsPlugin` shares between its `Sessions` views and the durable
 * sessions they open: the store, the serializers, the options, the lease owner id, and the
 * registry of the sessions live (or loading) in this process.
 */
import type { ChatMessage } from '../conversation/chat-message.js';
import type { Session } from '../conversation/session.js';
import type { JsonValue } from '../util/lossless-json.js';
import { IdRegistry } from '../registry/id-registry.js';
import { BoundedStore } from './store/bounded-call.js';
import { SessionError, isSessionError } from './errors.js';
import type { SerializerSet } from './serializers.js';
import type { SessionEventStatus, SessionStore } from './store/contract.js';

/** One stored event of a session, as `sessions.events()` and `interruptedTurns` give it. */
export interface SessionEventRecord {
  /** Position in the session's log: contiguous from 1. */
  readonly seq: number;
  /** The turn number of the attempt it belongs to. */
  readonly turn: number;
  /** What happened: `history/append`, `history/replace`, or a `TurnLog` kind. */
  readonly kind: string;
  /** The body, exactly as written. */
  readonly body: JsonValue;
  /** `committed`, `aborted`, `superseded` (after a rollback) or `pending` (flushed, turn not ended yet). */
  readonly status: SessionEventStatus;
}

/** A turn that was started and never ended (its process crashed or lost its lease), found by `resume`. */
export interface InterruptedTurn {
  /** The turn number it would have committed as (the next commit reuses it). */
  readonly turn: number;
  /** When it started, on the store's clock. */
  readonly startedAt: Date;
  /** What it flushed before it stopped (now `aborted`): history changes and `TurnLog` events. */
  readonly events: readonly SessionEventRecord[];
}

/**
 * Called by `resume` for a turn a crash interrupted; the messages it returns are
 * committed as the next turn before the session is published (e.g. a system message
 * telling the model that a tool call's outcome is unknown).
 */
export type InterruptedHandler = (turn: InterruptedTurn, session: Session) => readonly ChatMessage[] | Promise<readonly ChatMessage[]>;

/** @internal What the registry of durable sessions holds: a session holding its id. */
export interface RegistryEntry {
  readonly id: string;
  readonly isDisposed: boolean;
  /** @internal Published: `sessions.get(id)` returns it (a top-level `@internal` keeps its members, so this one is tagged too). */
  readonly _published: boolean;
}

/** @internal The live durable sessions of one plugin, by session id: loading (reserved) or published. */
export class SessionRegistry<S extends RegistryEntry = RegistryEntry> extends IdRegistry<S> {
  /** A published session is live until its disposal starts. */
  protected isPublished(s: S): boolean {
    return s._published && !s.isDisposed;
  }

  /** `durable session "s-1" (loading)`. */
  protected describe(s: S): string {
    return `durable session "${s.id}"${s._published ? '' : ' (loading)'}`;
  }
}

/** @internal */
export interface SessionsRuntime {
  readonly store: SessionStore;
  readonly serializers: SerializerSet;
  readonly leaseTtlMs: number;
  readonly keepCheckpoints: number;
  readonly unknownLocals: 'fail' | 'drop';
  readonly interrupted: InterruptedHandler | undefined;
  /** This server's lease owner id (`SessionsPlugin({ owner })`, or `host:pid:random`). */
  readonly owner: string;
  /** This plugin instance's incarnation of `owner` (random, one per `SessionsPlugin` build). */
  readonly incarnation: string;
  /** `SessionsPlugin({ storeTimeoutMs })`: the bound on every store call. */
  readonly storeTimeoutMs: number;
  /** `SessionsPlugin({ handoff })`: the default of each session's handoff policy. */
  readonly handoff: 'idle' | 'never';
  /** `SessionsPlugin({ handoffGraceMs })`: how long a freshly opened session is pinned. */
  readonly handoffGraceMs: number;
  /** `SessionsPlugin({ idleCloseMs })`, or `undefined` (sessions never close by themselves). */
  readonly idleCloseMs: number | undefined;
  readonly registry: SessionRegistry<any>;
}

/**
 * @internal Whether this plugin's owner id was taken over by another incarnation (another
 * live process, or another server of this one, started with the same `owner`). Reported
 * once with a process warning; from then on this plugin opens no session under that id.
 */
export class OwnerState {
  readonly #owner: string;
  #reused: SessionError | undefined;

  constructor(owner: string) {
    this.#owner = owner;
  }

  /** Looks at a `LEASE_LOST`: one caused by another incarnation of our owner id is reported (once) and remembered. */
  observe(err: unknown): void {
    if (this.#reused !== undefined || !isSessionError(err, 'LEASE_LOST')) return;
    const cause = err.cause as { readonly reason?: unknown } | null | undefined;
    if (cause === null || typeof cause !== 'object' || cause.reason !== 'owner-reused') return;
    this.#reused = err;
    process.emitWarning(
      `SessionsPlugin owner "${this.#owner}": another incarnation of this owner id took over the lease of session "${err.sessionId ?? '?'}", ` +
        'so two live processes (or two servers) share the owner id. This server opens no more sessions under it: give each process its own SessionsPlugin({ owner }).',
      { type: 'PolestarWarning', code: 'POLESTAR_OWNER_REUSED' },
    );
  }

  /** The `LEASE_LOST` refusing an `open`/`resume`/`create` once the owner id was taken over; `undefined` before. */
  refusal(call: string, sessionId: string): SessionError | undefined {
    const reused = this.#reused;
    if (reused === undefined) return undefined;
    return new SessionError(
      'LEASE_LOST',
      `${call}({ sessionId: "${sessionId}" }): refused: another incarnation of owner "${this.#owner}" took over this server's leases ` +
        '(two live processes share the owner id); give each process its own SessionsPlugin({ owner }) and restart this one.',
      { sessionId, cause: reused },
    );
  }
}

/** @internal The runtime as the views and durable sessions use it: the store bounded, the owner watched. */
export interface LiveRuntime extends SessionsRuntime {
  readonly store: BoundedStore;
  readonly owners: OwnerState;
}

const live = new WeakMap<SessionsRuntime, LiveRuntime>();

/** @internal The one {@link LiveRuntime} of a plugin's runtime. */
export function liveRuntime(rt: SessionsRuntime): LiveRuntime {
  if (rt.store instanceof BoundedStore && 'owners' in rt) return rt as LiveRuntime;
  let l = live.get(rt);
  if (l === undefined) {
    l = Object.freeze({
      ...rt,
      store: new BoundedStore(rt.store, { timeoutMs: rt.storeTimeoutMs, incarnation: rt.incarnation }),
      owners: new OwnerState(rt.owner),
    });
    live.set(rt, l);
  }
  return l;
}
