/**
 * The JSON Schema dialects tool `parameters` may be written in, and the ajv class that
 * validates each.
 */
import { Ajv, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * A JSON Schema dialect `Tools.register` validates: draft-07, 2019-09 or 2020-12. A
 * schema names it with `$schema`; one without `$schema` is read in the `defaultDialect`
 * of {@link ToolsPluginOptions}.
 */
export type JsonSchemaDialect = 'draft-07' | '2019-09' | '2020-12';

/** The dialects a schema without `$schema` may default to. */
export type DefaultJsonSchemaDialect = 'draft-07' | '2020-12';

/** @internal Every dialect, with its canonical `$schema` URI (without the empty fragment). */
export const DIALECT_URIS: Readonly<Record<JsonSchemaDialect, string>> = Object.freeze({
  'draft-07': 'http://json-schema.org/draft-07/schema',
  '2019-09': 'https://json-schema.org/draft/2019-09/schema',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
});

const BY_URI = new Map<string, JsonSchemaDialect>(
  (Object.keys(DIALECT_URIS) as JsonSchemaDialect[]).flatMap((d) => [
    [DIALECT_URIS[d], d],
    [`${DIALECT_URIS[d]}#`, d],
  ]),
);

/**
 * @internal The dialect a `$schema` value names: each canonical URI, with or without the
 * trailing `#` (an empty fragment names the same document). `undefined` for anything else.
 */
export function dialectOfUri(uri: unknown): JsonSchemaDialect | undefined {
  return typeof uri === 'string' ? BY_URI.get(uri) : undefined;
}

/** @internal The `$schema` values accepted, for error messages. */
export function acceptedUris(): string {
  return (Object.keys(DIALECT_URIS) as JsonSchemaDialect[]).map((d) => `"${DIALECT_URIS[d]}${d === 'draft-07' ? '#' : ''}"`).join(', ');
}

/**
 * @internal The Standard JSON Schema `target` for a dialect (the names zod and the
 * Standard JSON Schema interface use: `'draft-07'`, `'draft-2020-12'`).
 */
export function standardTarget(dialect: DefaultJsonSchemaDialect): 'draft-07' | 'draft-2020-12' {
  return dialect === 'draft-07' ? 'draft-07' : 'draft-2020-12';
}

/**
 * The ajv options every instance uses:
 * - `strict: false`: real schemas carry keywords ajv does not know (`x-…`,
 *   `markdownDescription`, OpenAPI's `discriminator`); they are annotations;
 * - `logger: false`: nothing is ever printed to the console;
 * - `ownProperties: true`: a property is present only when it is the argument object's
 *   own (otherwise `required: ["toString"]` is met by `{}`, and `properties.toString`
 *   checks the inherited function);
 * - `allErrors: false`: execute stops at the first violation (one compiled call).
 */
const BASE_OPTIONS: Options = { strict: false, logger: false, ownProperties: true, allErrors: false };

/** @internal An ajv instance of `dialect`'s class with ajv-formats added. */
export function createAjv(dialect: JsonSchemaDialect, options: Options = {}): Ajv {
  const opts = { ...BASE_OPTIONS, ...options };
  const ajv = dialect === 'draft-07' ? new Ajv(opts) : dialect === '2019-09' ? new Ajv2019(opts) : new Ajv2020(opts);
  addFormats.default(ajv);
  return ajv;
}

const metaValidators = new Map<JsonSchemaDialect, Ajv>();

/**
 * @internal The process-wide ajv that checks schemas against `dialect`'s meta-schema. It
 * compiles only the meta-schema (once, lazily) and never a user's schema, so it does not
 * grow with the schemas it checks.
 */
export function metaAjv(dialect: JsonSchemaDialect): Ajv {
  let ajv = metaValidators.get(dialect);
  if (ajv === undefined) {
    ajv = createAjv(dialect);
    metaValidators.set(dialect, ajv);
  }
  return ajv;
}
