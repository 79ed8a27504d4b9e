/**
 * The record of a lifetime, apart from what it does: its state tags, the memo values of
 * its close, the part made only once something uses it, and the shape the close engine
 * walks (every lifetime has it: a `Lifetime`, and a context, which embeds one).
 */
import type { Cleanup, Finalizers } from './finalizers.js';
import type { InFlight } from './work.js';

/** @internal `_state`: open. */
export const OPEN = 0;
/** @internal `_state`: closing (marked by its own close or an ancestor's). */
export const CLOSING = 1;
/** @internal `_state`: closed. */
export const CLOSED = 2;

/** @internal `_closeMemo`: a close is running and nobody asked for its promise yet. */
export const RUNNING: unique symbol = Symbol('close running');
/** @internal {@link RUNNING}, for a descendant closed by an ancestor's drive (which collects its errors). */
export const RUNNING_QUIET: unique symbol = Symbol('close running (errors collected by an ancestor)');
/** @internal The memo of a close that ended with no error. */
export const RESOLVED: Promise<void> = Promise.resolve();

/** @internal What `_closeMemo` holds: nothing before the close, a running mark, then its promise. */
export type CloseMemo = Promise<void> | typeof RUNNING | typeof RUNNING_QUIET | undefined;

/** @internal The part of a lifetime made on first use (see `Lifetime._x`). */
export class LifetimeExtra {
  /** The controller behind `signal`. Kept after release, so `signal` stays the same object. */
  ac: AbortController | undefined = undefined;
  /** Tracked in-flight work. */
  inflight: Set<InFlight> | undefined = undefined;
  /** See `Lifetime._prelude`. */
  prelude: Cleanup | undefined = undefined;
  /** Run once, first, when the abort pass reaches this lifetime (see `Lifetime._onAbortPass`). */
  onAbort: ((lt: LifetimeNode) => void) | undefined = undefined;
  /** The abort pass reached this lifetime (its signal and in-flight work were aborted). */
  aborted = false;
  /** The close stopped waiting for in-flight work: later work is aborted and given up at once. */
  quiesced = false;
  /** The work group of group slot 0 (see `groupSlot`). Kept after release, like the signal. */
  g0: InFlight | undefined = undefined;
  /** The work group of group slot 1. */
  g1: InFlight | undefined = undefined;
  /** The work groups of the slots after the first two (index - 2), made on first use. */
  gs: (InFlight | undefined)[] | undefined = undefined;
}

/**
 * @internal A lifetime as the close engine sees it: its fields and the hooks its kind
 * overrides (see `Lifetime` for each).
 */
export interface LifetimeNode {
  readonly parent: LifetimeNode | undefined;
  /** @internal */
  _state: number;
  /** @internal */
  _last: LifetimeNode | undefined;
  /** @internal */
  _prev: LifetimeNode | undefined;
  /** @internal */
  _next: LifetimeNode | undefined;
  /** @internal */
  _extra: LifetimeExtra | undefined;
  /** @internal */
  _fin: Finalizers | undefined;
  /** @internal */
  _closeMemo: CloseMemo;
  /** @internal */
  _keepLinked: boolean;
  describe(): string;
  /** @internal */
  _closeTimeoutMs(): number;
  /** @internal */
  _hasOwnWork(): boolean;
  /** @internal */
  _closeRest(errors: unknown[]): Promise<void> | undefined;
  /** @internal */
  _released(): void;
  /** @internal */
  _detach(): void;
  /** @internal */
  _closePromise(): Promise<void>;
  /** @internal */
  _finishClose(errors: unknown[], quiet: boolean): void;
}
