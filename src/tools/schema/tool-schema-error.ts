/**
 * The error every refusal of a tool's `parameters` at `Tools.register` throws.
 */
import { branded } from '../../util/brand.js';

/**
 * `Tools.register` refused a tool's `parameters`: an unknown `$schema`, a
 * schema its dialect's meta-schema rejects, an unresolvable `$ref`, `"$async"`, a
 * `__proto__` property, a Standard Schema that can not be converted, or anything else
 * the validator threw while compiling it. The message names the tool, the path in the
 * schema and the fix.
 */
export class ToolSchemaError extends TypeError {
  /**
   * True when `value` is an instance of `ToolSchemaError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'ToolSchemaError');
  /** Always `'ToolSchemaError'`. */
  override readonly name = 'ToolSchemaError';
  /** The name of the tool whose schema was refused. */
  readonly tool: string;
  /** Where in the schema, e.g. `parameters.properties.q.type` (`parameters`: the root). */
  readonly path: string;

  /**
   * @param tool - the tool's name.
   * @param path - where in the schema (e.g. `parameters.properties.q`).
   * @param problem - what is wrong, then how to fix it.
   */
  constructor(tool: string, path: string, problem: string) {
    super(`Tools.register(${tool}): ${path}: ${problem}`);
    this.tool = tool;
    this.path = path;
  }
}
