/** The error of a failed MCP mount, sync or refresh. */
import { branded } from '../../util/brand.js';

/** A mount, sync or refresh failed; the message names the tool (when one is at fault) and the fix. */
export class McpMountError extends Error {
  /**
   * True when `value` is an instance of `McpMountError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'McpMountError');
  /** Always `'McpMountError'`. */
  override readonly name = 'McpMountError';
  /** The MCP tool at fault, by its name on the server; `undefined` when the failure is not about one tool (e.g. listing failed). */
  readonly toolName: string | undefined;

  /**
   * @param message - the whole message.
   * @param options - `toolName` (the tool at fault) and `cause`.
   */
  constructor(message: string, options?: { toolName?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.toolName = options?.toolName;
  }
}
