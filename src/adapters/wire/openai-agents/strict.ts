/**
 * OpenAI's strict subset of JSON Schema (Structured Outputs, function calling with
 * `strict: true`), as a check: a schema inside it can be sent with `strict: true`.
 */
import { isObj, type Obj } from '../provider-meta.js';

/** Keywords a strict schema may use (anything else puts the schema outside the subset). */
const KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf',
  'description', 'title', '$ref', '$defs', 'definitions', 'pattern', 'format',
  'multipleOf', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'maxItems',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** OpenAI's limits for a strict schema. */
const MAX_DEPTH = 10;
const MAX_PROPERTIES = 5000;
const MAX_ENUM = 1000;

/**
 * @internal Why `schema` (a tool's root schema, `$schema` already left out) is outside
 * OpenAI's strict subset, or `undefined` when it is inside.
 */
export function outsideStrictSubset(schema: Obj): string | undefined {
  if (schema.type !== 'object') return `its root is not { type: 'object' } (got type ${JSON.stringify(schema.type)})`;
  const count = { properties: 0 };
  return visit(schema, '#', 0, count);
}

function visit(s: unknown, path: string, depth: number, count: { properties: number }): string | undefined {
  if (!isObj(s)) return `${path} is not a schema object`;
  if (depth > MAX_DEPTH) return `${path} nests deeper than ${MAX_DEPTH} levels`;
  for (const k of Object.keys(s)) if (!KEYWORDS.has(k)) return `${path} uses "${k}", which strict mode does not support`;
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? [] : [s.type];
  for (const t of types) if (typeof t !== 'string' || !TYPES.has(t)) return `${path} has type ${JSON.stringify(t)}`;
  if (s.type === undefined && s.anyOf === undefined && s.$ref === undefined && s.enum === undefined && s.const === undefined) {
    return `${path} has no type (strict mode needs one on every schema)`;
  }
  if (s.format !== undefined && (typeof s.format !== 'string' || !FORMATS.has(s.format))) return `${path} has format ${JSON.stringify(s.format)}, which strict mode does not support`;
  if (Array.isArray(s.enum) && s.enum.length > MAX_ENUM) return `${path} has more than ${MAX_ENUM} enum values`;
  if (types.includes('object') || s.properties !== undefined) {
    if (!types.includes('object')) return `${path} has properties but no type 'object'`;
    if (s.additionalProperties !== false) return `${path} does not set additionalProperties: false`;
    const props = s.properties ?? {};
    if (!isObj(props)) return `${path}.properties is not an object`;
    const keys = Object.keys(props);
    count.properties += keys.length;
    if (count.properties > MAX_PROPERTIES) return `the schema has more than ${MAX_PROPERTIES} properties`;
    const required = Array.isArray(s.required) ? (s.required as unknown[]) : [];
    const missing = keys.filter((k) => !required.includes(k));
    if (missing.length > 0) return `${path} does not list ${missing.map((k) => JSON.stringify(k)).join(', ')} in required (strict mode makes every property required; make an optional one nullable instead)`;
    if (required.length !== keys.length) return `${path}.required names a property it does not define`;
    for (const k of keys) {
      const why = visit(props[k], `${path}/properties/${k}`, depth + 1, count);
      if (why !== undefined) return why;
    }
  }
  if (types.includes('array') && s.items === undefined) return `${path} is an array without items`;
  if (s.items !== undefined) {
    if (Array.isArray(s.items)) return `${path}.items is a list (tuples are not supported)`;
    const why = visit(s.items, `${path}/items`, depth + 1, count);
    if (why !== undefined) return why;
  }
  if (s.anyOf !== undefined) {
    if (!Array.isArray(s.anyOf)) return `${path}.anyOf is not a list`;
    for (const [i, sub] of (s.anyOf as unknown[]).entries()) {
      const why = visit(sub, `${path}/anyOf/${i}`, depth + 1, count);
      if (why !== undefined) return why;
    }
  }
  if (s.$ref !== undefined && (typeof s.$ref !== 'string' || !s.$ref.startsWith('#'))) return `${path} has a $ref outside the schema`;
  for (const defs of ['$defs', 'definitions'] as const) {
    if (s[defs] === undefined) continue;
    if (!isObj(s[defs])) return `${path}.${defs} is not an object`;
    for (const [k, sub] of Object.entries(s[defs])) {
      const why = visit(sub, `${path}/${defs}/${k}`, depth + 1, count);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}
