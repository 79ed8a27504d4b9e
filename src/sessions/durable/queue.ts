/**
 * @internal The turn slot of a durable agent: one holder at a time (a turn, a rollback or a
 * checkpoint), and a FIFO queue of the callers that chose to wait for it (`waitMs`). It
 * knows nothing of sessions: a holder is any tag (today the session's own state; once an
 * agent owns several sessions, the one queue of that agent serves them all).
 */

/** @internal One caller waiting for the slot. */
export interface SlotWaiter<H> {
  /** What holds the slot once this waiter has it. */
  readonly holder: H;
  /** The call that waits, for messages (e.g. `turn()`). */
  readonly what: string;
  /** Called synchronously when the slot is given to this waiter (it holds it from then on). */
  readonly start: () => void;
  /** Called when the waiter leaves the queue without the slot (timeout, abort, close). */
  readonly fail: (error: unknown) => void;
  /** The pending timer of its `waitMs`, cleared when it leaves the queue. */
  timer?: ReturnType<typeof setTimeout> | undefined;
}

/** @internal The slot and its queue (see the module's comment). */
export class TurnQueue<H> {
  #holder: H | undefined = undefined;
  readonly #waiting: SlotWaiter<H>[] = [];

  /** What holds the slot, or `undefined` when it is free. */
  get holder(): H | undefined {
    return this.#holder;
  }

  /** The number of callers waiting (not counting the holder). */
  get length(): number {
    return this.#waiting.length;
  }

  /** True while the slot is held or someone waits for it. */
  get busy(): boolean {
    return this.#holder !== undefined || this.#waiting.length > 0;
  }

  /** The waiters, oldest first (a copy). */
  waiters(): readonly SlotWaiter<H>[] {
    return [...this.#waiting];
  }

  /** Takes the free slot for `holder` when nobody holds or waits for it; false otherwise (nothing changes). */
  tryTake(holder: H): boolean {
    if (this.busy) return false;
    this.#holder = holder;
    return true;
  }

  /**
   * Queues `w` (last); when `waitMs` passes first, it leaves the queue and `w.fail` gets
   * `expired(waitedMs)`. The timer is ref'd: its caller waits for it (the turn in flight may
   * wait on nothing that keeps the process alive), and it is cleared when `w` leaves.
   */
  enqueue(w: SlotWaiter<H>, waitMs: number, expired: (waitedMs: number) => unknown): void {
    this.#waiting.push(w);
    const since = performance.now();
    const timer = setTimeout(() => {
      if (this.remove(w)) w.fail(expired(Math.round(performance.now() - since)));
    }, waitMs);
    w.timer = timer;
  }

  /** Takes `w` out of the queue (its timer cleared); false when it was not queued. */
  remove(w: SlotWaiter<H>): boolean {
    const i = this.#waiting.indexOf(w);
    if (i < 0) return false;
    this.#waiting.splice(i, 1);
    clearTimeout(w.timer);
    w.timer = undefined;
    return true;
  }

  /** The holder gives the slot up: the oldest waiter gets it (its `start` runs now). */
  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) {
      this.#holder = undefined;
      return;
    }
    clearTimeout(next.timer);
    next.timer = undefined;
    this.#holder = next.holder;
    next.start();
  }

  /** Every waiter whose holder satisfies `which` leaves the queue; `w.fail` gets `error(w)`. */
  rejectWaiting(which: (holder: H) => boolean, error: (w: SlotWaiter<H>) => unknown): void {
    for (const w of this.waiters()) {
      if (which(w.holder) && this.remove(w)) w.fail(error(w));
    }
  }
}
