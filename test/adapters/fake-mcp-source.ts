/**
 * A structural MCP source held in memory: tools listed in pages, calls answered by
 * per-tool handlers (which see the call's signal), `list_changed` fired by the test, and
 * every `close()` counted.
 */
import type { McpCallToolResult, McpListToolsResult, McpTool, McpToolSource } from '../../src/adapters/index.js';

export const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** A tool whose schema is draft-07-stamped (as the reference servers stamp theirs). */
export function tool(name: string, extra: Partial<McpTool> = {}): McpTool {
  return {
    name,
    description: `the ${name} tool`,
    inputSchema: { $schema: DRAFT_07, type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
    ...extra,
  };
}

export type Handler = (args: { readonly [key: string]: unknown }, signal: AbortSignal) => Promise<McpCallToolResult> | McpCallToolResult;

export interface CallRecord {
  readonly name: string;
  readonly args: unknown;
  readonly signal: AbortSignal;
}

export class FakeMcpSource implements McpToolSource {
  tools: McpTool[];
  pageSize: number;
  handlers = new Map<string, Handler>();
  closes = 0;
  lists = 0;
  calls: CallRecord[] = [];
  /** When set, the next listTools call rejects with it (once). */
  failNextList: Error | undefined;
  /** When set, every listTools waits for it. */
  listGate: Promise<void> | undefined;
  closeError: Error | undefined;
  #listener: (() => void) | undefined;

  constructor(tools: McpTool[], pageSize = 100) {
    this.tools = tools;
    this.pageSize = pageSize;
  }

  async listTools(cursor?: string): Promise<McpListToolsResult> {
    this.lists++;
    if (this.listGate !== undefined) await this.listGate;
    if (this.closes > 0) throw new Error('Connection closed');
    const fail = this.failNextList;
    if (fail !== undefined) {
      this.failNextList = undefined;
      throw fail;
    }
    const start = cursor === undefined ? 0 : Number(cursor);
    const tools = this.tools.slice(start, start + this.pageSize);
    const next = start + this.pageSize;
    return next < this.tools.length ? { tools, nextCursor: String(next) } : { tools };
  }

  async callTool(name: string, args: { readonly [key: string]: unknown }, signal: AbortSignal): Promise<McpCallToolResult> {
    this.calls.push({ name, args, signal });
    if (this.closes > 0) throw new Error('Connection closed');
    const h = this.handlers.get(name);
    if (h !== undefined) return h(args, signal);
    return { content: [{ type: 'text', text: `${name} ran with ${JSON.stringify(args)}` }] };
  }

  async close(): Promise<void> {
    this.closes++;
    if (this.closeError !== undefined) throw this.closeError;
  }

  onToolsChanged(listener: () => void): void {
    this.#listener = listener;
  }

  /** Sends `notifications/tools/list_changed`. */
  changed(): void {
    this.#listener?.();
  }
}

/** A handler that never answers until its signal aborts (then rejects like the SDK does). */
export function hanging(): Handler {
  return (_args, signal) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(new Error('AbortError: This operation was aborted')), { once: true });
    });
}
