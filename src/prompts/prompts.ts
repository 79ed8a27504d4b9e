/**
 * The prompts registry: sections, variables and protections per scope, assembled into
 * `{ sections, tools, variables }` and rendered with `{{name}}` interpolation.
 */
import type { Plugin } from '../context/plugin.js';
import type { Server } from '../context/server.js';
import { describeValue } from '../context/token.js';
import type { EventBus } from '../events/bus.js';
import { definePlugin } from '../registry/define-plugin.js';
import { explicitScope } from '../registry/explicit-scope.js';
import { ScopedList } from '../registry/scoped-list.js';
import { Layers, RegistrationError } from '../scope/layers.js';
import { scopeLabel } from '../util/scope-label.js';
import { toolSchemasOf } from '../tools/tools.js';
import type { ToolSchema } from '../tools/types.js';
import { restoreProtected } from './restore.js';
import type {
  AssembleOptions,
  AssembledSection,
  PromptAssembly,
  PromptContext,
  PromptProtection,
  SectionDefinition,
  SectionText,
  VariableProvider,
} from './types.js';
import { ContextView } from '../scope/context-view.js';
import { branded } from '../util/brand.js';
import { errorText } from '../util/error-text.js';
import { readQuotedField } from '../util/read-field.js';

/** A prompt could not be assembled or rendered (unknown variable, bad section text, malformed assembly). */
export class PromptError extends Error {
  /**
   * True when `value` is an instance of `PromptError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'PromptError');
  /** Always `'PromptError'`. */
  override readonly name = 'PromptError';
}

interface SectionRecord {
  readonly name: string;
  readonly order: number;
  readonly text: SectionText;
}

interface ProtectionRecord {
  readonly sections: ReadonlySet<string>;
  readonly tools: ReadonlySet<string>;
}

/** @internal The shared prompt state of one server. */
export class PromptRegistry {
  readonly server: Server;
  readonly bus: EventBus;
  readonly sections: Layers<SectionRecord>;
  readonly variables: Layers<VariableProvider>;
  /** The protections, global and per scope, each owned by the context that registered it. */
  readonly protections = new ScopedList<ProtectionRecord>('prompt protection');

  constructor(server: Server, bus: EventBus) {
    this.server = server;
    this.bus = bus;
    this.sections = new Layers<SectionRecord>('prompt section', server);
    this.variables = new Layers<VariableProvider>('prompt variable', server);
  }

  /** Whether a global protection covers section `name`. */
  globallyProtectedSection(name: string): boolean {
    return this.protections.global.some((p) => p.sections.has(name));
  }

  /** Union of the global protections and `scope`'s. */
  protectedNames(scope: object | undefined): { sections: Set<string>; tools: Set<string> } {
    const sections = new Set<string>();
    const tools = new Set<string>();
    addNames(this.protections.global, sections, tools);
    if (scope !== undefined) addNames(this.protections.of(scope), sections, tools);
    return { sections, tools };
  }
}

function addNames(list: readonly ProtectionRecord[] | undefined, sections: Set<string>, tools: Set<string>): void {
  if (list === undefined) return;
  for (const p of list) {
    for (const s of p.sections) sections.add(s);
    for (const t of p.tools) tools.add(t);
  }
}

/**
 * The prompts registry and the token it is installed under (by {@link PromptsPlugin}).
 * `ctx.get(Prompts)` returns a view bound to `ctx`: sections, variables and protections
 * it registers belong to the layer of `scopeOf(ctx)` and are owned by `ctx`.
 *
 * `assemble()` without a scope assembles for the view's own scope (as `Tools` reads do),
 * so an agent's turn never falls back to the global prompt by omission.
 *
 * @example
 * ```ts
 * app.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You are helpful.' });
 * agent.ctx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research {{topic}}.' });
 * agent.ctx.get(Prompts).variable('topic', () => 'tides');
 * const prompts = agent.ctx.get(Prompts);
 * const text = prompts.render(await prompts.assemble()); // "You research tides."
 * ```
 */
export class Prompts extends ContextView<PromptRegistry> {
  /**
   * Registers a section (name, order and text are read once and copied). A scoped
   * section replaces the global section of the same name in that scope's assemblies,
   * unless that name is protected globally. Returns an idempotent disposer.
   *
   * @throws TypeError for a malformed definition; `RegistrationError` for a duplicate
   *   name in the layer (`already registered`) or a scoped shadow of a globally
   *   protected section.
   */
  section(definition: SectionDefinition): () => void {
    const ctx = this.context;
    ctx._live('Prompts.section()');
    if (definition === null || typeof definition !== 'object') {
      throw new TypeError(`Prompts.section(definition): definition must be { name, order, text }, got ${describeValue(definition)}.`);
    }
    const name = read(definition, 'name', 'Prompts.section');
    const order = read(definition, 'order', 'Prompts.section');
    const text = read(definition, 'text', 'Prompts.section');
    if (typeof name !== 'string' || name.length === 0) throw new TypeError(`Prompts.section(): name must be a non-empty string, got ${describeValue(name)}.`);
    if (typeof order !== 'number' || !Number.isFinite(order)) throw new TypeError(`Prompts.section(${name}): order must be a finite number, got ${describeValue(order)}.`);
    if (typeof text !== 'string' && typeof text !== 'function') {
      throw new TypeError(`Prompts.section(${name}): text must be a string or a function ({ scope, ctx }) => string, got ${describeValue(text)}.`);
    }
    const scope = ctx._scopeKey;
    if (scope !== undefined && this.registry.globallyProtectedSection(name)) {
      throw new RegistrationError(
        `Prompts.section(): prompt section "${name}" is protected globally and can not be shadowed in a scope; ` +
          'choose another section name for the scoped text.',
      );
    }
    return this.registry.sections.add(ctx, name, Object.freeze({ name, order, text: text as SectionText }));
  }

  /**
   * Registers a variable for `{{name}}` interpolation: a string, or a (possibly async)
   * function of `{ scope, ctx }` evaluated at each assembly. Returns an idempotent disposer.
   */
  variable(name: string, provider: VariableProvider): () => void {
    const ctx = this.context;
    ctx._live('Prompts.variable()');
    if (typeof name !== 'string' || !/^[^{}\s]+$/.test(name)) {
      throw new TypeError(`Prompts.variable(name, provider): name must be a non-empty string without spaces or braces, got ${describeValue(name)}.`);
    }
    if (typeof provider !== 'string' && typeof provider !== 'function') {
      throw new TypeError(`Prompts.variable(${name}, provider): provider must be a string or a function ({ scope, ctx }) => string, got ${describeValue(provider)}.`);
    }
    return this.registry.variables.add(ctx, name, provider);
  }

  /**
   * Protects section and tool names for this view's scope (global on an unscoped view):
   * after the `prompt/assemble` waterfall, each protected name is restored to its
   * canonical definition and presence (a fabricated entry of a name the canonical
   * assembly lacks is removed). A global section protection also reserves the name
   * against scoped shadowing. Returns an idempotent disposer.
   *
   * @throws TypeError for `{}` (`no-op`) or malformed lists; `RegistrationError` when a
   *   global section protection names a section some scope already shadows.
   */
  protect(protection: PromptProtection): () => void {
    const ctx = this.context;
    ctx._live('Prompts.protect()');
    if (protection === null || typeof protection !== 'object') {
      throw new TypeError(`Prompts.protect(protection): protection must be { sections?, tools? }, got ${describeValue(protection)}.`);
    }
    const sections = names(read(protection, 'sections', 'Prompts.protect'), 'sections');
    const tools = names(read(protection, 'tools', 'Prompts.protect'), 'tools');
    if (sections.length === 0 && tools.length === 0) {
      throw new TypeError('Prompts.protect({}) is a no-op: name at least one section or tool to protect.');
    }
    const scope = ctx._scopeKey;
    if (scope === undefined) {
      for (const s of sections) {
        const shadows = this.registry.sections.scopesWith(s);
        if (shadows.length > 0) {
          throw new RegistrationError(
            `Prompts.protect(): can not protect prompt section "${s}" globally: it is already shadowed in scope(s) ${shadows.map(scopeLabel).join(', ')}; ` +
              'dispose those scoped sections first.',
          );
        }
      }
    }
    return this.registry.protections.add(ctx, scope, { sections: new Set(sections), tools: new Set(tools) });
  }

  /**
   * Assembles the prompt for `scope` (omitted: this view's scope): sections merged by
   * name (scoped replaces global) and sorted by `order`, the tool schemas `Tools` shows
   * that scope (none without `ToolsPlugin`), and the variables evaluated. Then the
   * `prompt/assemble` waterfall (`(assembly, { scope, ctx }) => assembly`) transforms it,
   * and finally every protected name is restored. Function section texts, variable
   * providers and the listeners receive `{ scope, ctx }`, `ctx` being the context this
   * view is bound to (the calling context).
   *
   * Rejects (never throws) with a TypeError when `options.scope` is neither this view's
   * own scope nor a live scope key (never made by `createScope`, or its scope's disposal
   * has started), and with `ContextDisposedError` on a disposed view.
   */
  async assemble(options?: AssembleOptions): Promise<PromptAssembly> {
    this.context._live('Prompts.assemble()');
    let scope = this.context._scopeKey;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') throw new TypeError(`Prompts.assemble(options): options must be { scope? }, got ${describeValue(options)}.`);
      const s = (options as { scope?: unknown }).scope;
      scope = explicitScope(this.context, s, 'Prompts.assemble({ scope })', "pass a live scope key, or omit scope to assemble for the view's own scope");
    }
    const context: PromptContext = Object.freeze({ scope, ctx: this.context });
    // The protections in force when the canonical sections are read (synchronously, below):
    // read after the awaits, a scope disposed meanwhile would have lost its protections and
    // a listener's rewrite of a section it protects would survive.
    const prot = this.registry.protectedNames(scope);
    const canonical = await this.#canonical(scope, context);
    const seed = cloneAssembly(canonical);
    const out = await this.registry.bus.waterfall<unknown>(scope, 'prompt/assemble', seed, [context]);
    // A view whose context was disposed while this awaited refuses to hand out the result,
    // as it would have refused the call (a disposed context refuses every call).
    this.context._live('Prompts.assemble()');
    const transformed = checkAssembly(out);
    // a fresh object: the listener's result may be frozen or shared, so it is not written to
    return {
      ...transformed,
      sections: restoreProtected(transformed.sections, canonical.sections, prot.sections, (s) => ({ ...s })) as AssembledSection[],
      tools: restoreProtected(transformed.tools, canonical.tools, prot.tools, cloneTool) as ToolSchema[],
    };
  }

  async #canonical(scope: object | undefined, context: PromptContext): Promise<PromptAssembly> {
    const merged = [...this.registry.sections.merged(scope).values()];
    const sorted = merged.map((s, i) => ({ s, i })).sort((a, b) => a.s.order - b.s.order || a.i - b.i);
    const sections: AssembledSection[] = [];
    for (const { s } of sorted) {
      let text: unknown = s.text;
      if (typeof text === 'function') {
        try {
          text = (text as (c: typeof context) => unknown)(context);
        } catch (err) {
          throw new PromptError(`prompt section "${s.name}": its text function threw: ${errorText(err)}`, { cause: err });
        }
      }
      if (typeof text !== 'string') throw new PromptError(`prompt section "${s.name}": its text function returned ${describeValue(text)} instead of a string.`);
      sections.push({ name: s.name, order: s.order, text });
    }
    const tools = toolSchemasOf(this.registry.server, scope) ?? [];
    const variables: Record<string, string> = {};
    for (const [name, provider] of this.registry.variables.merged(scope)) {
      let v: unknown = provider;
      if (typeof provider === 'function') {
        try {
          v = await provider(context);
        } catch (err) {
          throw new PromptError(`prompt variable "${name}": its provider threw: ${errorText(err)}`, { cause: err });
        }
      }
      if (typeof v === 'number' || typeof v === 'boolean') v = String(v);
      if (typeof v !== 'string') throw new PromptError(`prompt variable "${name}": its provider returned ${describeValue(v)} instead of a string.`);
      Object.defineProperty(variables, name, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return { sections, tools, variables };
  }

  /**
   * Renders an assembly: the section texts joined by a blank line, with every
   * `{{name}}` replaced by `assembly.variables[name]`.
   *
   * @throws PromptError for a `{{name}}` with no variable (naming the section and the
   *   known variables).
   */
  render(assembly: PromptAssembly): string {
    const a = checkAssembly(assembly);
    const vars = a.variables;
    return a.sections
      .map((s) => {
        if (s === null || typeof s !== 'object' || typeof s.text !== 'string') {
          throw new PromptError(`Prompts.render(): every section needs a string text, got ${describeValue(s)}.`);
        }
        return s.text.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_m, name: string) => {
          if (!Object.hasOwn(vars, name) || typeof vars[name] !== 'string') {
            const known = Object.keys(vars);
            throw new PromptError(
              `Prompts.render(): unknown prompt variable "${name}" in section "${s.name}"; known variables: ${known.length === 0 ? '(none)' : known.join(', ')}. ` +
                `Register it with ctx.get(Prompts).variable('${name}', provider).`,
            );
          }
          return vars[name];
        });
      })
      .join('\n\n');
  }
}

/** Reads `obj[key]` once, turning a throwing getter into a TypeError naming `where` and the field. */
const read = readQuotedField;

function names(v: unknown, field: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new TypeError(`Prompts.protect(): ${field} must be an array of names, got ${describeValue(v)}.`);
  const out = Array.from(v as unknown[]);
  for (const n of out) if (typeof n !== 'string') throw new TypeError(`Prompts.protect(): ${field} must contain names (strings), got ${describeValue(n)}.`);
  return out as string[];
}

function cloneTool(t: ToolSchema): ToolSchema {
  return structuredClone(t);
}

function cloneAssembly(a: PromptAssembly): PromptAssembly {
  return {
    sections: a.sections.map((s) => ({ ...s })),
    tools: a.tools.map(cloneTool),
    variables: { ...a.variables },
  };
}

function checkAssembly(v: unknown): PromptAssembly {
  if (v === null || typeof v !== 'object') throw new PromptError(`a prompt/assemble listener returned ${describeValue(v)} instead of an assembly { sections, tools, variables }.`);
  const a = v as Partial<PromptAssembly>;
  if (!Array.isArray(a.sections) || !Array.isArray(a.tools) || a.variables === null || typeof a.variables !== 'object') {
    throw new PromptError('a prompt assembly needs sections (array), tools (array) and variables (object); a prompt/assemble listener returned a malformed one.');
  }
  return a as PromptAssembly;
}

const prompts = definePlugin<PromptRegistry, Prompts>({
  plugin: 'PromptsPlugin',
  token: Prompts,
  view: (registry) => (ctx) => new Prompts(registry, ctx),
  leaks: (registry) => registry.protections.leaks(),
  once: 'reuse',
  installedBy: 'server.addPlugins(new PromptsPlugin())',
});

/** @internal The prompts registry of `server`, `undefined` when `PromptsPlugin` was not added (read by `inspect`). */
export function promptRegistryOf(server: Server): PromptRegistry | undefined {
  return prompts.of(server);
}

/** Installs {@link Prompts} (and the shared `Events`, once) on the server. Plugin id `prompts`. */
export class PromptsPlugin implements Plugin {
  /** The plugin id. */
  readonly id = 'prompts';

  /** Installs `Prompts` and `Events`. */
  build(server: Server): void {
    prompts.install(server, (bus) => new PromptRegistry(server, bus));
  }
}
