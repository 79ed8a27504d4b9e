/**
 * The one place this package's own tests reach below the public API, for what the public
 * API can not show: live child contexts, tracked in-flight work, leak probes, borrow
 * records, history marks, a session's lease. Each function reads or drives one internal,
 * so when those internals change only this file changes with them.
 *
 * Not part of the package's API: not exported from `polestar-di/testing`, and nothing here
 * is kept stable between versions. Use `inspect`, `assertNoLeaks` and the other testing
 * helpers instead.
 *
 * @internal
 * @packageDocumentation
 */
import type { ConversationHistory, HistoryMark, HistoryObserver } from '../conversation/conversation-history.js';
import type { InFlight } from '../lifetime/work.js';
import { localCount as countLocals } from '../context/local-disposal.js';
import type { ResourceEntry } from '../context/resource-entry.js';
import type { LocalLifetime, Server } from '../context/server.js';
import type { SystemContext } from '../context/system-context.js';
import type { Token } from '../context/token.js';
import type { Cleanup, Finalizers as Ownership } from '../lifetime/finalizers.js';
import type { DurableSession } from '../sessions/durable/durable-session.js';
import type { ClosedBy } from '../sessions/durable/state.js';
import type { Sessions } from '../sessions/sessions.js';
import type { SqliteSessionStore } from '../sessions/sqlite.js';
import type { Lease } from '../sessions/store/contract.js';
import type { Logger } from '../observability/logger.js';

/** Work a context tracks while it runs: its disposal aborts it, awaits it, then gives it up. */
export type TrackedWork = InFlight;

/** The live child contexts of `ctx`, oldest first (empty when it has none). */
function liveChildren(ctx: SystemContext): readonly SystemContext[] {
  return ctx._openChildren();
}

/** Tracks `work` on `ctx` as in-flight work; returns the function that untracks it. */
function trackWork(ctx: SystemContext, work: TrackedWork): () => void {
  return ctx.track(work);
}

/** Sets the first step of `ctx`'s disposal (what an agent uses to leave its registry). */
function setPrelude(ctx: SystemContext, fn: Cleanup | undefined): void {
  ctx._prelude = fn;
}

/** Makes the `per` locals registered on `server` for `ctx`, as agents and sessions do for their contexts. */
function makeLocals(server: Server, ctx: SystemContext, per: LocalLifetime): void {
  server._makeLocals(ctx, per);
}

/** The record of `ctx`'s own local `token` (its value and the borrows held on it), if it has one. */
function localEntry(ctx: SystemContext, token: Token): ResourceEntry | undefined {
  return ctx._local(token);
}

/** How many own locals `ctx` holds (counted apart from {@link localValues}). */
function localCount(ctx: SystemContext): number {
  return countLocals(ctx);
}

/** `ctx`'s own locals as `[token, value]` pairs, oldest first. */
function localValues(ctx: SystemContext): [Token, unknown][] {
  return ctx._localValues();
}

/** `server`'s globals as `[token, value]` pairs, in insertion order. */
function globalValues(server: Server): [Token, unknown][] {
  return [...server._globals.entries()].map(([t, e]) => [t, e.value]);
}

/** How many tokens have a `registerLocal` factory on `server`. */
function localFactoryCount(server: Server): number {
  return server._localFactories.size;
}

/** What every leak probe of `server` reports: its live scoped registrations (not its contexts). */
function registrationLeaks(server: Server): string[] {
  return [...server._leakProbes].flatMap((p) => p());
}

/** How many leak probes the plugins of `server` installed. */
function leakProbeCount(server: Server): number {
  return server._leakProbes.size;
}

/** Adds a leak probe to `server`: `assertNoLeaks` reports whatever it returns. */
function addLeakProbe(server: Server, probe: () => string[]): void {
  server._leakProbes.add(probe);
}

/** The live scope context of `key` on `server`; `undefined` once its disposal started, or if never made. */
function liveScope(server: Server, key: object): SystemContext | undefined {
  return server._scopeCtx(key);
}

/** The inversify child container of `ctx`, once `resolve` made one. */
function diContainer(ctx: SystemContext): unknown {
  return ctx._container;
}

/** The number of slots of `o`'s cleanup stack, holes included. */
function cleanupSlots(o: Ownership): number {
  return o._slots;
}

/** Marks the current messages of `h`, for {@link restoreHistory}. */
function markHistory(h: ConversationHistory): HistoryMark {
  return h._mark();
}

/** Puts the messages of `h` back to `mark`, telling no observer. */
function restoreHistory(h: ConversationHistory, mark: HistoryMark): void {
  h._restore(mark);
}

/** Sets the observer that sees every change of `h` (what a durable session uses). */
function observeHistory(h: ConversationHistory, observer: HistoryObserver | undefined): void {
  h._observer = observer;
}

/** The lease `s` holds now, if any. */
function sessionLease(s: DurableSession): Lease | undefined {
  return s._lease;
}

/** Why `s` closed: `close()`, a handoff request, or `idleCloseMs`; `undefined` while open, or when it was disposed otherwise. */
function closedBy(s: DurableSession): ClosedBy | undefined {
  return s._closedBy;
}

/** Whether `s` is closing: from the start of its close (or disposal) until it has ended. */
function isClosing(s: DurableSession): boolean {
  return s._closing;
}

/** Settles (never rejects) once `s` is disposed, its lease given up and its id free in the registry. */
function whenEnded(s: DurableSession): Promise<void> {
  return s._whenEnded();
}

/** Asks `s` to hand off, as the router does for a process waiting to open it, with the request's deadline (`Date.now()`-based). */
function requestHandoff(s: DurableSession, until: number): void {
  s._requestHandoff(until);
}

/** The begun attempt of the turn `s` runs (`undefined` when none, or before its started record was written). */
function openAttempt(s: DurableSession): { readonly turn: number; readonly attempt: number } | undefined {
  return s._openAttempt();
}

/**
 * Cancels the turn `s` runs (with `attempt`, only that begun attempt), as `sessions.cancel`
 * does in the process that runs it; true when delivered.
 */
function cancelTurn(s: DurableSession, reason: string, attempt?: { readonly turn: number; readonly attempt: number }): boolean {
  return s._cancel(reason, attempt);
}

/** The store the sessions plugin of `sessions` uses (the one it was given, or the one it made). */
function sessionStore(sessions: Sessions): Sessions['_runtime']['store'] {
  return sessions._runtime.store;
}

/** Sets the hook `store` awaits inside its next write transactions, just before it commits. */
function beforeCommit(store: SqliteSessionStore, fn: (() => Promise<void>) | undefined): void {
  store._beforeCommit = fn;
}

/** The `synchronous` setting of `store`'s connection between transactions (`2` is FULL). */
function sqliteSynchronous(store: SqliteSessionStore): Promise<number> {
  return store._synchronous();
}

/** Resolves once `store`'s worker thread has started (its calls run on it from then on). */
function sqliteWorkerReady(store: SqliteSessionStore): Promise<void> {
  return store._workerReady();
}

/** Terminates `store`'s worker thread as a crash would (the next call starts a fresh one). */
function terminateSqliteWorker(store: SqliteSessionStore): Promise<void> {
  return store._terminateWorker();
}

/**
 * The internal reads and hooks this package's tests use, one function each (see the
 * module comment).
 */
/** The logger a server reports to (`new Server({ logger })`, else the console): `server._logger`. */
function serverLogger(server: Server): Logger {
  return server._logger;
}

export const probe = Object.freeze({
  liveChildren,
  trackWork,
  setPrelude,
  makeLocals,
  localEntry,
  localCount,
  localValues,
  globalValues,
  localFactoryCount,
  registrationLeaks,
  leakProbeCount,
  addLeakProbe,
  liveScope,
  diContainer,
  cleanupSlots,
  markHistory,
  restoreHistory,
  observeHistory,
  sessionLease,
  closedBy,
  isClosing,
  whenEnded,
  requestHandoff,
  openAttempt,
  cancelTurn,
  sessionStore,
  sqliteWorkerReady,
  terminateSqliteWorker,
  beforeCommit,
  sqliteSynchronous,
  serverLogger,
});
