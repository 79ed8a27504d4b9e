/**
 * The one shared event bus of a server: listener lists per event name, filtered by
 * scope at dispatch time.
 */
import type { SystemContext } from '../context/system-context.js';
import { scopeLabel as label } from '../scope/layers.js';

/** A listener: called with the event's arguments (or, in a waterfall, the value first). */
export type Listener = (...args: any[]) => unknown;

/** @internal One registered listener. */
export interface ListenerRecord {
  readonly name: string;
  readonly fn: Listener;
  /** The scope the listener was registered for (`scopeOf` of its context). */
  readonly scope: object | undefined;
  /** Hears every scope. */
  readonly global: boolean;
  /** The context that owns the registration. */
  readonly ctx: SystemContext;
  /** Set when the listener was removed, so an in-flight dispatch skips it. */
  removed: boolean;
}

const EMPTY: readonly ListenerRecord[] = Object.freeze([]);

/** @internal Whether a listener registered for `rec.scope` hears an event about `scope`. */
export function admits(rec: ListenerRecord, scope: object | undefined): boolean {
  return rec.scope === undefined || rec.global || rec.scope === scope;
}

/**
 * @internal The listener lists of one server. Lists are copy-on-write, so a dispatch
 * iterates a stable snapshot: a listener added while an event is being dispatched is
 * not called for that event, and one removed before its turn is skipped.
 */
export class EventBus {
  #lists = new Map<string, readonly ListenerRecord[]>();
  /** Called with a contained failure (an `emit`-style notification the caller chose not to propagate). */
  report: (error: unknown, where: string) => void = defaultReport;

  /** Adds a listener (at the front when `prepend`); returns its removal. */
  add(rec: ListenerRecord, prepend: boolean): () => void {
    const list = this.#lists.get(rec.name) ?? EMPTY;
    this.#lists.set(rec.name, prepend ? [rec, ...list] : [...list, rec]);
    return () => this.#remove(rec);
  }

  #remove(rec: ListenerRecord): void {
    if (rec.removed) return;
    rec.removed = true;
    const list = this.#lists.get(rec.name);
    if (list === undefined) return;
    const next = list.filter((r) => r !== rec);
    if (next.length === 0) this.#lists.delete(rec.name);
    else this.#lists.set(rec.name, next);
  }

  /** The current snapshot of listeners of `name` (all scopes). */
  snapshot(name: string): readonly ListenerRecord[] {
    return this.#lists.get(name) ?? EMPTY;
  }

  /** Whether any listener of `name` would hear an event about `scope`. */
  hasListeners(name: string, scope: object | undefined): boolean {
    const list = this.#lists.get(name);
    if (list === undefined) return false;
    for (const r of list) if (admits(r, scope)) return true;
    return false;
  }

  /** Every live scoped listener, described for leak reports. */
  liveScoped(): string[] {
    const out: string[] = [];
    for (const [name, list] of this.#lists) {
      for (const r of list) if (r.scope !== undefined) out.push(`event listener "${name}" of scope ${label(r.scope)}`);
    }
    return out;
  }

  /**
   * Calls every admitted listener in order, awaiting each result that is a promise
   * before calling the next. A failing listener does not stop the others; the failures
   * are returned.
   */
  async emit(scope: object | undefined, name: string, args: readonly unknown[]): Promise<unknown[]> {
    const list = this.#lists.get(name);
    if (list === undefined) return EMPTY as unknown as unknown[];
    let errors: unknown[] | undefined;
    for (const r of list) {
      if (r.removed || !admits(r, scope)) continue;
      try {
        const res = r.fn(...args);
        if (isThenable(res)) await res;
      } catch (err) {
        (errors ??= []).push(err);
      }
    }
    return errors ?? (EMPTY as unknown as unknown[]);
  }

  /**
   * Passes `seed` through every admitted listener in order, each called as
   * `(value, ...args)`; the value it returns (or resolves to) goes to the next. The first
   * failure rejects and stops the chain.
   */
  async waterfall<T>(scope: object | undefined, name: string, seed: T, args: readonly unknown[]): Promise<T> {
    const list = this.#lists.get(name);
    if (list === undefined) return seed;
    let value: unknown = seed;
    for (const r of list) {
      if (r.removed || !admits(r, scope)) continue;
      const res = r.fn(value, ...args);
      value = isThenable(res) ? await res : res;
    }
    return value as T;
  }
}

/** @internal Whether `v` looks like a promise. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as PromiseLike<unknown>).then === 'function';
}

function defaultReport(error: unknown, where: string): void {
  console.warn(`[polestar] ${where}:`, error);
}
