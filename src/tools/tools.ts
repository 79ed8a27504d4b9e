/**
 * The tools registry as a context sees it: one shared {@link ToolRegistry} per server and
 * a {@link Tools} view per context (`ctx.get(Tools)`), whose registrations belong to
 * `scopeOf(ctx)`, and the {@link ToolsPlugin} that installs them.
 */
import type { Server } from '../context/server.js';
import { describeValue } from '../context/token.js';
import type { Plugin } from '../context/plugin.js';
import { definePlugin } from '../registry/define-plugin.js';
import { explicitScope } from '../registry/explicit-scope.js';
import { RegistrationError } from '../scope/layers.js';
import { thawJson } from '../util/lossless-json.js';
import { standardTarget } from './schema/dialects.js';
import { readToolsPluginOptions, type ReadToolsPluginOptions, type ToolsPluginOptions } from './schema/plugin-options.js';
import { executeCall } from './pipeline.js';
import { snapshotDefinition } from './registration.js';
import { ToolRegistry } from './registry.js';
import { copyNames } from './restrictions.js';
import { readQuotedField } from '../util/read-field.js';
import type { ExecuteOptions, Tool, ToolCall, ToolDefinition, ToolGuard, ToolResult, ToolRestriction, ToolSchema } from './types.js';
import { ContextView } from '../scope/context-view.js';

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
    const allow = copyNames(readQuotedField(restriction, 'allow', 'Tools.restrict'), 'allow');
    const deny = copyNames(readQuotedField(restriction, 'deny', 'Tools.restrict'), 'deny');
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
    return this.registry.restrictions.add(ctx, scope, {
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
    const scope = ctx._scopeKey;
    return this.registry.guards.add(ctx, scope, { fn, scope });
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
    // the common reads build no message
    if (scope === undefined || scope === ctx._scopeKey) return ctx._scopeKey;
    return explicitScope(ctx, scope, `Tools.${call}`, "read through a live scope, or omit scope to use the view's own", 'an object or function');
  }
}

/** How {@link ToolsPlugin} installs the tools registry: one per server, `Tools` bound to each context. */
const toolsKind = definePlugin<ToolRegistry, Tools>({
  plugin: 'ToolsPlugin',
  token: Tools,
  view: (registry) => (ctx) => new Tools(registry, ctx),
  leaks: (registry) => registry.leaks(),
  once: 'reuse',
  installedBy: 'server.addPlugins(new ToolsPlugin())',
});

/** @internal The tools registry of `server`, `undefined` when `ToolsPlugin` was not added. */
export function toolRegistryOf(server: Server): ToolRegistry | undefined {
  return toolsKind.of(server);
}

/** @internal The detached schemas scope `scope` sees, `undefined` when `ToolsPlugin` was not added. */
export function toolSchemasOf(server: Server, scope: object | undefined): ToolSchema[] | undefined {
  const reg = toolsKind.of(server);
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
    toolsKind.install(server, (bus) => new ToolRegistry(server, bus, this.#options));
  }
}
