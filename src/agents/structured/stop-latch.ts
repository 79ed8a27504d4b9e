/**
 * @internal The stop signal of a task, made only when someone reads it: most tasks end
 * without anyone listening, and an `AbortController` aborted with a fresh `DOMException`
 * costs more than the rest of the task's stop. Stopping records why (as a function, so the
 * reason is built only for a signal that exists); a signal read after the stop is born
 * aborted with that reason.
 */
export class StopLatch {
  #controller: AbortController | undefined = undefined;
  #why: (() => unknown) | undefined = undefined;

  /** True once stopped. */
  get stopped(): boolean {
    return this.#why !== undefined;
  }

  /** The signal: aborted once stopped (made on first read). */
  get signal(): AbortSignal {
    let c = this.#controller;
    if (c === undefined) {
      c = this.#controller = new AbortController();
      const why = this.#why;
      if (why !== undefined) c.abort(why());
    }
    return c.signal;
  }

  /** Stops (the first call wins): a signal already handed out aborts with `why()`. */
  stop(why: () => unknown): void {
    if (this.#why !== undefined) return;
    this.#why = why;
    this.#controller?.abort(why());
  }
}
