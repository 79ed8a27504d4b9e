/**
 * The shapes of the prompts registry.
 */
import type { SystemContext } from '../context/system-context.js';
import type { ToolSchema } from '../tools/types.js';

/**
 * What function section texts, variable providers and `prompt/assemble` listeners are
 * called with (one frozen object per assembly).
 */
export interface PromptContext {
  /** The scope being assembled (`undefined`: the global layer). */
  readonly scope: object | undefined;
  /**
   * The calling context: the context whose `Prompts` view `assemble()` was called
   * through (a turn, usually), so a provider can read the turn's locals, the session's
   * history and the agent's resources with `ctx.get`. With `assemble({ scope })` it is
   * still the caller's context, not the scope's.
   */
  readonly ctx: SystemContext;
}

/** A section's text: a string, or a function of the assembly's `{ scope, ctx }`. */
export type SectionText = string | ((context: PromptContext) => string);

/** What `Prompts.section` accepts. */
export interface SectionDefinition {
  /** Unique per layer; a scoped section replaces the global one of the same name. */
  readonly name: string;
  /** Sections are sorted by `order` (ascending; ties keep registration order). */
  readonly order: number;
  /**
   * The section's text (may contain `{{variable}}` placeholders, filled in by
   * `Prompts.render`). A function is called on every assembly with `{ scope, ctx }` (the
   * assembled scope and the calling context) and must return a string.
   */
  readonly text: SectionText;
}

/** A section in an assembly: its text evaluated. */
export interface AssembledSection {
  /** The section's name (from its {@link SectionDefinition}). */
  name: string;
  /** Its sort key; sections appear in ascending `order`. */
  order: number;
  /** The evaluated text; `{{variable}}` placeholders are still in it until `Prompts.render`. */
  text: string;
}

/** A variable's value: a string, or a (possibly async) function of the assembly's `{ scope, ctx }`. */
export type VariableProvider = string | ((context: PromptContext) => string | Promise<string>);

/** What `Prompts.assemble` resolves to (and what `prompt/assemble` listeners transform). */
export interface PromptAssembly {
  /** The visible sections of the scope (a scoped section replaces the global one of the same name), sorted by `order`. */
  sections: AssembledSection[];
  /** Exactly `Tools.schemas(scope)` when `Tools` is installed; `[]` otherwise. */
  tools: ToolSchema[];
  /** The variables visible to the scope, by name, with their providers evaluated to strings. */
  variables: Record<string, string>;
}

/** Options of `Prompts.assemble`. */
export interface AssembleOptions {
  /**
   * The scope to assemble for; omitted = the view's own scope. Must be the view's own
   * scope key or a live one, else `assemble` rejects with a TypeError.
   */
  readonly scope?: object;
}

/** What `Prompts.protect` accepts. */
export interface PromptProtection {
  /** Section names restored to their canonical definition and presence after `prompt/assemble`. */
  readonly sections?: readonly string[];
  /** Tool names restored likewise. */
  readonly tools?: readonly string[];
}
