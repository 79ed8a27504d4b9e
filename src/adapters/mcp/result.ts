/**
 * MCP's wire shapes (structural: no MCP SDK import) and how an MCP `tools/call` result
 * becomes a polestar result: the text parts joined with a newline are the `content`, the
 * whole result (`content`, `structuredContent`) is the `output`, and `isError` makes the
 * call fail (`EXECUTION_ERROR`) with the text as the reason.
 */
import { describeValue } from '../../util/describe-value.js';
import { branded } from '../../util/brand.js';

/** A tool as MCP's `tools/list` lists it (the fields polestar reads; others are ignored). */
export interface McpTool {
  /** The tool's name on the server (registered as `prefix + name`). */
  readonly name: string;
  /** What the tool does; absent is registered as `''`. */
  readonly description?: string;
  /** The JSON Schema of the arguments; without `$schema` it is read as 2020-12 (MCP's default). */
  readonly inputSchema: { readonly [key: string]: unknown };
  /** MCP's hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, `title`), kept on the polestar tool. */
  readonly annotations?: { readonly [key: string]: unknown };
}

/** One page of MCP's `tools/list`. */
export interface McpListToolsResult {
  /** The tools of this page. */
  readonly tools: readonly McpTool[];
  /** Where the next page starts; absent on the last page. */
  readonly nextCursor?: string;
}

/** One part of an MCP tool result's `content` (`text`, `image`, `audio`, `resource_link`, `resource`). */
export interface McpContentPart {
  /** The part's kind. */
  readonly type: string;
  /** The text of a `text` part. */
  readonly text?: string;
  /** Every other field of the part (e.g. `data` and `mimeType` of an image), kept in the output. */
  readonly [key: string]: unknown;
}

/** An MCP `tools/call` result. */
export interface McpCallToolResult {
  /** The result's parts. */
  readonly content?: readonly McpContentPart[];
  /** `true`: the tool failed (the call becomes `EXECUTION_ERROR`). */
  readonly isError?: boolean;
  /**
   * The structured result, for tools that declare an `outputSchema`: any JSON value (an
   * object in MCP's 2025 revisions; typed `unknown` by the MCP SDK 2.x, so its results fit
   * as they are). It is kept in the polestar result's `output`, which must be JSON.
   */
  readonly structuredContent?: unknown;
}

/**
 * An MCP server as `mountMcpTools` needs it: four functions in MCP's wire shapes. The MCP
 * SDK clients fit through `fromMcpSdkClient` (1.x) and `fromMcpSdkV2Client` (2.x); any
 * other client fits with a few lines of bridge.
 */
export interface McpToolSource {
  /** MCP `tools/list`: one page, starting at `cursor` (absent: the first page). */
  listTools(cursor?: string): Promise<McpListToolsResult>;
  /** MCP `tools/call`. `signal` aborts when the call is aborted: forward it so the client sends `notifications/cancelled`. */
  callTool(name: string, args: { readonly [key: string]: unknown }, signal: AbortSignal): Promise<McpCallToolResult>;
  /** Closes the connection (e.g. ends the server's child process). Called exactly once by the mount. */
  close(): Promise<void>;
  /** Subscribes to `notifications/tools/list_changed`; the mount then re-lists and re-syncs. */
  onToolsChanged?(listener: () => void): void;
}

/**
 * An MCP tool answered `isError: true`; the call fails with `EXECUTION_ERROR` and the
 * server's text as the reason (the model reads `Error: <text>`).
 */
export class McpToolError extends Error {
  /**
   * True when `value` is an instance of `McpToolError` or of a subclass, also one made by
   * another copy of polestar-di loaded in the same process (where `instanceof` is false).
   */
  static readonly is = branded(this, 'McpToolError');
  /** Always `'McpToolError'`. */
  override readonly name = 'McpToolError';
  /** The tool's name on the MCP server. */
  readonly toolName: string;
  /** The whole MCP result, as the server sent it. */
  readonly result: McpCallToolResult;

  /**
   * @param toolName - the tool's name on the MCP server.
   * @param result - the MCP result with `isError: true`.
   * @param text - its text parts joined with a newline.
   */
  constructor(toolName: string, result: McpCallToolResult, text: string) {
    super(text !== '' ? text : `MCP tool "${toolName}" reported an error (isError: true) without any text`);
    this.toolName = toolName;
    this.result = result;
  }
}

/** @internal The text parts of MCP content, joined with a newline (`''` when there are none). */
export function joinedText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content as unknown[]) {
    if (part !== null && typeof part === 'object' && (part as McpContentPart).type === 'text') {
      const text = (part as McpContentPart).text;
      if (typeof text === 'string') texts.push(text);
    }
  }
  return texts.join('\n');
}

/** @internal What a polestar tool body makes of an MCP result: the output, and the model-facing text. */
export interface ShapedResult {
  /** `{ content, structuredContent? }`: the whole MCP result minus `isError` (lossless JSON is checked by the pipeline). */
  readonly output: { content: readonly McpContentPart[]; structuredContent?: McpCallToolResult['structuredContent'] };
  /** The text parts joined with a newline. */
  readonly text: string;
}

/**
 * @internal Shapes an MCP result, or throws: a {@link McpToolError} for `isError: true`,
 * a `TypeError` naming the tool for a result that is not an MCP result.
 */
export function shapeResult(toolName: string, result: unknown): ShapedResult {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    throw new TypeError(`MCP tool "${toolName}": callTool resolved to ${describeValue(result)}, not an MCP result ({ content?, isError?, structuredContent? }); check the source's callTool bridge.`);
  }
  const r = result as McpCallToolResult;
  const content = r.content === undefined ? [] : r.content;
  if (!Array.isArray(content)) {
    throw new TypeError(`MCP tool "${toolName}": the result's content is ${describeValue(content)}, not an array of parts; check the source's callTool bridge.`);
  }
  const text = joinedText(content);
  if (r.isError === true) throw new McpToolError(toolName, r, text);
  const output: ShapedResult['output'] =
    r.structuredContent === undefined ? { content } : { content, structuredContent: r.structuredContent };
  return { output, text };
}
