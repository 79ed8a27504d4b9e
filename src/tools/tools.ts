/**
 * The tools registry: one shared {@link ToolRegistry} per server and a {@link Tools} view
 * per context (`ctx.get(Tools)`), whose registrations belong to `scopeOf(ctx)`.
 */
import type { Server } from '../context/server.js';
import { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import type { Plugin } from '../context/plugin.js';
import { setProvider } from '../context/provider-hints.js';
import { installEvents } from '../events/events.js';
import type { EventBus } from '../events/bus.js';
import { Layers, RegistrationError, scopeLabel, type LayerEntry } from '../scope/layers.js';
import { NotLosslessJsonError, snapshotJson, thawJson, type JsonObject } from './lossless-json.js';
import { RELEASED_VALIDATORS_MAX, ValidatorCache, type Interned } from './schema/validator-cache.js';
import { snapshotParameters } from './schema/parameters.js';
import { standardTarget } from './schema/dialects.js';
import { readToolsPluginOptions, type ReadToolsPluginOptions, type ToolsPluginOptions } from './schema/plugin-options.js';
import { executeCall } from './pipeline.js';
import type { ExecuteOptions, Tool, ToolCall, ToolDefinition, ToolGuard, ToolResult, ToolRestriction, ToolSchema } from './types.js';
import { CallGroup } from './in-flight.js';
import { ownedBy } from '../disposal/owned.js';
import { ContextView } from '../scope/context-view.js';
import { assertReadableScope } from '../scope/live.js';

/** @internal The parameters step of `snapshotDefinition`: a snapshot, then (last) the interning. */
export interface ParameterSteps<S> {
  readonly snapshot: (toolName: string, raw: unknown, target: string) => S;
  readonly intern: (toolName: string, snap: S) => JsonObject;
}

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

/** @internal One restriction of a scope. */
interface RestrictionRecord {
  readonly allow: ReadonlySet<string> | undefined;
  readonly deny: ReadonlySet<string> | undefined;
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

const NO_GUARDS: readonly GuardRecord[] = Object.freeze([]);

/** @internal The shared state of the tools of one server. */
export class ToolRegistry {
  readonly server: Server;
  readonly bus: EventBus;
  readonly layers: Layers<Tool>;
  readonly #restrictions = new Map<object, readonly RestrictionRecord[]>();
  globalGuards: readonly GuardRecord[] = NO_GUARDS;
  readonly scopedGuards = new Map<object, readonly GuardRecord[]>();
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
    server._leakProbes.add(() => {
      const out: string[] = [];
      for (const [scope, list] of this.#restrictions) for (let i = 0; i < list.length; i++) out.push(`tool restriction of scope ${scopeLabel(scope)}`);
      for (const [scope, list] of this.scopedGuards) for (let i = 0; i < list.length; i++) out.push(`tool guard of scope ${scopeLabel(scope)}`);
      return out;
    });
  }

  /** @internal The in-flight group of `ctx`, made (and tracked on it) on first use. */
  groupOf(ctx: SystemContext): CallGroup {
    // Kept on the context itself (a server has one tools registry): no WeakMap entry per context.
    const x = ctx._x();
    let g = x.calls as CallGroup | undefined;
    if (g === undefined) {
      g = new CallGroup();
      x.calls = g;
      ctx._track(g);
    }
    return g;
  }

  /** The registration of `tool` was undone (its disposer, or its owner's disposal): abort its calls. */
  #unregistered(entry: LayerEntry<Tool>): void {
    // every call through the registration is a member of its owner's group
    const group = entry.ctx._extra?.calls as CallGroup | undefined;
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
    return scope === undefined || passes(name, this.#restrictions.get(scope)) ? global : undefined;
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
    const restrictions = scope === undefined ? undefined : this.#restrictions.get(scope);
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

  addRestriction(ctx: SystemContext, scope: object, rec: RestrictionRecord): () => void {
    this.#restrictions.set(scope, [...(this.#restrictions.get(scope) ?? []), rec]);
    const remove = (): void => {
      const list = this.#restrictions.get(scope);
      if (list === undefined || !list.includes(rec)) return;
      const next = list.filter((r) => r !== rec);
      if (next.length === 0) this.#restrictions.delete(scope);
      else this.#restrictions.set(scope, next);
      };
    return ownedBy(ctx, remove);
  }

  addGuard(ctx: SystemContext, rec: GuardRecord): () => void {
    const scope = rec.scope;
    if (scope === undefined) this.globalGuards = [...this.globalGuards, rec];
    else this.scopedGuards.set(scope, [...(this.scopedGuards.get(scope) ?? []), rec]);
    const remove = (): void => {
      if (scope === undefined) {
        this.globalGuards = this.globalGuards.filter((g) => g !== rec);
        return;
      }
      const list = this.scopedGuards.get(scope);
      if (list === undefined) return;
      const next = list.filter((g) => g !== rec);
      if (next.length === 0) this.scopedGuards.delete(scope);
      else this.scopedGuards.set(scope, next);
    };
    return ownedBy(ctx, remove);
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

function passes(name: string, restrictions: readonly RestrictionRecord[] | undefined): boolean {
  if (restrictions === undefined) return true;
  for (const r of restrictions) {
    if (r.allow !== undefined && !r.allow.has(name)) return false;
    if (r.deny !== undefined && r.deny.has(name)) return false;
  }
  return true;
}


/**
 * The tools registry and the token it is installed under (by {@link ToolsPlugin}).
 * `ctx.get(Tools)` returns a view bound to `ctx`: what it registers belongs to the layer
 * of `scopeOf(ctx)` (the global layer for an unscoped context) and is owned by `ctx`;
 * what it reads without a `scope` argument is resolved for `scopeOf(ctx)`. An explicit
 * `scope` must be the view's own scope key or a live one (made by `createScope`, its
 * disposal not started; an agent's key dies when its disposal starts): the reads throw a
 * TypeError for any other key and `execute` answers `INVALID_ARGS`.
 *
 * Resolution for scope K is the global layer plus K's own layer only: a K tool shadows a
 * global tool of the same name, K's restrictions mask global tools, and a tool of
 * another scope (or a restricted-away one) is indistinguishable from a missing one.
 *
 * @example
 * ```ts
 * const tools = agent.ctx.get(Tools);
 * tools.register({ name: 'search', description: 'Search the web', parameters: { type: 'object' },
 *   execute: async (args) => `results for ${JSON.stringify(args)}` });
 * tools.restrict({ deny: ['shell'] });
 * const result = await tools.execute({ callId: 'c1', name: 'search', arguments: { q: 'x' } });
 * ```
 */
export class Tools extends ContextView<ToolRegistry> {
  /**
   * Registers a tool in this view's layer, owned by this view's context. The definition
   * is snapshotted: each field is read once, `parameters` must be lossless JSON and a
   * valid JSON Schema, `execute` is bound to the definition object and the stored record
   * is deep-frozen. Returns an idempotent disposer.
   *
   * @throws TypeError for a malformed definition (`tool parameters must be losslessly
   *   JSON-serializable` for exotic parameters); `ToolSchemaError` (a TypeError
   *   naming the tool and the schema path) for a schema refused by the rules above
   *   (see `ToolsPluginOptions`); `RegistrationError` (`already registered`) for a
   *   duplicate name in the layer.
   */
  register<A = unknown>(definition: ToolDefinition<A>): () => void {
    const ctx = this.context;
    ctx._live('Tools.register()');
    const reg = this.registry;
    // The parameters are interned last, once everything else was checked: a refused
    // definition holds no validator reference.
    const tool = snapshotDefinition(definition, standardTarget(reg.options.defaultDialect), reg.parameterSteps);
    try {
      return this.registry.layers.add(ctx, tool.name, tool);
    } catch (err) {
      this.registry.releaseValidator(tool);
      throw err;
    }
  }

  /**
   * Masks global tools for this view's scope: with `allow`, only the named global tools
   * stay visible (`allow: []` hides every one); with `deny`, the named ones are hidden.
   * Restrictions of one scope intersect; they never hide the scope's own tools. Only
   * through a scoped context. Returns an idempotent disposer.
   *
   * @throws RegistrationError (`requires a scoped context`) on an unscoped view, or for a
   *   name the scope does not know (`unknown tool "x"; known tools for this scope: ...`);
   *   TypeError for `{}` (`no-op`) or malformed lists.
   */
  restrict(restriction: ToolRestriction): () => void {
    const ctx = this.context;
    ctx._live('Tools.restrict()');
    const scope = ctx._scopeKey;
    if (scope === undefined) {
      throw new RegistrationError(
        'Tools.restrict() requires a scoped context: a restriction masks global tools for one agent, so call it ' +
          "through that agent's context (agent.ctx, or createScope(ctx, key).ctx). To remove a tool for everyone, dispose its registration.",
      );
    }
    if (restriction === null || typeof restriction !== 'object') {
      throw new TypeError(`Tools.restrict(restriction): restriction must be { allow?, deny? }, got ${describeValue(restriction)}.`);
    }
    const allow = copyNames(readField(restriction, 'allow', 'Tools.restrict'), 'allow');
    const deny = copyNames(readField(restriction, 'deny', 'Tools.restrict'), 'deny');
    if (allow === undefined && (deny === undefined || deny.length === 0)) {
      throw new TypeError(
        'Tools.restrict({}) is a no-op: pass allow (the global tools to keep; [] hides all of them) and/or a non-empty deny list.',
      );
    }
    const known = this.registry.resolve(scope).known;
    const knownSet = new Set(known);
    for (const n of [...(allow ?? []), ...(deny ?? [])]) {
      if (!knownSet.has(n)) {
        throw new RegistrationError(
          `Tools.restrict(): unknown tool "${n}"; known tools for this scope: ${known.length === 0 ? '(none)' : known.join(', ')}`,
        );
      }
    }
    return this.registry.addRestriction(ctx, scope, {
      allow: allow === undefined ? undefined : new Set(allow),
      deny: deny === undefined ? undefined : new Set(deny),
    });
  }

  /**
   * Adds a deny-only guard for this view's scope (global on an unscoped view). It runs
   * after the `tools/pre-execute` waterfall allowed a call (global guards first, then the
   * scope's, in registration order); the first string it returns denies the call, and a
   * throwing guard denies too. Returns an idempotent disposer.
   */
  guard(fn: ToolGuard): () => void {
    const ctx = this.context;
    ctx._live('Tools.guard()');
    if (typeof fn !== 'function') throw new TypeError(`Tools.guard(fn): fn must be a function, got ${describeValue(fn)}.`);
    return this.registry.addGuard(ctx, { fn, scope: ctx._scopeKey });
  }

  /**
   * The stored (frozen) tool `name` resolves to for `scope` (omitted: this view's scope).
   *
   * @param scope - this view's own scope key or a live scope key.
   * @throws TypeError when `scope` is neither this view's own scope nor a live scope key
   *   (never made by `createScope`, or its scope's disposal has started, as an agent's
   *   key from `agent/disposed` on); `ContextDisposedError` on a disposed view.
   */
  get(name: string, scope?: object): Tool | undefined {
    return this.registry.resolve(this.#scopeArg(scope, 'get(name, scope)')).byName.get(name);
  }

  /**
   * The tools `scope` sees (omitted: this view's scope), as a frozen array of stored tools.
   *
   * @param scope - this view's own scope key or a live scope key.
   * @throws TypeError when `scope` is neither this view's own scope nor a live scope key;
   *   `ContextDisposedError` on a disposed view.
   */
  visible(scope?: object): readonly Tool[] {
    return this.registry.resolve(this.#scopeArg(scope, 'visible(scope)')).list;
  }

  /**
   * Detached `{ name, description, parameters }` of the tools `scope` sees (omitted: this
   * view's scope).
   *
   * @param scope - this view's own scope key or a live scope key.
   * @throws TypeError when `scope` is neither this view's own scope nor a live scope key;
   *   `ContextDisposedError` on a disposed view.
   */
  schemas(scope?: object): ToolSchema[] {
    return this.registry.resolve(this.#scopeArg(scope, 'schemas(scope)')).list.map(schemaOf);
  }

  /**
   * Every tool name `scope` knows before restrictions (omitted: this view's scope): global
   * names, then its own.
   *
   * @param scope - this view's own scope key or a live scope key.
   * @throws TypeError when `scope` is neither this view's own scope nor a live scope key;
   *   `ContextDisposedError` on a disposed view.
   */
  knownNames(scope?: object): string[] {
    return [...this.registry.resolve(this.#scopeArg(scope, 'knownNames(scope)')).known];
  }

  /**
   * Runs one tool call through the pipeline (see docs/agents-scopes-registries.md):
   * resolve → validate → `tools/pre-execute` → guards → `tools/execute` →
   * `tools/post-execute` → `tools/result`. Never throws or rejects: it resolves to a
   * frozen result whose `error.code` says what went wrong.
   *
   * This view's context is the call's *calling context*: the body, guards and `Approval`
   * receive it; its disposal (or an ancestor's) aborts the call and awaits its body.
   *
   * Every call, refused ones included, is one trace on the `polestar:tool` tracing
   * channel while it has subscribers (see `POLESTAR_CHANNELS`).
   *
   * @param call - the model's call; `scope`, when given, must be this view's own scope or
   *   a live scope key (else `INVALID_ARGS`).
   * @param options - `shown`: what the model was shown (an assembly or tool names); a tool
   *   not in it is `UNKNOWN_TOOL`.
   */
  execute(call: ToolCall, options?: ExecuteOptions): Promise<ToolResult> {
    return executeCall(this.registry, this.context, call, options);
  }

  /**
   * The scope a read resolves for: this view's own for an omitted `scope`; an explicit one
   * must be a scope key that is this view's own or live, never read as the
   * bare global layer.
   */
  #scopeArg(scope: unknown, call: string): object | undefined {
    const ctx = this.context;
    // A disposed context's view reads nothing (as its execute finds nothing).
    if (ctx._state !== 0) ctx._live(`Tools.${call.slice(0, call.indexOf('('))}()`);
    if (scope === undefined) return ctx._scopeKey;
    if (scope === ctx._scopeKey) return scope;
    if (scope === null || (typeof scope !== 'object' && typeof scope !== 'function') || scope instanceof SystemContext) {
      throw new TypeError(`Tools.${call}: scope must be a scope key (an object or function) or omitted, got ${describeValue(scope)}; for a context pass scopeOf(ctx).`);
    }
    assertReadableScope(ctx, scope, `Tools.${call}`, "read through a live scope, or omit scope to use the view's own");
    return scope;
  }
}

/** Reads `obj[key]` once, turning a throwing getter into a TypeError. */
function readField(obj: object, key: string, where: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    throw new TypeError(`${where}: reading "${key}" threw: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function copyNames(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new TypeError(`Tools.restrict(): ${field} must be an array of tool names, got ${describeValue(value)}.`);
  const out = Array.from(value as unknown[]);
  for (const n of out) {
    if (typeof n !== 'string') throw new TypeError(`Tools.restrict(): ${field} must contain tool names (strings), got ${describeValue(n)}.`);
  }
  return out as string[];
}

/**
 * @internal Snapshots a definition into a deep-frozen stored tool; a Standard Schema
 * `parameters` is converted to JSON Schema with `target` (the registry's default dialect).
 */
export function snapshotDefinition<S>(def: unknown, target: string, steps: ParameterSteps<S>): Tool {
  if (def === null || typeof def !== 'object') {
    throw new TypeError(`Tools.register(definition): definition must be an object { name, description, parameters, execute }, got ${describeValue(def)}.`);
  }
  // Each field read once, in this order; one try for all six (a throwing getter names its field).
  const d = def as Record<string, unknown>;
  let field = 'name';
  let name: unknown, description: unknown, parameters: unknown, execute: unknown, timeoutMs: unknown, annotations: unknown;
  try {
    name = d.name;
    field = 'description';
    description = d.description;
    field = 'parameters';
    parameters = d.parameters;
    field = 'execute';
    execute = d.execute;
    field = 'timeoutMs';
    timeoutMs = d.timeoutMs;
    field = 'annotations';
    annotations = d.annotations;
  } catch (err) {
    throw new TypeError(`Tools.register: reading "${field}" threw: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`Tools.register(definition): name must be a non-empty string, got ${describeValue(name)}.`);
  }
  if (typeof description !== 'string') {
    throw new TypeError(`Tools.register(${name}): description must be a string, got ${describeValue(description)}.`);
  }
  if (typeof execute !== 'function') {
    throw new TypeError(`Tools.register(${name}): execute must be a function, got ${describeValue(execute)}.`);
  }
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2_147_483_647)) {
    throw new TypeError(`Tools.register(${name}): timeoutMs must be a positive number of milliseconds, got ${describeValue(timeoutMs)}.`);
  }
  const snap = steps.snapshot(name, parameters, target);
  const binding = bindingOf(def, execute as (...a: unknown[]) => unknown);
  const annotationsSnap = annotations === undefined ? undefined : snapshotAnnotations(name, annotations);
  // Last: nothing after it can throw, so a refused definition holds no validator reference.
  const params = steps.intern(name, snap);
  // The same definition registered again, unchanged (every agent registering the same
  // tools): the record made last time is equal field for field and frozen, so it is the
  // record again (see `bindingOf`). With annotations, a new record (their snapshot is new).
  const last = binding.tool;
  if (
    last !== undefined &&
    annotationsSnap === undefined &&
    last.annotations === undefined &&
    last.name === name &&
    last.description === description &&
    last.parameters === params &&
    last.timeoutMs === timeoutMs
  ) {
    return last;
  }
  const tool: { -readonly [K in keyof Tool]: Tool[K] } = { name, description, parameters: params, execute: binding.bound };
  if (timeoutMs !== undefined) tool.timeoutMs = timeoutMs as number;
  if (annotationsSnap !== undefined) tool.annotations = annotationsSnap;
  Object.freeze(tool);
  binding.tool = tool;
  return tool;
}

/** What a definition object was last registered as: its `execute`, bound, and the stored record made. */
interface Binding {
  readonly execute: (...a: unknown[]) => unknown;
  readonly bound: (...a: unknown[]) => unknown;
  /** The last record made with this binding (reused while every other field is equal). */
  tool: Tool | undefined;
}

/**
 * The binding of each definition object registered, weakly (a definition is never kept
 * alive by it, nor is its schema). A `WeakMap` keeps its grown table after its keys are
 * gone (10,000 concurrent agents with their own definitions left +1.8 MB), so it is
 * replaced by an empty one every {@link BOUND_RENEW} new bindings: a shared definition is
 * then bound once more.
 */
let boundByDefinition = new WeakMap<object, Binding>();
let boundSinceRenew = 0;
const BOUND_RENEW = 1024;

/**
 * `execute` bound to `def`, frozen. The same definition object registered again with the
 * same `execute` (every agent registering the same tools) gets the same bound function,
 * and (when every other field is equal too) the same stored record: both are immutable,
 * so sharing them is indistinguishable from making them anew except by identity, and
 * nothing in polestar takes a record's identity for its registration's (a call is tied to
 * its registration, see `CallState.registration`). Binding and freezing are most of a
 * registration's own cost after the schema check.
 */
function bindingOf(def: object, execute: (...a: unknown[]) => unknown): Binding {
  const known = boundByDefinition.get(def);
  if (known !== undefined && known.execute === execute) return known;
  const binding: Binding = { execute, bound: Object.freeze(execute.bind(def)), tool: undefined };
  if (++boundSinceRenew > BOUND_RENEW) {
    boundByDefinition = new WeakMap();
    boundSinceRenew = 0;
  }
  boundByDefinition.set(def, binding);
  return binding;
}

/** Snapshots a definition's `annotations`: a lossless JSON object, deep-frozen. */
function snapshotAnnotations(name: string, annotations: unknown): JsonObject {
  let snap;
  try {
    snap = snapshotJson(annotations, `Tools.register(${name}): tool annotations`, 'annotations');
  } catch (err) {
    if (err instanceof NotLosslessJsonError) throw err;
    throw new TypeError(`Tools.register(${name}): annotations could not be read: ${describeValue(err)}.`);
  }
  if (snap === null || typeof snap !== 'object' || Array.isArray(snap)) {
    throw new TypeError(`Tools.register(${name}): annotations must be a JSON object such as { readOnlyHint: true }, got ${describeValue(annotations)}.`);
  }
  return snap as JsonObject;
}

const registries = new WeakMap<Server, ToolRegistry>();

/** @internal The tools registry of `server`, `undefined` when `ToolsPlugin` was not added. */
export function toolRegistryOf(server: Server): ToolRegistry | undefined {
  return registries.get(server);
}

/** @internal The detached schemas scope `scope` sees, `undefined` when `ToolsPlugin` was not added. */
export function toolSchemasOf(server: Server, scope: object | undefined): ToolSchema[] | undefined {
  const reg = registries.get(server);
  return reg === undefined ? undefined : reg.resolve(scope).list.map(schemaOf);
}

function schemaOf(t: Tool): ToolSchema {
  const s: ToolSchema = { name: t.name, description: t.description, parameters: thawJson(t.parameters) as ToolSchema['parameters'] };
  if (t.annotations !== undefined) s.annotations = thawJson(t.annotations) as NonNullable<ToolSchema['annotations']>;
  return s;
}

/**
 * Installs {@link Tools} (and the shared `Events`, once) on the server. Plugin id `tools`.
 * `new ToolsPlugin({ defaultDialect: '2020-12' })` reads tool schemas without `$schema`
 * as JSON Schema 2020-12 (MCP's default) instead of draft-07; see
 * {@link ToolsPluginOptions} for how schemas are read and checked.
 */
export class ToolsPlugin implements Plugin {
  /** The plugin id. */
  readonly id = 'tools';
  readonly #options: ReadToolsPluginOptions;

  /**
   * @param options - `{ defaultDialect? }`, read once.
   * @throws TypeError for an option that is not one of the documented values.
   */
  constructor(options?: ToolsPluginOptions) {
    this.#options = readToolsPluginOptions(options);
  }

  /** Installs `Tools` and `Events`. */
  build(server: Server): void {
    const bus = installEvents(server);
    if (registries.has(server)) return;
    const reg = new ToolRegistry(server, bus, this.#options);
    registries.set(server, reg);
    server.insertGlobalView(Tools, (ctx) => new Tools(reg, ctx));
  }
}

setProvider(Tools, 'it is installed by ToolsPlugin: call server.addPlugins(new ToolsPlugin()) before server.finish()');
