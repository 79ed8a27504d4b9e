/**
 * @internal A scoped list: the items of one registry kind (guards, restrictions,
 * protections) kept per scope, each owned by the context that registered it.
 */
import { ownedBy, type Owner } from '../disposal/owned.js';
import { scopeLabel } from '../util/scope-label.js';

const EMPTY: readonly never[] = Object.freeze([]);

/**
 * @internal The items of one kind, in a global list and one list per scope key, in
 * registration order. Every list is copy-on-write: a change replaces the array, so a
 * reader may iterate one without a copy (a registration made meanwhile is not seen), and
 * a cache may key on a list's identity (a new array means a change).
 *
 * Reads are a field read ({@link ScopedList.global}) and a `Map` lookup
 * ({@link ScopedList.of}): nothing is allocated per read.
 *
 * @example
 * ```ts
 * const guards = new ScopedList<Guard>('tool guard');
 * const undo = guards.add(ctx, scopeOf(ctx), guard); // disposed with ctx, or by undo()
 * for (const g of guards.global) check(g);
 * for (const g of guards.of(scope) ?? []) check(g);
 * server._leakProbes.add(() => guards.leaks());
 * ```
 */
export class ScopedList<T> {
  /** @internal The global items (registered through an unscoped context), oldest first. Replaced on every change. */
  global: readonly T[] = EMPTY;
  readonly #kind: string;
  readonly #byScope = new Map<object, readonly T[]>();

  /** @param kind - what an item is, for the leak probe's lines (`tool guard`). */
  constructor(kind: string) {
    this.#kind = kind;
  }

  /** @internal The items of `scope`, oldest first; `undefined` when it has none. Replaced on every change. */
  of(scope: object): readonly T[] | undefined {
    return this.#byScope.get(scope);
  }

  /** @internal Whether `scope` has an item. */
  has(scope: object): boolean {
    return this.#byScope.has(scope);
  }

  /** @internal How many scopes have an item. */
  get scopes(): number {
    return this.#byScope.size;
  }

  /**
   * @internal Adds `item` to the list of `scope` (`undefined`: the global list), owned by
   * `owner`: removed when `owner` is disposed or when the returned disposer is called,
   * whichever comes first (the disposer is idempotent). A disposed `owner` refuses: the
   * item is removed again and its error is thrown, so nothing is left behind.
   */
  add(owner: Owner, scope: object | undefined, item: T): () => void {
    if (scope === undefined) this.global = [...this.global, item];
    else this.#byScope.set(scope, [...(this.#byScope.get(scope) ?? EMPTY), item]);
    return ownedBy(owner, () => this.#remove(scope, item));
  }

  /** @internal One line per scoped item still registered, for `assertNoLeaks`: `tool guard of scope researcher`. */
  leaks(): string[] {
    const out: string[] = [];
    for (const [scope, list] of this.#byScope) for (let i = 0; i < list.length; i++) out.push(`${this.#kind} of scope ${scopeLabel(scope)}`);
    return out;
  }

  #remove(scope: object | undefined, item: T): void {
    const list = scope === undefined ? this.global : this.#byScope.get(scope);
    if (list === undefined) return;
    const i = list.indexOf(item);
    if (i < 0) return;
    const next: T[] = [];
    for (let j = 0; j < list.length; j++) if (j !== i) next.push(list[j]);
    if (scope === undefined) this.global = next;
    else if (next.length === 0) this.#byScope.delete(scope);
    else this.#byScope.set(scope, next);
  }
}
