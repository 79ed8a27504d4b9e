/**
 * The shared state of the tools of one server: the scoped layers of registrations, the
 * resolver of what one scope sees (cached per scope), the restrictions and guards of
 * each scope, the in-flight calls of each context and the compiled validators of the
 * tools' parameters.
 */
import type { Server } from '../context/server.js';
import type { SystemContext } from '../context/system-context.js';
import type { EventBus } from '../events/bus.js';
import { ScopedList } from '../registry/scoped-list.js';
import { Layers, RegistrationError, type LayerEntry } from '../scope/layers.js';
import type { JsonObject } from '../util/lossless-json.js';
import { groupSlot } from '../lifetime/groups.js';
import { CallGroup } from './in-flight.js';
import type { ParameterSteps } from './registration.js';
import { passes, type RestrictionRecord } from './restrictions.js';
import { snapshotParameters } from './schema/parameters.js';
import { readToolsPluginOptions, type ReadToolsPluginOptions } from './schema/plugin-options.js';
import { RELEASED_VALIDATORS_MAX, ValidatorCache, type Interned } from './schema/validator-cache.js';
import type { Tool, ToolGuard } from './types.js';

/** The group slot of the tool calls: one {@link CallGroup} per context with calls in flight through it or of its tools. */
const CALLS = groupSlot('tool calls', () => new CallGroup());

/** @internal A raw schema object's template: the interned parameters last made from it. */
interface Template {
  readonly params: JsonObject;
  /** The validator cache's record of `params` when it was last acquired (see `ValidatorCache.retain`). */
  interned: Interned;
  /** Registered again since it was (re)inserted (its second chance against eviction). */
  used: boolean;
}

/** @internal What the registry's snapshot step hands its intern step. */
interface RawParameters {
  readonly raw: unknown;
  readonly params: JsonObject;
  readonly standard: boolean;
  /** The template the snapshot was taken against, if any. */
  readonly entry: Template | undefined;
}

/** @internal One guard. */
export interface GuardRecord {
  readonly fn: ToolGuard;
  readonly scope: object | undefined;
}

/** @internal What one scope resolves to, and the versions it was built from. */
export interface Resolved {
  /** The global layer's version. */
  readonly globalVersion: number;
  /** The scope's own layer's version (`0`: none, and for the global resolution). */
  readonly ownVersion: number;
  /** The scope's restriction list (replaced on every change), `undefined` for none. */
  readonly restrictions: readonly RestrictionRecord[] | undefined;
  readonly byName: ReadonlyMap<string, Tool>;
  readonly list: readonly Tool[];
  readonly known: readonly string[];
}

/** @internal The shared state of the tools of one server. */
export class ToolRegistry {
  readonly server: Server;
  readonly bus: EventBus;
  readonly layers: Layers<Tool>;
  /** The restrictions of each scope (`Tools.restrict`), each owned by the context that made it. */
  readonly restrictions = new ScopedList<RestrictionRecord>('tool restriction');
  /** The guards, global and per scope (`Tools.guard`), each owned by the context that added it. */
  readonly guards = new ScopedList<GuardRecord>('tool guard');
  #globalResolved: Resolved | undefined;
  readonly #resolved = new WeakMap<object, Resolved>();
  /** The options of the `ToolsPlugin` that made this registry, read once. */
  readonly options: ReadToolsPluginOptions;
  /** The compiled validators of the tools' parameters. */
  readonly #validators: ValidatorCache;
  /**
   * The interned parameters last made from each of the most recently registered raw
   * `parameters` objects (see `internParameters`): at most {@link RELEASED_VALIDATORS_MAX},
   * oldest dropped first. A bounded `Map` rather than a `WeakMap`: a `WeakMap` that once
   * held 5,000 schemas keeps its grown table after they are gone.
   */
  readonly #templates = new Map<object, Template>();

  constructor(server: Server, bus: EventBus, options: ReadToolsPluginOptions = readToolsPluginOptions(undefined)) {
    this.server = server;
    this.bus = bus;
    this.options = options;
    this.#validators = new ValidatorCache(options.defaultDialect, options.regExp);
    this.layers = new Layers<Tool>('tool', server);
    this.layers.onRemove((entry) => {
      try {
        this.releaseValidator(entry.value);
      } finally {
        this.#unregistered(entry);
      }
    });
  }

  /** One line per scoped restriction, then per scoped guard, still registered (for `assertNoLeaks`). */
  leaks(): string[] {
    return [...this.restrictions.leaks(), ...this.guards.leaks()];
  }

  /** @internal The in-flight group of `ctx`, made (and tracked on it) on first use. */
  groupOf(ctx: SystemContext): CallGroup {
    // Kept on the context itself (a server has one tools registry): no WeakMap entry per context.
    return ctx.group(CALLS);
  }

  /** The registration of `tool` was undone (its disposer, or its owner's disposal): abort its calls. */
  #unregistered(entry: LayerEntry<Tool>): void {
    // every call through the registration is a member of its owner's group
    const group = entry.ctx.groupIfMade(CALLS);
    if (group === undefined || group.count === 0) return;
    group.abortRegistration(
      entry,
      new RegistrationError(
        `the registration of tool "${entry.name}" was undone (its disposer was called or the context owning it was disposed) while the call was in flight`,
      ),
    );
  }

  /**
   * The registration `name` resolves to for `scope` (its `value` is what
   * `resolve(scope).byName.get(name)` answers), without building the scope's view when it
   * is not cached (a new agent's first call). Its `ctx` owns it.
   */
  lookup(scope: object | undefined, name: string): LayerEntry<Tool> | undefined {
    const layers = this.layers;
    if (scope !== undefined) {
      const own = layers.own(scope, name);
      if (own !== undefined) return own;
    }
    const global = layers.own(undefined, name);
    if (global === undefined) return undefined;
    return scope === undefined || passes(name, this.restrictions.of(scope)) ? global : undefined;
  }

  /**
   * The one resolver: what scope `scope` sees, cached until the global layer, the scope's
   * own layer or the scope's restrictions change (a registration in one agent does not
   * rebuild every other agent's view).
   */
  resolve(scope: object | undefined): Resolved {
    const layers = this.layers;
    const globalVersion = layers.layerVersion(undefined);
    const ownVersion = scope === undefined ? 0 : layers.layerVersion(scope);
    const restrictions = scope === undefined ? undefined : this.restrictions.of(scope);
    const cached = scope === undefined ? this.#globalResolved : this.#resolved.get(scope);
    if (cached !== undefined && cached.globalVersion === globalVersion && cached.ownVersion === ownVersion && cached.restrictions === restrictions) return cached;
    const global = layers.layer(undefined);
    const own = scope === undefined ? undefined : layers.layer(scope);
    if (scope !== undefined && (own === undefined || own.size === 0) && restrictions === undefined) {
      const g = this.resolve(undefined);
      this.#resolved.set(scope, g);
      return g;
    }
    const byName = new Map<string, Tool>();
    const known: string[] = [];
    for (const [name, e] of global) {
      known.push(name);
      const mine = own?.get(name);
      if (mine !== undefined) byName.set(name, mine.value);
      else if (passes(name, restrictions)) byName.set(name, e.value);
    }
    if (own !== undefined) {
      for (const [name, e] of own) {
        if (global.has(name)) continue;
        known.push(name);
        byName.set(name, e.value);
      }
    }
    const r: Resolved = { globalVersion, ownVersion, restrictions, byName, list: Object.freeze([...byName.values()]), known: Object.freeze(known) };
    if (scope === undefined) this.#globalResolved = r;
    else this.#resolved.set(scope, r);
    return r;
  }

  /**
   * The parameters step of `Tools.register`, in two halves around the rest of the
   * definition's checks: `snapshot` takes the definition's raw `parameters` (see
   * `snapshotParameters`), against a template when the same raw schema object was
   * registered recently; `intern` runs last, once nothing else can refuse the definition,
   * and takes the validator reference: identical schemas (by JSON text) share one
   * deep-frozen object and one compiled validator, reference-counted (see `ValidatorCache`;
   * refused with a `ToolSchemaError` naming the tool and the schema path).
   *
   * The template is the interned parameters last made from that raw object: registering the
   * same unchanged schema object again (every agent registering the same tools) still reads
   * and checks all of it, but copies, freezes and serializes nothing. The last
   * `RELEASED_VALIDATORS_MAX` raw JSON Schema objects used are kept (strongly) for this;
   * Standard Schemas are converted anew each time, so none of them is kept.
   */
  readonly parameterSteps: ParameterSteps<RawParameters> = {
    snapshot: (toolName, raw, target) => {
      const entry = raw !== null && typeof raw === 'object' ? this.#templates.get(raw) : undefined;
      const { params, standard } = snapshotParameters(toolName, raw, target, entry?.params);
      return { raw, params, standard, entry };
    },
    intern: (toolName, snap) => {
      const entry = snap.entry;
      // The snapshot is the template itself (so a plain JSON object, not a converted
      // Standard Schema) and a live tool still shares its validator: one more reference,
      // without the cache's lookups by parameters and by JSON text.
      if (entry !== undefined && snap.params === entry.params && this.#validators.retain(entry.interned)) {
        entry.used = true;
        return entry.params;
      }
      const interned = this.#validators.acquire(toolName, snap.params);
      const params = interned.params;
      const raw = snap.raw;
      if (snap.standard || raw === null || typeof raw !== 'object') return params;
      if (entry !== undefined && params === entry.params) {
        entry.used = true; // a hit: field writes
        entry.interned = interned; // re-interned after an eviction: retain it next time
        return params;
      }
      const templates = this.#templates;
      templates.delete(raw);
      templates.set(raw, { params, interned, used: false });
      // Oldest first, with a second chance: an entry used since it was (re)inserted goes
      // back to the end instead of out, so a schema in constant use is never evicted.
      while (templates.size > RELEASED_VALIDATORS_MAX) {
        const [oldest, e] = templates.entries().next().value as [object, Template];
        templates.delete(oldest);
        if (e.used) {
          e.used = false;
          templates.set(oldest, e);
        }
      }
      return params;
    },
  };

  /** Drops one reference to a tool's interned parameters (see {@link ValidatorCache.release}). */
  releaseValidator(tool: Tool): void {
    this.#validators.release(tool.parameters);
  }

  /** Validates arguments with the tool's one compiled validator; returns what is wrong, or `undefined` when valid. */
  validate(tool: Tool, args: unknown): string | undefined {
    return this.#validators.validate(tool.parameters, args);
  }

  /** Number of compiled validators used by live tools (for tests). */
  get validatorCount(): number {
    return this.#validators.liveCount;
  }

  /** Number of released validators kept for reuse, at most `RELEASED_VALIDATORS_MAX` (for tests). */
  get releasedValidatorCount(): number {
    return this.#validators.releasedCount;
  }
}
