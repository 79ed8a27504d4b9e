/**
 * What `Tools.register` refuses in a schema before ajv sees it: what ajv would ignore or
 * turn asynchronous (SPEC §11.1, issue 8 #2 and #11).
 */
import type { JsonObject, JsonValue } from '../lossless-json.js';
import { ToolSchemaError } from './tool-schema-error.js';
import { DIALECT_URIS, dialectOfUri, type JsonSchemaDialect } from './dialects.js';

/**
 * @internal Refuses, with a {@link ToolSchemaError} naming the path:
 * - a `"$async"` key anywhere: ajv would compile an asynchronous validator whose
 *   promise escapes argument checking (issue 8 #2);
 * - a `"__proto__"` key anywhere: ajv drops a `properties` / `patternProperties` /
 *   `dependencies` entry named `__proto__`, so its constraint would be ignored
 *   (issue 8 #11). (`"__proto__"` as a *value*, in `required` or `dependentRequired`, is
 *   enforced and allowed.)
 * - a nested `$schema` naming another dialect (or an unknown one): one ajv class
 *   validates one dialect, and would read the subschema in the root's;
 * - a `pattern` (or `patternProperties` key) that is not a valid regular expression
 *   with the `u` flag, as ajv compiles it (ajv would throw without saying where).
 *
 * Walks iteratively (the snapshot bounds the depth, but a wide schema stays cheap).
 */
export function refuseUnsupported(tool: string, schema: JsonObject, dialect: JsonSchemaDialect): void {
  const stack: { value: JsonValue; path: string }[] = [{ value: schema, path: 'parameters' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path } = item;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: (value as readonly JsonValue[])[i], path: `${path}[${i}]` });
      continue;
    }
    const obj = value as JsonObject;
    for (const key of Object.keys(obj)) {
      const at = `${path}.${key}`;
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
      if (key === 'patternProperties' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
        for (const p of Object.keys(child)) checkPattern(tool, `${at}.${p}`, p);
      }
      stack.push({ value: child, path: at });
    }
  }
}

function checkPattern(tool: string, path: string, pattern: string): void {
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    throw new ToolSchemaError(
      tool,
      path,
      `${JSON.stringify(pattern)} is not a valid regular expression (it is compiled with the "u" flag): ${err instanceof Error ? err.message : String(err)}. Fix the pattern.`,
    );
  }
}
