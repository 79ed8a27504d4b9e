/**
 * @internal An id registry: the entries of one kind (agents, durable sessions) that hold
 * an id on one server, reserved before they are ready and published once they are.
 */

/** @internal What an id registry holds: an entry with an id that can be disposed. */
export interface IdEntry {
  /** The id the entry holds while it is registered. */
  readonly id: string;
  /** Whether the entry's disposal has started (a disposed holder no longer blocks its id). */
  readonly isDisposed: boolean;
}

/**
 * @internal The entries holding an id on one server, in the order they took it. An entry
 * *reserves* its id before its first await (so a concurrent attempt with the same id is
 * refused at once), is *published* by the kind's own rule ({@link IdRegistry.isPublished})
 * and *leaves* when its disposal runs. `get` and `list` show published entries only.
 *
 * A kind subclasses it and says when an entry is published and how it reads in a leak
 * report:
 *
 * @example
 * ```ts
 * class WorkerRegistry extends IdRegistry<Worker> {
 *   protected isPublished(w: Worker): boolean { return w.ready && !w.isDisposed; }
 *   protected describe(w: Worker): string { return `worker "${w.id}"`; }
 * }
 * const taken = registry.liveHolder(id);
 * if (taken !== undefined) throw new Error(`worker "${id}" is already registered`);
 * registry.reserve(worker); // before the first await
 * ```
 */
export abstract class IdRegistry<E extends IdEntry> {
  readonly #byId = new Map<string, E>();

  /** @internal Whether `entry` (which holds its id) is published: `get(id)` returns it. */
  protected abstract isPublished(entry: E): boolean;

  /** @internal How `entry` reads in a leak report: `agent "researcher" (composing)`. */
  protected abstract describe(entry: E): string;

  /** @internal The entry holding `id` (reserved or published, disposed or not), if any. */
  holder(id: string): E | undefined {
    return this.#byId.get(id);
  }

  /**
   * @internal The entry holding `id` whose disposal has not started, if any: the one that
   * makes a new reservation of `id` a conflict.
   */
  liveHolder(id: string): E | undefined {
    const e = this.#byId.get(id);
    return e !== undefined && !e.isDisposed ? e : undefined;
  }

  /**
   * @internal Reserves `entry.id` for `entry`; the caller checked {@link IdRegistry.liveHolder}.
   * A disposed predecessor still holding the id is replaced, and the entry takes its own
   * place in the order (the newest), not its predecessor's.
   */
  reserve(entry: E): void {
    this.#byId.delete(entry.id);
    this.#byId.set(entry.id, entry);
  }

  /** @internal Frees `entry.id` if `entry` still holds it (a successor's reservation is kept). */
  leave(entry: E): void {
    if (this.#byId.get(entry.id) === entry) this.#byId.delete(entry.id);
  }

  /** @internal The published entry of `id`, if any. */
  get(id: string): E | undefined {
    const e = this.#byId.get(id);
    return e !== undefined && this.isPublished(e) ? e : undefined;
  }

  /** @internal The published entries, in the order they reserved their ids. */
  list(): E[] {
    const out: E[] = [];
    for (const e of this.#byId.values()) if (this.isPublished(e)) out.push(e);
    return out;
  }

  /** @internal Every entry holding its id (reserved or published), in the order they reserved it. */
  values(): IterableIterator<E> {
    return this.#byId.values();
  }

  /** @internal The leak probe: one line per entry still holding its id. */
  leaks(): string[] {
    const out: string[] = [];
    for (const e of this.#byId.values()) out.push(this.describe(e));
    return out;
  }
}
