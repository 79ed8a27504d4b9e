/**
 * @internal The state of one durable session, shared by the phases that run it (open,
 * turn, pending outcomes, rollback, lease, close): what the session is (loading, open,
 * closing, disposed), what it holds (agent, session, lease), what is committed, and what
 * this process knows of the store's side between turns (the ledger). `DurableSession` is
 * the public face over one `DurableState`; the phase modules are functions taking it.
 */
import type { Agent } from '../../agents/agent.js';
import type { ConversationHistory, HistoryMark, HistoryObserver } from '../../conversation/conversation-history.js';
import type { Session } from '../../conversation/session.js';
import type { SessionEventInfo, SessionLeaseLostInfo } from '../events.js';
import { eventBusOf } from '../../events/events.js';
import type { JsonValue } from '../../util/lossless-json.js';
import { SessionError } from '../errors.js';
import type { InterruptedTurn, LiveRuntime, RegistryEntry } from '../runtime.js';
import type { LocalHomes, RestoredLocal } from '../serializers.js';
import type { AttemptStatus, BegunAttempt, CommitInput, Lease, LoadedSession, NewSessionEvent, PersistedLocal } from '../store/contract.js';
import type { TurnAbort } from './abort.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { TurnQueue } from './queue.js';
import type { TurnState } from './turn-state.js';

/** @internal The names of the events a durable session emits (scoped to its agent). */
export type SessionEventName =
  | 'session/created'
  | 'session/resumed'
  | 'session/turn-committed'
  | 'session/rolled-back'
  | 'session/lease-lost'
  | 'session/disposed';

/** @internal What `create` / `resume` read from their options. */
export interface OpenSnapshot {
  readonly agentId: string;
  readonly sessionId: string;
  readonly meta: JsonValue;
  /** `open({ handoff })`: this session's handoff policy; the plugin's `handoff` when absent. */
  readonly handoff?: 'idle' | 'never';
  /** The call the application made (`Sessions.open`, `Sessions.resume`, `Sessions.create`), for messages. */
  readonly call?: string;
}

/** @internal What holds the turn slot: a turn, a rollback or a checkpoint. */
export type SlotKind = 'turn' | 'rollback' | 'checkpoint';

/** @internal Why a session closed: `close()` (or `[Symbol.asyncDispose]`), a handoff request, or `idleCloseMs`. */
export type ClosedBy = 'handoff' | 'idle' | 'close';

/** @internal Where a durable session is in its life. */
export type State = 'loading' | 'open' | 'closing' | 'disposed';

/** @internal A commit whose outcome is not known: the live history and locals are kept as the turn left them. */
export interface PendingCommit {
  readonly kind: 'commit-unknown';
  /** The attempt whose commit was sent. */
  readonly attempt: BegunAttempt;
  /** What was sent (repeated, idempotently, by a store without `attemptStatus`). */
  readonly input: CommitInput;
  /** The `TurnLog` events to write with an aborted record, if the attempt is found open. */
  readonly log: readonly NewSessionEvent[];
  /** Why the outcome is unknown (the commit's error). */
  readonly cause: unknown;
}

/** @internal What this process knows of the store's side of the session between turns. */
export type Ledger =
  /** The store agrees with `committedTurn`, and no attempt of this lease is open. */
  | { readonly kind: 'settled' }
  /**
   * A `begin` or `abort` whose outcome is unknown may have left an attempt of this lease
   * open: the next turn's `begin` supersedes it (`replaceOpen`), a rollback aborts it
   * first (found with `load`, so its number need not be kept).
   */
  | { readonly kind: 'maybe-open' }
  | PendingCommit
  /**
   * The pending commit's outcome is being found out, and the live session made to agree
   * (advanced, or put back): a turn or a rollback waits for `done` (shared by `turn()`,
   * `rollback()` and `resolvePending()`).
   */
  | { readonly kind: 'resolving'; readonly pending: PendingCommit; readonly done: Promise<Found> };

/** @internal How a pending commit was found to have ended. */
export type Found =
  | { readonly outcome: 'committed' }
  | { readonly outcome: 'not-committed'; readonly status: AttemptStatus }
  /** Still not known (the store stays unreachable, or refused the question). */
  | { readonly outcome: 'unknown'; readonly error: unknown };

/** @internal A {@link Found} that is known. */
export type KnownFound = Exclude<Found, { readonly outcome: 'unknown' }>;

/** @internal The ledger when the store agrees with this process. */
export const SETTLED: Ledger = Object.freeze({ kind: 'settled' });
/** @internal The ledger when an attempt of this lease may have been left open. */
export const MAYBE_OPEN: Ledger = Object.freeze({ kind: 'maybe-open' });
/** @internal What `resolvePending()` answers when no commit's outcome was ever unknown. */
const NEVER_PENDING: KnownFound = Object.freeze({ outcome: 'committed' });

/** @internal Does nothing (the rejection handler of work whose failure is reported elsewhere). */
export const noop = (): void => undefined;
/** @internal The empty list every empty field shares. */
export const EMPTY: readonly never[] = Object.freeze([]);

/** @internal The state of one durable session (see the module's comment). */
export class DurableState {
  /** The session id. */
  readonly id: string;
  /** The public session this is the state of (the entry of the plugin's registry). */
  readonly handle: RegistryEntry;
  /** The plugin's runtime: the bounded store, the serializers, the options. */
  readonly rt: LiveRuntime;
  /** Whether this session was opened by `create` or by `resume`. */
  readonly mode: 'create' | 'resume';
  /** The session's own agent, once `beforeSetup` ran. */
  agent: Agent | undefined;
  /** The session, once `prepare` made it. */
  session: Session | undefined;
  /** The application's metadata. */
  meta: JsonValue;
  state: State = 'loading';
  /** `sessions.get(id)` returns it. */
  published = false;
  /** The create transaction resolved: the session is the caller's. */
  settled = false;
  /** `store.create` was called (its row may exist though its reply was lost). */
  createSent = false;
  /** The agent's disposal started (the teardown ran). */
  tornDown = false;
  lease: Lease | undefined;
  keeper: LeaseKeeper | undefined;
  /** The `LEASE_LOST` that ended the lease, once lost. */
  lost: SessionError | undefined;
  committedTurn = 0;
  /** The history replayed by `resume`, until `prepare` hands it to the session. */
  replayed: ConversationHistory | undefined;
  /** The history as of the last committed turn: an O(1) mark, not a copy (so a commit costs no O(n)). */
  committedMark: HistoryMark | undefined;
  committedLocals: readonly PersistedLocal[] = EMPTY;
  interrupted: readonly InterruptedTurn[] = EMPTY;
  /** What `resume` loaded, until `prepare`. */
  loaded: LoadedSession | undefined;
  /** The session-scope locals `resume` deserialized before `setup`, inserted by `prepare` once the session exists. */
  sessionRestored: readonly RestoredLocal[] = EMPTY;
  /** The turn in flight, while its function runs. */
  turn: TurnState | undefined;
  /** What holds the turn slot, while something does. */
  busy: SlotKind | undefined;
  /** Settles when the turn, rollback or checkpoint in flight has (what `close()` drains). */
  busyDone: Promise<void> | undefined;
  /** The turn slot and its FIFO queue (one per durable agent: today the session's own). */
  readonly queue = new TurnQueue<DurableState>();
  /** The abort state of the turn holding the slot (its signal, `_cancel`). */
  current: TurnAbort | undefined;
  /** Why the session closed, once it started closing (`undefined` for a disposal or a lost lease). */
  closedBy: ClosedBy | undefined;
  /** This session's handoff policy (`open({ handoff })`, else the plugin's). */
  readonly handoff: 'idle' | 'never';
  /** The call that opened the session, for messages (`Sessions.open` for both paths of `open`). */
  readonly call: string;
  /** When the session was published (`performance.now()`), for the handoff grace; `undefined` while loading. */
  openedAt: number | undefined;
  /** True once a `turn()` settled (the handoff grace is over then). */
  firstTurnSettled = false;
  /** The deadline (`Date.now()`-based) of the handoff request remembered while pinned. */
  handoffUntil: number | undefined;
  /** The timer that ends the handoff grace while a request is remembered. */
  graceTimer: ReturnType<typeof setTimeout> | undefined;
  /** The idle timer (`idleCloseMs`): checks {@link DurableState.lastActive} when it fires. */
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the slot was last given up, or the session published (`performance.now()`). */
  lastActive = 0;
  /** True once the session is disposed and its lease given up (what `_whenEnded()` waits for). */
  ended = false;
  /** Settles once {@link DurableState.ended}. */
  readonly whenEnded: Promise<void>;
  #endedNow: () => void = noop;
  /** A rollback is putting the history back: the observer lets it through. */
  restoring = false;
  /** The memoized `close()`. */
  closing: Promise<void> | undefined;
  /** What is known of the store's side between turns: settled, an attempt maybe left open, a commit pending, or being resolved. */
  ledger: Ledger = SETTLED;
  /** How the last commit whose outcome was unknown ended, once found out. */
  lastFound: KnownFound = NEVER_PENDING;

  constructor(handle: RegistryEntry, rt: LiveRuntime, mode: 'create' | 'resume', open: OpenSnapshot) {
    this.handle = handle;
    this.rt = rt;
    this.mode = mode;
    this.id = open.sessionId;
    this.meta = open.meta;
    this.handoff = open.handoff ?? rt.handoff;
    this.call = open.call ?? (mode === 'create' ? 'Sessions.create' : 'Sessions.resume');
    this.whenEnded = new Promise<void>((resolve) => {
      this.#endedNow = resolve;
    });
  }

  /** Marks the session ended (disposed, its lease given up): `_whenEnded()` settles. Idempotent. */
  markEnded(): void {
    this.ended = true;
    this.#endedNow();
  }

  /** The history's hook: it changes only inside a turn, and each change is buffered with the turn. */
  readonly observer: HistoryObserver = {
    check: () => {
      if (this.restoring) return;
      const t = this.turn;
      if (t === undefined || !t.accepting) {
        throw new TypeError(
          `session "${this.id}": a durable history changes only inside turn(); append or replace from the turn function: durableSession.turn((turnCtx, session) => session.history.append(message)).`,
        );
      }
    },
    changed: (c) => {
      if (this.restoring) return;
      const t = this.turn;
      if (t === undefined) return;
      if (c.kind === 'append') t.pending.push({ kind: 'history/append', body: c.message as unknown as JsonValue, log: false });
      else t.pending.push({ kind: 'history/replace', body: { start: c.start, end: c.end, messages: c.messages as unknown as JsonValue }, log: false });
    },
  };

  /** True once the session is disposed (or its disposal started). */
  get isDisposed(): boolean {
    return this.state === 'disposed' || this.tornDown || (this.agent?.isDisposed ?? false);
  }

  /** Where the persisted locals live: the agent's context and the session's. */
  homes(): LocalHomes {
    return { agent: (this.agent as Agent).ctx, session: this.session?.ctx };
  }

  /** Disposes the agent (and so everything of the session); memoized by the agent. */
  dispose(): Promise<void> {
    if (this.state !== 'disposed') this.state = 'disposed';
    const agent = this.agent;
    if (agent === undefined) {
      this.markEnded();
      return Promise.resolve();
    }
    return agent._dispose();
  }

  /** Whether a listener would hear `name` about this session's agent (nothing to emit otherwise). */
  heard(name: SessionEventName): boolean {
    const agent = this.agent;
    return agent !== undefined && (eventBusOf(agent.ctx.server)?.hasListeners(name, agent) ?? false);
  }

  /** Emits `name` on the agent's event bus; resolves to the listeners' errors (none made without a listener). */
  async emit(name: SessionEventName, error?: SessionError): Promise<unknown[]> {
    const agent = this.agent as Agent;
    const bus = eventBusOf(agent.ctx.server);
    if (bus === undefined || !bus.hasListeners(name, agent)) return [];
    // The payload is EventMap's: one frozen object per event.
    const payload: SessionEventInfo | SessionLeaseLostInfo = Object.freeze({
      sessionId: this.id,
      agentId: agent.id,
      turn: this.committedTurn,
      ...(error !== undefined ? { error } : {}),
    });
    return [...(await bus.emit(agent, name, [payload]))];
  }

  /** The live session takes `turn` as committed (history mark, locals, `committedTurn`). */
  advance(turn: number, locals: readonly PersistedLocal[]): void {
    this.committedTurn = turn;
    this.committedMark = (this.session as Session).history._mark();
    this.committedLocals = locals;
  }

  /** The refusal of `what` once the lease is lost or the session closing or disposed; `undefined` while it may run. */
  refuse(what: string): SessionError | undefined {
    if (this.lost !== undefined) {
      return new SessionError('LEASE_LOST', `durableSession.${what} on session "${this.id}": the session lost its lease (${this.lost.message}); resume it to continue.`, {
        sessionId: this.id,
        cause: this.lost,
      });
    }
    const by = this.closedBy;
    if ((by === 'handoff' || by === 'idle') && (this.state === 'closing' || this.isDisposed)) {
      const why =
        by === 'handoff' ? 'closed: another process asked for it (handoff)' : `closed after idleCloseMs (${String(this.rt.idleCloseMs)} ms) without a turn`;
      return new SessionError(
        'SESSION_CLOSED',
        `durableSession.${what} on session "${this.id}": the session ${why}; call sessions.open({ agentId, sessionId: "${this.id}" }) again to continue it.`,
        { sessionId: this.id, reason: by },
      );
    }
    if (this.state === 'closing' || this.isDisposed) {
      return new SessionError(
        'SESSION_CLOSED',
        `durableSession.${what} on session "${this.id}": the session is ${this.state === 'closing' ? 'closing' : 'disposed'}; resume it (sessions.resume) to run more turns.`,
        { sessionId: this.id },
      );
    }
    return undefined;
  }

  /** Rejects this session's calls waiting for the slot (it is closing or disposed), each with its refusal. */
  rejectQueued(): void {
    this.queue.rejectWaiting(
      (holder) => holder === this,
      (w) => this.refuse(w.what) ?? new SessionError('SESSION_CLOSED', `durableSession.${w.what} on session "${this.id}": the session is closing.`, { sessionId: this.id }),
    );
  }

  /** Clears the session's timers (the idle timer, the handoff grace). */
  stopTimers(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
  }

  /** The `SESSION_BUSY` refusal of `what` while the turn slot is held or waited for. */
  refuseBusy(what: string): SessionError | undefined {
    if (!this.queue.busy) return undefined;
    const queued = this.queue.length;
    return new SessionError(
      'SESSION_BUSY',
      `durableSession.${what} on session "${this.id}": ${this.holding()} is running${queued > 0 ? ` (and ${queued} more queued)` : ''}; turns run one at a time: await it first, or pass { waitMs } to queue behind it.`,
      { sessionId: this.id },
    );
  }

  /** What holds the turn slot, for messages: `turn 3 of session "s-1"`, `a rollback of session "s-1"`. */
  holding(): string {
    const holder = this.queue.holder ?? this;
    const kind = holder.busy ?? 'turn';
    if (kind === 'turn') return `turn ${holder.current?.attempt?.turn ?? holder.committedTurn + 1} of session "${holder.id}"`;
    return `a ${kind} of session "${holder.id}"`;
  }
}
