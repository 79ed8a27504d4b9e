/**
 * The registration primitive every scoped registry (tools, prompt sections, prompt
 * variables) is built on: one global layer plus one layer per scope key, entries owned by
 * the context that registered them, and a cached merged view per scope.
 */
import type { Server } from '../context/server.js';
import type { SystemContext } from '../context/system-context.js';
import type { Slot } from '../lifetime/finalizers.js';
import { branded } from '../util/brand.js';
import { scopeLabel } from '../util/scope-label.js';

/** A registration refused because of a registry rule (duplicate name, reserved name, ...). */
export class RegistrationError extends Error {
  /**
   * True when `value` is an instance of `RegistrationError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'RegistrationError');
  /** Always `'RegistrationError'`. */
  override readonly name = 'RegistrationError';
}

/** @internal One registered entry. */
export interface LayerEntry<E> extends Slot {
  readonly name: string;
  readonly value: E;
  readonly scope: object | undefined;
  readonly ctx: SystemContext;
  /** The layer holding it; `undefined` before it is inserted and once it is removed. */
  layer: Layer<E> | undefined;
}

/**
 * A registered entry. A class, not an object literal, so short-lived agents' entries are
 * not pretenured into the old generation by a literal's allocation site (docs/performance.md,
 * "Why the code looks like this").
 */
class Entry<E> implements LayerEntry<E> {
  layer: Layer<E> | undefined = undefined;
  arg: unknown = undefined;
  index = 0;
  concurrent = false;
  constructor(
    readonly name: string,
    readonly value: E,
    readonly scope: object | undefined,
    readonly ctx: SystemContext,
    public fn: ((arg: never) => unknown) | undefined,
  ) {}
}

/** A layer (a class for the reason given at {@link Entry}: a scope layer lives as long as its scope; the global layer is one too, so every layer has one shape). */
class LayerRecord<E> implements Layer<E> {
  readonly entries = new Map<string, LayerEntry<E>>();
  version = 0;
  merged?: ReadonlyMap<string, E> = undefined;
  mergedGlobal?: number = undefined;
}

/** @internal What a change listener is told. */
export interface LayerChange<E> {
  readonly kind: 'add' | 'remove';
  readonly entry: LayerEntry<E>;
}

/** @internal The entries of one layer (the global one or one scope's). */
export interface Layer<E> {
  readonly entries: Map<string, LayerEntry<E>>;
  version: number;
  merged?: ReadonlyMap<string, E>;
  mergedGlobal?: number;
}

/**
 * @internal A global layer plus a `Map` from scope key to that scope's layer.
 *
 * - `add(ctx, name, value)` puts the entry in the layer of `scopeOf(ctx)` and makes `ctx`
 *   its owner (undone when `ctx` is disposed, or by the returned disposer).
 * - A duplicate name in one layer throws `already registered`; a change listener that
 *   throws rolls the registration back. A failed registration leaves no residue.
 * - `merged(scope)` is the global layer overlaid with `scope`'s layer (scoped wins),
 *   cached until either layer changes.
 * - An empty scope layer is deleted.
 */
export class Layers<E> {
  readonly #kind: string;
  readonly #global: Layer<E> = new LayerRecord<E>();
  readonly #scoped = new Map<object, Layer<E>>();
  /** The scoped layer found last (registrations and lookups come in runs for one scope); cleared with its layer. */
  #lastScope: object | undefined = undefined;
  #lastLayer: Layer<E> | undefined = undefined;
  /** Change listeners. Replaced, never mutated (copy-on-write): a notification iterates it without a copy. */
  #listeners: readonly ((change: LayerChange<E>) => void)[] = [];
  /** Removal listeners, told the removed entry itself (no change record per removal); copy-on-write too. */
  #removeListeners: readonly ((entry: LayerEntry<E>) => void)[] = [];
  #globalMerged: ReadonlyMap<string, E> | undefined;
  /** Bumped on every change of any layer. */
  version = 0;

  /**
   * @param kind - what the entries are, for messages (`tool`, `prompt section`).
   * @param server - when given, a leak probe listing live scoped entries is added to it.
   */
  constructor(kind: string, server?: Server) {
    this.#kind = kind;
    server?._leakProbes.add(() => this.liveScoped());
  }

  /**
   * Adds a change listener (called synchronously after each add and remove). A throw
   * from it refuses an add (rolled back) and is ignored for a remove.
   */
  onChange(fn: (change: LayerChange<E>) => void): () => void {
    this.#listeners = [...this.#listeners, fn];
    let on = true;
    return () => {
      if (!on) return;
      on = false;
      this.#listeners = this.#listeners.filter((l) => l !== fn);
    };
  }

  /**
   * Adds a listener told only of removals, with the removed entry (after each one, before
   * the change listeners; a throw from it is ignored).
   */
  onRemove(fn: (entry: LayerEntry<E>) => void): () => void {
    this.#removeListeners = [...this.#removeListeners, fn];
    let on = true;
    return () => {
      if (!on) return;
      on = false;
      this.#removeListeners = this.#removeListeners.filter((l) => l !== fn);
    };
  }

  /**
   * Registers `value` under `name` in the layer of `scopeOf(ctx)`, owned by `ctx`.
   * Returns an idempotent disposer.
   */
  add(ctx: SystemContext, name: string, value: E): () => void {
    if (ctx.isDisposed) ctx._live(`registering ${this.#kind} "${name}"`); // the message only for the error
    const scope = ctx._scopeKey;
    const layer = scope === undefined ? this.#global : this.#layerOf(scope);
    if (layer?.entries.has(name)) {
      throw new RegistrationError(
        scope === undefined
          ? `${this.#kind} "${name}" is already registered in the global layer. ` +
              `To give one agent its own "${name}", register it through the agent's context (agent.ctx) instead, ` +
              `or dispose the existing registration first.`
          : `${this.#kind} "${name}" is already registered in this scope's layer (${this.#kind}s are unique per layer); ` +
              `dispose the existing registration first.`,
      );
    }
    // The entry is also its owner's cleanup slot: `#deleter(entry)` at the owner's disposal.
    const entry: LayerEntry<E> = new Entry(name, value, scope, ctx, this.#deleter as (arg: never) => unknown);
    this.#insert(entry);
    try {
      if (this.#listeners.length > 0) this.#notify({ kind: 'add', entry }, true);
      if (ctx.isDisposed) ctx._live(`registering ${this.#kind} "${name}"`); // a listener disposed it
      entry.arg = entry;
      ctx._addFinalizerSlot(entry);
    } catch (err) {
      entry.fn = undefined;
      this.#delete(entry, false);
      throw err;
    }
    return () => {
      ctx._removeFinalizer(entry);
      this.#delete(entry);
    };
  }

  /** The owner's cleanup of an entry (one function for all: no closure per registration). */
  readonly #deleter = (entry: LayerEntry<E>): void => this.#delete(entry);

  /** The layer of `scope`, if it has one. */
  #layerOf(scope: object): Layer<E> | undefined {
    if (scope === this.#lastScope) return this.#lastLayer;
    const layer = this.#scoped.get(scope);
    if (layer !== undefined) {
      this.#lastScope = scope;
      this.#lastLayer = layer;
    }
    return layer;
  }

  #insert(entry: LayerEntry<E>): void {
    let layer: Layer<E>;
    if (entry.scope === undefined) layer = this.#global;
    else {
      let l = this.#layerOf(entry.scope);
      if (l === undefined) {
        l = new LayerRecord<E>();
        this.#scoped.set(entry.scope, l);
        this.#lastScope = entry.scope;
        this.#lastLayer = l;
      }
      layer = l;
    }
    layer.entries.set(entry.name, entry);
    entry.layer = layer;
    this.#touch(layer);
  }

  #delete(entry: LayerEntry<E>, notify = true): void {
    const layer = entry.layer;
    if (layer === undefined) return; // never inserted, or already removed
    entry.layer = undefined;
    layer.entries.delete(entry.name);
    if (entry.scope !== undefined && layer.entries.size === 0) {
      this.#scoped.delete(entry.scope);
      if (this.#lastScope === entry.scope) this.#lastScope = this.#lastLayer = undefined;
    }
    this.#touch(layer);
    if (!notify) return;
    const removed = this.#removeListeners;
    for (let i = 0; i < removed.length; i++) {
      try {
        (removed[i] as (entry: LayerEntry<E>) => void)(entry);
      } catch {
        // a removal can not be refused; the listener's failure is ignored
      }
    }
    if (this.#listeners.length > 0) this.#notify({ kind: 'remove', entry }, false);
  }

  /**
   * Invalidates exactly the merged views a change of `layer` affects: a scoped layer's own
   * cache here (it also depends on the global layer, checked lazily by version in
   * `merged`), and for the global layer the global view (every scoped cache then sees a
   * newer global version). Other scopes' caches stay.
   */
  #touch(layer: Layer<E>): void {
    // A layer's version is a stamp of the global counter: it never repeats, even for a
    // scope whose layer was deleted (emptied) and made again.
    layer.version = ++this.version;
    if (layer === this.#global) this.#globalMerged = undefined;
    else layer.merged = undefined;
  }

  #notify(change: LayerChange<E>, rethrow: boolean): void {
    for (const fn of this.#listeners) {
      if (rethrow) fn(change);
      else {
        try {
          fn(change);
        } catch {
          // a removal can not be refused; the listener's failure is ignored
        }
      }
    }
  }

  /** The entry of `name` in exactly the layer of `scope` (no merging). */
  own(scope: object | undefined, name: string): LayerEntry<E> | undefined {
    return (scope === undefined ? this.#global : this.#layerOf(scope))?.entries.get(name);
  }

  /** The entries of exactly the layer of `scope`, in registration order. */
  layer(scope: object | undefined): ReadonlyMap<string, LayerEntry<E>> {
    return (scope === undefined ? this.#global : this.#layerOf(scope))?.entries ?? EMPTY;
  }

  /**
   * A stamp that changes whenever the layer of exactly `scope` changes (`0` while it has
   * none), never repeating: what a cache over one scope compares instead of
   * {@link Layers.version}, so a change in another scope does not invalidate it.
   */
  layerVersion(scope: object | undefined): number {
    return (scope === undefined ? this.#global : this.#layerOf(scope))?.version ?? 0;
  }

  /** The scopes whose own layer holds an entry named `name`. */
  scopesWith(name: string): object[] {
    const out: object[] = [];
    for (const [scope, layer] of this.#scoped) if (layer.entries.has(name)) out.push(scope);
    return out;
  }

  /** Whether `scope` has a non-empty layer. */
  hasLayer(scope: object): boolean {
    return this.#scoped.has(scope);
  }

  /** Number of scopes that currently have a layer. */
  get scopeCount(): number {
    return this.#scoped.size;
  }

  /**
   * The global layer plus `scope`'s layer only (a scoped entry shadows the global one of
   * the same name). Global entries come first in registration order, then scoped-only
   * names; a shadowing entry keeps the global entry's position. Cached until a layer
   * involved changes.
   */
  merged(scope: object | undefined): ReadonlyMap<string, E> {
    const g = this.#global;
    const layer = scope === undefined ? undefined : this.#layerOf(scope);
    if (layer === undefined) {
      let m = this.#globalMerged;
      if (m === undefined) {
        const out = new Map<string, E>();
        for (const [k, e] of g.entries) out.set(k, e.value);
        this.#globalMerged = m = out;
      }
      return m;
    }
    if (layer.merged !== undefined && layer.mergedGlobal === g.version) return layer.merged;
    const out = new Map<string, E>();
    for (const [k, e] of g.entries) out.set(k, e.value);
    for (const [k, e] of layer.entries) out.set(k, e.value);
    layer.merged = out;
    layer.mergedGlobal = g.version;
    return out;
  }

  /** Every live scoped entry, described for leak reports. */
  liveScoped(): string[] {
    const out: string[] = [];
    for (const [scope, layer] of this.#scoped) {
      for (const name of layer.entries.keys()) out.push(`${this.#kind} "${name}" of scope ${scopeLabel(scope)}`);
    }
    return out;
  }
}

const EMPTY: ReadonlyMap<string, any> = new Map();

