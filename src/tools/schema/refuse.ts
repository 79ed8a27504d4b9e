/**
 * What `Tools.register` refuses in a schema before ajv sees it: what ajv would ignore or
 * turn asynchronous.
 */
import { errorText } from '../../util/error-text.js';
import type { JsonObject, JsonValue } from '../../util/lossless-json.js';
import { ToolSchemaError } from './tool-schema-error.js';
import { DIALECT_URIS, dialectOfUri, type JsonSchemaDialect } from './dialects.js';

/** Where an object sits: a schema (its keys are keywords), a map of named schemas, or anything else (data, unknown keywords). */
type Kind = 'schema' | 'map' | 'other';

const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
const SCHEMA_KEYWORDS = new Set([
  'items', 'additionalItems', 'prefixItems', 'additionalProperties', 'unevaluatedItems', 'unevaluatedProperties', 'contains',
  'propertyNames', 'not', 'if', 'then', 'else', 'allOf', 'anyOf', 'oneOf',
]);

function childKind(keyword: string): Kind {
  return MAP_KEYWORDS.has(keyword) ? 'map' : SCHEMA_KEYWORDS.has(keyword) ? 'schema' : 'other';
}

/**
 * Keywords of a later dialect, which the dialect a schema is read in does not know: ajv
 * would take them as annotations and check nothing.
 */
const LATER_KEYWORDS: Readonly<Record<JsonSchemaDialect, ReadonlyMap<string, JsonSchemaDialect>>> = {
  'draft-07': new Map<string, JsonSchemaDialect>([
    ...['unevaluatedProperties', 'unevaluatedItems', 'dependentRequired', 'dependentSchemas', 'minContains', 'maxContains', '$recursiveRef', '$recursiveAnchor'].map(
      (k) => [k, '2019-09'] as [string, JsonSchemaDialect],
    ),
    ...['prefixItems', '$dynamicRef', '$dynamicAnchor'].map((k) => [k, '2020-12'] as [string, JsonSchemaDialect]),
  ]),
  '2019-09': new Map<string, JsonSchemaDialect>([['prefixItems', '2020-12']]),
  '2020-12': new Map<string, JsonSchemaDialect>(),
};

function checkDialectKeyword(tool: string, path: string, keyword: string, dialect: JsonSchemaDialect): void {
  const from = LATER_KEYWORDS[dialect].get(keyword);
  if (from === undefined) return;
  throw new ToolSchemaError(
    tool,
    path,
    `"${keyword}" is a JSON Schema ${from} keyword, but this schema is read as ${dialect}, where it would be ignored and check nothing. ` +
      `Name the dialect: "$schema": "${DIALECT_URIS[from === '2019-09' ? '2020-12' : from]}" (or, for schemas without "$schema", ` +
      "new ToolsPlugin({ defaultDialect: '2020-12' })).",
  );
}

/**
 * @internal Refuses, with a {@link ToolSchemaError} naming the path:
 * - a keyword of a later dialect than the one the schema is read in (`prefixItems`,
 *   `unevaluatedProperties`, `dependentRequired`, … in draft-07; `prefixItems` in
 *   2019-09), found in schema position: it would be ignored;
 * - a `"$async"` key anywhere: ajv would compile an asynchronous validator whose
 *   promise escapes argument checking;
 * - a `"__proto__"` key anywhere: ajv drops a `properties` / `patternProperties` /
 *   `dependencies` entry named `__proto__`, so its constraint would be ignored.
 *   (`"__proto__"` as a *value*, in `required` or `dependentRequired`, is
 *   enforced and allowed.)
 * - a nested `$schema` naming another dialect (or an unknown one): one ajv class
 *   validates one dialect, and would read the subschema in the root's;
 * - a `pattern` (or `patternProperties` key) that is not a valid regular expression
 *   with the `u` flag, as ajv compiles it (ajv would throw without saying where);
 * - a `$ref` JSON pointer through an inherited member (`#/definitions/constructor`),
 *   which ajv would resolve to an empty schema.
 *
 * Walks iteratively (the snapshot bounds the depth, but a wide schema stays cheap).
 */
export function refuseUnsupported(tool: string, schema: JsonObject, dialect: JsonSchemaDialect): void {
  const refs: { path: string; ref: string }[] = [];
  const resources: JsonObject[] = [schema];
  const stack: { value: JsonValue; path: string; kind: Kind }[] = [{ value: schema, path: 'parameters', kind: 'schema' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path, kind } = item;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: (value as readonly JsonValue[])[i], path: `${path}[${i}]`, kind });
      continue;
    }
    const obj = value as JsonObject;
    for (const key of Object.keys(obj)) {
      const at = `${path}.${key}`;
      if (kind === 'schema') checkDialectKeyword(tool, at, key, dialect);
      if (key === '$async') {
        throw new ToolSchemaError(
          tool,
          at,
          '"$async" is refused: tool arguments are checked synchronously before the tool runs, and an asynchronous ' +
            'validator would let invalid arguments through. Remove "$async" and do asynchronous checks in the tool body.',
        );
      }
      if (key === '__proto__') {
        throw new ToolSchemaError(
          tool,
          at,
          'a key named "__proto__" is refused: the validator (ajv) ignores a constraint on a property named "__proto__", ' +
            'so arguments would reach the tool unchecked. Rename the property.',
        );
      }
      if (key === '$schema' && path !== 'parameters' && typeof obj[key] === 'string' && dialectOfUri(obj[key]) !== dialect) {
        throw new ToolSchemaError(
          tool,
          at,
          `a nested "$schema" (${JSON.stringify(obj[key])}) must name the schema's own dialect, ${dialect} ` +
            `("${DIALECT_URIS[dialect]}"): one schema is validated in one dialect. Remove it or convert the subschema.`,
        );
      }
      const child = obj[key];
      if (key === 'pattern' && typeof child === 'string') checkPattern(tool, at, child);
      if ((key === '$ref' || key === '$dynamicRef') && typeof child === 'string') refs.push({ path: at, ref: child });
      if (key === '$id' && typeof child === 'string' && !child.startsWith('#')) resources.push(obj);
      if (key === 'patternProperties' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
        for (const p of Object.keys(child)) checkPattern(tool, `${at}.${p}`, p);
      }
      stack.push({ value: child, path: at, kind: kind === 'map' ? 'schema' : kind === 'schema' ? childKind(key) : 'other' });
    }
  }
  for (const { path, ref } of refs) checkPointer(tool, path, ref, resources);
}

/**
 * A `$ref` whose fragment is a JSON pointer must not step through an inherited property:
 * ajv resolves pointers with plain property reads, so `#/definitions/constructor` or
 * `#/__proto__` would resolve to `Object`'s members and check nothing. The pointer is
 * accepted when it resolves through own properties in the root or in a subschema with an
 * `$id` (the documents a pointer can be relative to); a pointer that is simply missing is
 * left to ajv, which refuses it (`can't resolve reference`).
 */
function checkPointer(tool: string, path: string, ref: string, resources: readonly JsonObject[]): void {
  const hash = ref.indexOf('#');
  if (hash < 0 || ref.charAt(hash + 1) !== '/') return;
  let segments: string[];
  try {
    segments = ref
      .slice(hash + 2)
      .split('/')
      .map((seg) => decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    throw new ToolSchemaError(tool, path, `${JSON.stringify(ref)} has a malformed JSON pointer (bad percent-encoding). Fix the reference.`);
  }
  let inherited: string | undefined;
  for (const resource of resources) {
    let node: JsonValue = resource;
    let resolved = true;
    for (const seg of segments) {
      if (node === null || typeof node !== 'object') {
        resolved = false;
        break;
      }
      if (Array.isArray(node) ? /^(0|[1-9][0-9]*)$/.test(seg) && Number(seg) < node.length : Object.hasOwn(node, seg)) {
        node = (node as Record<string, JsonValue>)[seg];
        continue;
      }
      if (seg in node) inherited ??= seg;
      resolved = false;
      break;
    }
    if (resolved) return;
  }
  if (inherited !== undefined) {
    throw new ToolSchemaError(
      tool,
      path,
      `${JSON.stringify(ref)} does not resolve: "${inherited}" is not a property of the schema there (the validator would read an inherited ` +
        'JavaScript member and check nothing). Point the reference at a definition that exists.',
    );
  }
}

function checkPattern(tool: string, path: string, pattern: string): void {
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    throw new ToolSchemaError(
      tool,
      path,
      `${JSON.stringify(pattern)} is not a valid regular expression (it is compiled with the "u" flag): ${errorText(err)}. Fix the pattern.`,
    );
  }
}
