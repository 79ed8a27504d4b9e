/**
 * Reading a tool definition's `parameters` at `Tools.register`: a JSON Schema object
 * snapshotted as lossless JSON, or a Standard Schema converted once into one.
 */
import { describeValue } from '../../context/token.js';
import { NotLosslessJsonError, snapshotJsonLike, type JsonObject } from '../../util/lossless-json.js';
import { convertStandardSchema, isStandardSchemaCandidate, STANDARD_KEY } from './standard-schema.js';

/**
 * @internal The deep-frozen JSON Schema of a definition's `parameters`: a Standard Schema
 * is converted once with `~standard.jsonSchema.input({ target })`; plain JSON is
 * snapshotted with a non-enumerable `~standard` (as `z.toJSONSchema()` output has) left
 * out. The schema itself is checked later, when it is compiled. With a `template` (an
 * earlier snapshot of the same object), the parts equal to it are the template's own.
 * `standard` says whether it was a Standard Schema (converted: its snapshot can not serve
 * as the template of the next one).
 *
 * @throws NotLosslessJsonError (`tool parameters must be losslessly JSON-serializable`)
 *   for values JSON can not carry; TypeError when the result is not a JSON object;
 *   ToolSchemaError when a Standard Schema can not be converted.
 */
export function snapshotParameters(tool: string, parameters: unknown, target: string, template?: JsonObject): { params: JsonObject; standard: boolean } {
  let source = parameters;
  let standard = false;
  if (parameters !== null && typeof parameters === 'object') {
    try {
      standard = isStandardSchemaCandidate(parameters);
    } catch {
      // a hostile proxy: the snapshot below names what could not be read
    }
    if (standard) source = convertStandardSchema(tool, parameters, target);
  }
  let params;
  try {
    params = snapshotJsonLike(source, standard ? undefined : template, 'tool parameters', 'parameters', STANDARD_KEY);
  } catch (err) {
    if (err instanceof NotLosslessJsonError) {
      const what = standard ? `Tools.register(${tool}): the JSON Schema its Standard Schema parameters converted to (~standard.jsonSchema.input)` : `Tools.register(${tool}): tool parameters`;
      throw new NotLosslessJsonError(what, err.path, err.reason);
    }
    throw err;
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    const got = describeValue(params);
    throw new TypeError(`Tools.register(${tool}): parameters must be a JSON Schema object, got ${standard ? `${got} from its Standard Schema` : got}.`);
  }
  return { params: params as JsonObject, standard };
}
