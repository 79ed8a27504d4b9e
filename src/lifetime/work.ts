/**
 * In-flight work on a lifetime: what its close aborts, then awaits (bounded) before its
 * finalizers run, then gives up.
 */
import { collect } from './settle.js';

/**
 * @internal One piece of in-flight work tracked on a lifetime with `lifetime.track(work)`:
 * a tool execution (tracked on its calling context and on the context owning the tool's
 * registration) or a system run (tracked on the context it runs on).
 *
 * - `abort(reason)` is called synchronously the moment the close of the lifetime (or
 *   of an ancestor) starts; also at once when the work is tracked on a lifetime whose
 *   close already started. `reason()` returns the abort's `ContextDisposedError`
 *   (built on the first call, the same object after): call it only when something is
 *   there to abort, so an idle work costs no `Error` (no stack capture). It must not
 *   throw (a throw is collected into the close's errors).
 * - `settled` never rejects (wrap it); the close waits for it, bounded by the
 *   lifetime's close timeout (`server.options.disposeTimeoutMs` for a context).
 * - `giveUp()` is called once per lifetime tracking the work when that lifetime's
 *   close stops waiting (the work settled, or the bound passed), settled or not, and
 *   at once (after `abort`) when the work is tracked on a lifetime that already stopped
 *   waiting. A work tracked on two lifetimes gets up to two calls: make it idempotent.
 */
export interface InFlight {
  /** For error messages, e.g. `tool "refund" (call c1)` or `system summarize`. */
  readonly label: string;
  /** Called synchronously when the close of the lifetime (or an ancestor) starts. */
  abort(reason: () => unknown): void;
  /**
   * `true` while nothing of the work is running (e.g. a call group between calls): a
   * close then neither waits for it nor arms its timeout. Optional; omitted means busy.
   */
  readonly idle?: boolean;
  /** Settles when the work is over. Never rejects. */
  readonly settled: Promise<unknown>;
  /** Called when the close stops waiting for the work (it settled, or the bound passed). */
  giveUp?(): void;
}

/** @internal Aborts one in-flight work, collecting what it throws. */
export function abortWork(w: InFlight, reason: () => unknown, errors: unknown[]): void {
  try {
    w.abort(reason);
  } catch (err) {
    collect(err, errors);
  }
}

/** @internal Aborts then gives up `work` at once, swallowing what it throws (nothing can collect it). */
export function abortAndGiveUp(work: InFlight, reason: () => unknown): void {
  try {
    work.abort(reason);
  } catch {
    // nothing can collect it: the close that would have is over
  }
  try {
    work.giveUp?.();
  } catch {
    // same
  }
}

/** @internal Whether every work of `set` says it is idle. */
export function allIdle(set: ReadonlySet<InFlight>): boolean {
  for (const w of set) if (w.idle !== true) return false;
  return true;
}

/** @internal Gives up every work of `works` (a copy is iterated), collecting what they throw. */
export function giveUpAll(works: Iterable<InFlight>, errors: unknown[]): void {
  for (const w of [...works]) {
    try {
      w.giveUp?.();
    } catch (err) {
      collect(err, errors);
    }
  }
}

/**
 * @internal Awaits the works of `set` (including works added while waiting) until
 * `deadline` (a `performance.now()` time). Resolves to the works still running when the
 * time ran out (empty when all settled), and every work it waited for, to give up.
 */
export async function awaitWorks(set: ReadonlySet<InFlight>, deadline: number): Promise<{ seen: Set<InFlight>; late: InFlight[] }> {
  const seen = new Set<InFlight>();
  const done = new Set<InFlight>();
  for (;;) {
    const waits: Promise<unknown>[] = [];
    for (const w of set) {
      if (seen.has(w)) continue;
      seen.add(w);
      let settled: Promise<unknown>;
      try {
        settled = Promise.resolve(w.settled);
      } catch (err) {
        settled = Promise.reject(err);
      }
      const mark = (): void => void done.add(w);
      waits.push(settled.then(mark, mark));
    }
    if (waits.length === 0) return { seen, late: [] };
    const left = deadline - performance.now();
    if (left <= 0 || !(await within(Promise.all(waits), left))) {
      const late: InFlight[] = [];
      for (const w of seen) if (!done.has(w)) late.push(w);
      return { seen, late };
    }
  }
}

/** @internal A work's label for messages; never throws. */
export function labelOf(w: InFlight): string {
  try {
    return String(w.label);
  } catch {
    return 'in-flight work';
  }
}

/** Resolves `true` when `p` settles within `ms`, `false` when the time runs out first. */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}
