/**
 * The one shared event bus of a server: listeners indexed by event name, then by scope,
 * so that an event about scope K touches only the listeners that can hear it.
 */
import type { SystemContext } from '../context/system-context.js';
import { scopeLabel as label } from '../util/scope-label.js';
import { DEFAULT_LOGGER, log } from '../observability/logger.js';
import { IntrusiveList } from '../util/intrusive-list.js';
import { isThenable } from '../util/is-thenable.js';

/** @internal Re-exported from `util/` for the modules that import it from here. */
export { isThenable };

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
const NO_ERRORS: unknown[] = Object.freeze([]) as unknown as unknown[];

/** @internal Whether a listener registered for `rec.scope` hears an event about `scope`. */
export function admits(rec: ListenerRecord, scope: object | undefined): boolean {
  return rec.scope === undefined || rec.global || rec.scope === scope;
}

/** One registration in a {@link Chain}. */
interface Link {
  readonly rec: ListenerRecord;
  /**
   * Dispatch order: appended listeners get 1, 2, 3, … and prepended ones -1, -2, -3, …,
   * from one counter pair per bus, so ascending `seq` is registration order with every
   * prepend before every append, the latest prepend first (Node's `prependListener`).
   */
  readonly seq: number;
  prev: Link | undefined;
  /** Kept when the link is removed, so a dispatch standing on it walks on (see {@link Cursor}). */
  next: Link | undefined;
  chain: Chain | undefined;
}

/**
 * A list of links in ascending `seq`. Links are only ever inserted at the head (prepend) or
 * the tail (append); a removed link keeps its `next` (see {@link Cursor}).
 */
type Chain = IntrusiveList<Link>;

/** The listeners of one event name. */
interface NameIndex {
  /** Unscoped listeners and `{ global: true }` ones: every event of the name reaches them. */
  readonly shared: Chain;
  /** Per scope key, that scope's (non-global) listeners. */
  readonly byScope: Map<object, Chain>;
  /** Listener count over `shared` and every `byScope` chain. */
  size: number;
}

/**
 * Walks the listeners one dispatch admits, in `seq` order: a merge of the shared chain and
 * the event's scope chain, limited to the `seq` window that existed when the dispatch
 * started.
 *
 * Why this is a snapshot without copying: links are inserted only at a chain's ends and
 * every link added after the dispatch started lies outside the window (appends above `hi`,
 * prepends below `lo`), so they are skipped; a removed link keeps its `next`, which was its
 * successor when it was removed, so a cursor standing on it still reaches every link of
 * the window that is live; removed links are skipped (`rec.removed`).
 */
class Cursor {
  #a: Link | undefined;
  #b: Link | undefined;
  readonly #lo: number;
  readonly #hi: number;

  constructor(a: Link | undefined, b: Link | undefined, lo: number, hi: number) {
    this.#a = a;
    this.#b = b;
    this.#lo = lo;
    this.#hi = hi;
  }

  next(): ListenerRecord | undefined {
    for (;;) {
      const a = this.#a;
      const b = this.#b;
      let link: Link;
      if (a === undefined) {
        if (b === undefined) return undefined;
        link = b;
        this.#b = b.next;
      } else if (b === undefined || a.seq < b.seq) {
        link = a;
        this.#a = a.next;
      } else {
        link = b;
        this.#b = b.next;
      }
      if (link.rec.removed || link.seq < this.#lo || link.seq > this.#hi) continue;
      return link.rec;
    }
  }
}

/**
 * @internal The listeners of one server, indexed by event name and then by scope: one
 * shared chain (unscoped and `{ global: true }` listeners) plus one chain per scope key.
 * Adding or removing a listener is O(1); a dispatch about scope K walks the shared chain
 * and K's chain only, whatever other scopes hold.
 *
 * A dispatch sees the listeners present when it started: a listener added while an event
 * is being dispatched is not called for that event, and one removed before its turn is
 * skipped.
 */
export class EventBus {
  readonly #names = new Map<string, NameIndex>();
  #appendSeq = 0;
  #prependSeq = 0;
  /** Called with a contained failure (an `emit`-style notification the caller chose not to propagate). */
  report: (error: unknown, where: string) => void = defaultReport;

  /** Adds a listener (at the front when `prepend`); returns its removal. */
  add(rec: ListenerRecord, prepend: boolean): () => void {
    let index = this.#names.get(rec.name);
    if (index === undefined) {
      index = { shared: new IntrusiveList<Link>(), byScope: new Map(), size: 0 };
      this.#names.set(rec.name, index);
    }
    let chain: Chain | undefined;
    if (rec.scope === undefined || rec.global) chain = index.shared;
    else {
      chain = index.byScope.get(rec.scope);
      if (chain === undefined) {
        chain = new IntrusiveList<Link>();
        index.byScope.set(rec.scope, chain);
      }
    }
    const link: Link = { rec, seq: prepend ? --this.#prependSeq : ++this.#appendSeq, prev: undefined, next: undefined, chain };
    if (prepend) chain.unshift(link);
    else chain.push(link);
    index.size++;
    return () => this.#remove(link);
  }

  #remove(link: Link): void {
    const rec = link.rec;
    const chain = link.chain;
    if (rec.removed || chain === undefined) return;
    rec.removed = true;
    link.chain = undefined;
    chain.unlinkKeepingNext(link);
    const index = this.#names.get(rec.name) as NameIndex;
    if (chain.size === 0 && chain !== index.shared) index.byScope.delete(rec.scope as object);
    if (--index.size === 0) this.#names.delete(rec.name);
  }

  #cursor(name: string, scope: object | undefined): Cursor | undefined {
    const index = this.#names.get(name);
    if (index === undefined) return undefined;
    const own = scope === undefined ? undefined : index.byScope.get(scope);
    if (own === undefined && index.shared.size === 0) return undefined;
    return new Cursor(index.shared.head, own?.head, this.#prependSeq, this.#appendSeq);
  }

  /** Every listener of `name` (all scopes), in dispatch order. O(listeners of `name`): for diagnostics, not dispatch. */
  snapshot(name: string): readonly ListenerRecord[] {
    const index = this.#names.get(name);
    if (index === undefined) return EMPTY;
    const links: Link[] = [];
    for (const chain of [index.shared, ...index.byScope.values()]) for (let l = chain.head; l !== undefined; l = l.next) links.push(l);
    return links.sort((x, y) => x.seq - y.seq).map((l) => l.rec);
  }

  /** Whether `name` has any listener at all (of any scope). O(1). */
  hasListenersOf(name: string): boolean {
    return this.#names.has(name);
  }

  /** Whether any listener of `name` would hear an event about `scope`. O(1). */
  hasListeners(name: string, scope: object | undefined): boolean {
    const index = this.#names.get(name);
    if (index === undefined) return false;
    if (index.shared.size > 0) return true;
    return scope !== undefined && index.byScope.has(scope);
  }

  /** How many listeners of `name` hear an event about `scope`. O(1). */
  count(name: string, scope: object | undefined): number {
    const index = this.#names.get(name);
    if (index === undefined) return 0;
    return index.shared.size + (scope === undefined ? 0 : (index.byScope.get(scope)?.size ?? 0));
  }

  /** @internal How many listeners are registered in exactly `scope`'s own layer, over every name (for `inspect`; O(names)). */
  scopedCount(scope: object): number {
    let n = 0;
    for (const index of this.#names.values()) n += index.byScope.get(scope)?.size ?? 0;
    return n;
  }

  /** Every live scoped listener, described for leak reports. */
  liveScoped(): string[] {
    const out: string[] = [];
    for (const name of this.#names.keys()) {
      for (const r of this.snapshot(name)) if (r.scope !== undefined) out.push(`event listener "${name}" of scope ${label(r.scope)}`);
    }
    return out;
  }

  /**
   * Calls every admitted listener in order, awaiting each result that is a promise
   * before calling the next. A failing listener does not stop the others; the failures
   * are returned.
   */
  async emit(scope: object | undefined, name: string, args: readonly unknown[]): Promise<unknown[]> {
    const cursor = this.#cursor(name, scope);
    if (cursor === undefined) return NO_ERRORS;
    let errors: unknown[] | undefined;
    for (let r = cursor.next(); r !== undefined; r = cursor.next()) {
      try {
        const res = r.fn(...args);
        if (isThenable(res)) await res;
      } catch (err) {
        (errors ??= []).push(err);
      }
    }
    return errors ?? NO_ERRORS;
  }

  /**
   * Passes `seed` through every admitted listener in order, each called as
   * `(value, ...args)`; the value it returns (or resolves to) goes to the next. The first
   * failure rejects and stops the chain.
   */
  async waterfall<T>(scope: object | undefined, name: string, seed: T, args: readonly unknown[]): Promise<T> {
    const cursor = this.#cursor(name, scope);
    if (cursor === undefined) return seed;
    let value: unknown = seed;
    for (let r = cursor.next(); r !== undefined; r = cursor.next()) {
      const res = r.fn(value, ...args);
      value = isThenable(res) ? await res : res;
    }
    return value as T;
  }
}

/** A bus of no server (every server's bus reports to its logger): the default logger. */
function defaultReport(error: unknown, where: string): void {
  log(DEFAULT_LOGGER, 'warn', `[polestar] ${where}`, error);
}
