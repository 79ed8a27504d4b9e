/**
 * `new ToolsPlugin(options)`: how tool schemas are read.
 */
import { describeValue } from '../../context/token.js';
import { readQuotedField } from '../../util/read-field.js';
import type { DefaultJsonSchemaDialect } from './dialects.js';

/**
 * The options of `new ToolsPlugin(options)`.
 *
 * How schemas are read:
 * - `$schema` must be one of the three canonical URIs (`http://json-schema.org/draft-07/schema#`,
 *   `https://json-schema.org/draft/2019-09/schema`, `https://json-schema.org/draft/2020-12/schema`),
 *   each with or without the trailing `#`; other spellings (`https://` for draft-07,
 *   draft-04, draft-06) are refused rather than guessed.
 * - A `format` polestar knows (every ajv-formats format: `email`, `uri`, `date-time`, `uuid`,
 *   `ipv4`, …) is enforced; an unknown format name is an annotation, as JSON Schema
 *   defines it, and is not checked (zod emits names such as `cuid` together with a
 *   `pattern`, which is checked).
 * - Unknown keywords (`x-…`, `markdownDescription`) are annotations and accepted, but a
 *   keyword of a later dialect in a schema read in an earlier one (`prefixItems` or
 *   `unevaluatedProperties` in draft-07, `prefixItems` in 2019-09) is refused: it would
 *   check nothing, and the author meant it to.
 * - A key `"$async"` or `"__proto__"` anywhere in `parameters` is refused (even inside
 *   `const` or an unknown keyword: one rule, no guessing where a schema ends), and so are
 *   a nested `$schema` naming another dialect and a `$ref` JSON pointer that steps
 *   through an inherited JavaScript member (`#/definitions/constructor` with no such
 *   definition), which ajv would resolve to an empty schema.
 * - A property counts as present only when it is the argument object's own, so
 *   `required: ["toString"]` is not met by `{}`.
 * - A Standard Schema is converted with the default dialect as its `target`
 *   (`'draft-07'` or `'draft-2020-12'`), and the result is read in the dialect its own
 *   `$schema` names.
 */
export interface ToolsPluginOptions {
  /**
   * The dialect of a tool schema without `$schema`, and the `target` a Standard Schema
   * is converted to: `'draft-07'` (the default) or `'2020-12'` (MCP's default dialect).
   * Under 2020-12 a draft-07 tuple `items: [...]` is refused (use `prefixItems`); under
   * draft-07, 2019+ keywords such as `unevaluatedProperties` or `prefixItems` are refused
   * (draft-07 would ignore them): name the dialect with `$schema`.
   */
  readonly defaultDialect?: DefaultJsonSchemaDialect;
  /**
   * The regular-expression engine for `pattern` and `patternProperties` (ajv's
   * `code.regExp`): called as `regExp(source, 'u')` when a schema is compiled, it returns
   * an object with `test(text)`. The default is JavaScript's `RegExp`, which backtracks: a
   * pattern such as `^(a+)+$` takes exponential time on a crafted string, and a tool
   * argument is text a model (or whatever it read) wrote. When schemas come from
   * somewhere you do not control (an MCP server), pass a linear-time engine, e.g. the
   * `re2` package: `new ToolsPlugin({ regExp: (source, flags) => new RE2(source, flags) })`.
   * A pattern the engine refuses (throws for) refuses the tool at registration
   * (`ToolSchemaError`).
   */
  readonly regExp?: ToolsRegExpEngine;
}

/** A regular-expression engine for tool schemas: see {@link ToolsPluginOptions.regExp}. */
export type ToolsRegExpEngine = (source: string, flags: string) => ToolsRegExp;

/** What a {@link ToolsRegExpEngine} returns for one pattern (a `RegExp` or an `RE2` is one). */
export interface ToolsRegExp {
  /** Whether `text` matches the pattern. */
  test(text: string): boolean;
}

/** @internal The options as read once and validated. */
export interface ReadToolsPluginOptions {
  readonly defaultDialect: DefaultJsonSchemaDialect;
  readonly regExp: ToolsRegExpEngine | undefined;
}

/** @internal Reads each option once; a TypeError names the option and the values allowed. */
export function readToolsPluginOptions(options: unknown): ReadToolsPluginOptions {
  if (options === undefined) return { defaultDialect: 'draft-07', regExp: undefined };
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`new ToolsPlugin(options): options must be an object { defaultDialect?, regExp? } or omitted, got ${describeValue(options)}.`);
  }
  const dialect = readQuotedField(options, 'defaultDialect', 'new ToolsPlugin(options)');
  if (dialect !== undefined && dialect !== 'draft-07' && dialect !== '2020-12') {
    throw new TypeError(
      `new ToolsPlugin({ defaultDialect }): defaultDialect must be 'draft-07' (the default) or '2020-12', got ${describeValue(dialect)}.`,
    );
  }
  const regExp = readQuotedField(options, 'regExp', 'new ToolsPlugin(options)');
  if (regExp !== undefined && typeof regExp !== 'function') {
    throw new TypeError(
      `new ToolsPlugin({ regExp }): regExp must be a function (source, flags) => { test(text) } (for example (s, f) => new RE2(s, f)) or omitted, got ${describeValue(regExp)}.`,
    );
  }
  return { defaultDialect: dialect ?? 'draft-07', regExp: regExp as ToolsRegExpEngine | undefined };
}
