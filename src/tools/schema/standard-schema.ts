/**
 * Tool `parameters` given as a Standard Schema that emits JSON Schema (zod 4's
 * `~standard`): converted once, at `Tools.register`, into the JSON Schema
 * that is stored, shown to the model and checked by ajv.
 */
import { describeValue } from '../../context/token.js';
import { errorText } from '../../util/error-text.js';
import { ToolSchemaError } from './tool-schema-error.js';

/**
 * A schema object implementing Standard JSON Schema v1 (the `~standard` property with
 * `jsonSchema.input({ target })`), e.g. a zod 4 schema. `Input` is the type of the
 * arguments it accepts, which `Tools.register` gives the tool's `execute`.
 */
export interface StandardJsonSchema<Input = unknown> {
  /** The Standard Schema properties. */
  readonly '~standard': {
    /** The Standard Schema version: 1. */
    readonly version: 1;
    /** The schema library, e.g. `'zod'`. */
    readonly vendor: string;
    /** Type-level only: the input and output types of the schema. */
    readonly types?:
      | {
          /** The type the schema accepts: what `execute` receives. */
          readonly input: Input;
          /** The type the schema's own parsing would produce (unused: ajv checks the input, no transform runs). */
          readonly output: unknown;
        }
      | undefined;
    /** The JSON Schema converters of Standard JSON Schema. */
    readonly jsonSchema: {
      /** The JSON Schema of what the schema accepts, in the dialect `target` names. */
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/** The key of the Standard Schema property. */
export const STANDARD_KEY = '~standard';

/**
 * @internal Whether `parameters` is to be read as a Standard Schema: it has a
 * `~standard` property and is not plain JSON carrying a hidden one. A plain object (its
 * prototype `Object.prototype` or `null`) whose own `~standard` is non-enumerable, such
 * as `z.toJSONSchema()` output, is JSON: that property is ignored.
 */
export function isStandardSchemaCandidate(parameters: object): boolean {
  const proto = Object.getPrototypeOf(parameters) as unknown;
  if (proto === Object.prototype || proto === null) {
    if (!Object.hasOwn(parameters, STANDARD_KEY)) return false; // the usual case, without a descriptor
    const own = Object.getOwnPropertyDescriptor(parameters, STANDARD_KEY);
    return own !== undefined && own.enumerable === true;
  }
  return STANDARD_KEY in parameters;
}

/**
 * @internal Converts a Standard Schema with `~standard.jsonSchema.input({ target })`,
 * once. Reads `~standard` once; the schema library's own `validate` is never called.
 *
 * @returns whatever the converter returned (snapshotted as lossless JSON by the caller).
 * @throws ToolSchemaError when there is no converter or it throws.
 */
export function convertStandardSchema(tool: string, parameters: object, target: string): unknown {
  let jsonSchema: unknown;
  let input: unknown;
  try {
    const standard = (parameters as Record<string, unknown>)[STANDARD_KEY];
    jsonSchema = standard !== null && typeof standard === 'object' ? (standard as Record<string, unknown>)['jsonSchema'] : undefined;
    input = jsonSchema !== null && typeof jsonSchema === 'object' ? (jsonSchema as Record<string, unknown>)['input'] : undefined;
  } catch (err) {
    throw new ToolSchemaError(tool, `parameters.${STANDARD_KEY}`, `reading it threw: ${errorText(err)}`);
  }
  if (typeof input !== 'function') {
    throw new ToolSchemaError(
      tool,
      `parameters.${STANDARD_KEY}.jsonSchema.input`,
      `is ${describeValue(input)}, not a function: this Standard Schema can not emit JSON Schema. ` +
        'Pass a JSON Schema object, or a schema library that implements Standard JSON Schema (zod >= 4.2).',
    );
  }
  try {
    return (input as (o: { target: string }) => unknown).call(jsonSchema, { target });
  } catch (err) {
    throw new ToolSchemaError(
      tool,
      'parameters',
      `converting the Standard Schema to JSON Schema (~standard.jsonSchema.input({ target: '${target}' })) threw: ${errorText(err)}. ` +
        'Use only what the library can express in JSON Schema, or pass a JSON Schema object.',
    );
  }
}
