/**
 * Compiling one tool's `parameters` into an ajv validator, every failure a
 * {@link ToolSchemaError}, with the ajv instances bounded.
 */
import type { Ajv, CodeOptions, ErrorObject, Options, ValidateFunction } from 'ajv';
import type { JsonObject, JsonValue } from '../../util/lossless-json.js';
import { ToolSchemaError } from './tool-schema-error.js';
import { refuseUnsupported } from './refuse.js';
import { acceptedUris, createAjv, dialectOfUri, DIALECT_URIS, metaAjv, type JsonSchemaDialect } from './dialects.js';
import { describeValue } from '../../context/token.js';
import { errorText } from '../../util/error-text.js';
import type { ToolsRegExpEngine } from './plugin-options.js';

/**
 * How many schemas one compiling ajv instance compiles before it is replaced. ajv keeps,
 * in its code-generation scope, values of every schema an instance ever compiled (about
 * 3 KB each; `removeSchema` does not release them), and each compiled validator holds
 * its instance. A fresh instance every {@link GENERATION_SIZE} compiles bounds what a
 * validator keeps alive to one generation, and what the registry keeps to the
 * generations its live and released validators belong to.
 */
export const GENERATION_SIZE = 64;

/** @internal A compiled schema: the validator and the dialect it was read in. */
export interface Compiled {
  readonly fn: ValidateFunction;
  readonly dialect: JsonSchemaDialect;
}

/** @internal Compiles schemas for one registry: one current ajv generation per dialect. */
export class SchemaCompiler {
  readonly defaultDialect: JsonSchemaDialect;
  readonly #current = new Map<JsonSchemaDialect, { ajv: Ajv; compiled: number }>();
  /** The options of every compiling ajv generation (with the registry's `regExp` engine, if any). */
  readonly #ajvOptions: Options;

  constructor(defaultDialect: JsonSchemaDialect, regExp?: ToolsRegExpEngine) {
    this.defaultDialect = defaultDialect;
    this.#ajvOptions = regExp === undefined ? { validateSchema: false } : { validateSchema: false, code: { regExp: engine(regExp) } };
  }

  /**
   * The dialect `params` is read in: its `$schema`, or the default dialect without one.
   *
   * @throws ToolSchemaError for any other `$schema` value.
   */
  dialectOf(tool: string, params: JsonObject): JsonSchemaDialect {
    const uri = params['$schema'];
    if (uri === undefined) return this.defaultDialect;
    const dialect = dialectOfUri(uri);
    if (dialect !== undefined) return dialect;
    throw new ToolSchemaError(
      tool,
      'parameters.$schema',
      `${describeValue(uri)} is not a JSON Schema dialect polestar validates. Use one of ${acceptedUris()} ` +
        `(each with or without the trailing "#"), or omit "$schema" to use the default dialect (${this.defaultDialect}, ` +
        'set by new ToolsPlugin({ defaultDialect })). Older drafts (04, 06) must be converted.',
    );
  }

  /**
   * Checks and compiles `params` (deep-frozen lossless JSON; ajv does not modify it).
   *
   * @throws ToolSchemaError naming the tool and the path, whatever ajv threw.
   */
  compile(tool: string, params: JsonObject): Compiled {
    const dialect = this.dialectOf(tool, params);
    refuseUnsupported(tool, params, dialect);
    let metaErrors: ErrorObject[] | undefined;
    try {
      const meta = metaAjv(dialect).getSchema(DIALECT_URIS[dialect]) as ValidateFunction;
      if (meta(params) !== true) metaErrors = meta.errors ?? [];
    } catch (err) {
      throw new ToolSchemaError(tool, 'parameters', `checking it against the ${dialect} meta-schema threw: ${errorText(err)}`);
    }
    if (metaErrors !== undefined) {
      const first = metaErrors[0];
      const path = first === undefined ? 'parameters' : pathOf(first.instancePath);
      const text = [...new Set(metaErrors.filter((e) => e.instancePath === first?.instancePath).map((e) => e.message ?? e.keyword))].join('; ');
      throw new ToolSchemaError(tool, path, `is not a valid JSON Schema (${dialect}): ${text}. Fix the schema at that path.`);
    }
    const gen = this.#generation(dialect);
    gen.compiled++;
    let fn: ValidateFunction;
    try {
      fn = gen.ajv.compile(params);
    } catch (err) {
      if (err instanceof PatternRefused) {
        throw new ToolSchemaError(
          tool,
          'parameters',
          `has the pattern ${JSON.stringify(err.source)}, which the ToolsPlugin regExp engine refused: ${err.reason}. ` +
            'Change the pattern, or register the tool where the engine accepts it.',
        );
      }
      throw new ToolSchemaError(tool, compileErrorPath(params, err), `can not be compiled as a JSON Schema (${dialect}): ${errorText(err)}. ` +
        'Every $ref must point inside the schema (remote references are not fetched).');
    } finally {
      try {
        gen.ajv.removeSchema(params);
      } catch {
        // the generation is dropped below anyway
        gen.compiled = GENERATION_SIZE;
      }
    }
    if ((fn as { $async?: unknown }).$async === true) {
      throw new ToolSchemaError(tool, 'parameters', 'compiles to an asynchronous validator, which is refused: remove "$async".');
    }
    return { fn, dialect };
  }

  #generation(dialect: JsonSchemaDialect): { ajv: Ajv; compiled: number } {
    let gen = this.#current.get(dialect);
    if (gen === undefined || gen.compiled >= GENERATION_SIZE) {
      gen = { ajv: createAjv(dialect, this.#ajvOptions), compiled: 0 };
      this.#current.set(dialect, gen);
    }
    return gen;
  }
}

/** The `regExp` engine of the registry refused a pattern (threw, or returned no `test`). */
class PatternRefused extends Error {
  constructor(
    readonly source: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * ajv's engine around a user's `regExp` option: ajv wants a `code` string (used only for
 * standalone code, which polestar never generates); an engine that throws or returns
 * something without `test` is refused when the pattern is compiled, not when an argument
 * is checked; and what ajv gets prints as its pattern (see below).
 */
function engine(regExp: ToolsRegExpEngine): NonNullable<CodeOptions['regExp']> {
  const wrapped = (source: string, flags: string): { test(text: string): boolean; toString(): string } => {
    let rx: unknown;
    try {
      rx = regExp(source, flags);
    } catch (err) {
      throw new PatternRefused(source, errorText(err));
    }
    if (rx === null || typeof rx !== 'object' || typeof (rx as { test?: unknown }).test !== 'function') {
      throw new PatternRefused(source, `it returned ${describeValue(rx)}, not an object with a test(text) method`);
    }
    // ajv shares one compiled pattern per `String(rx)` within a schema: an engine whose
    // objects all print as "[object Object]" would have every pattern checked by the first
    // one. The wrapper prints as its own source and flags.
    const test = (rx as { test(text: string): boolean }).test.bind(rx);
    const key = `/${source}/${flags}`;
    return { test, toString: () => key };
  };
  return Object.assign(wrapped, { code: 'polestar ToolsPlugin regExp' });
}

/** `/properties/a~1b` → `parameters.properties.a/b` (the path style of the lossless-JSON errors). */
function pathOf(pointer: string): string {
  if (pointer === '') return 'parameters';
  return 'parameters' + pointer.split('/').slice(1).map((p) => '.' + p.replace(/~1/g, '/').replace(/~0/g, '~')).join('');
}

/** Where a compile error points: the `$ref` it could not resolve, else the root. */
function compileErrorPath(params: JsonObject, err: unknown): string {
  const missing = (err as { missingRef?: unknown } | null)?.missingRef;
  if (typeof missing !== 'string') return 'parameters';
  const stack: { value: JsonValue; path: string }[] = [{ value: params, path: 'parameters' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path } = item;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      (value as readonly JsonValue[]).forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]` }));
      continue;
    }
    for (const [k, v] of Object.entries(value as JsonObject)) {
      if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string' && v !== '' && (missing === v || missing.endsWith(v))) return `${path}.${k}`;
      stack.push({ value: v, path: `${path}.${k}` });
    }
  }
  return 'parameters';
}
