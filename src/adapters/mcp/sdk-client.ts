/**
 * The MCP SDK clients as an {@link McpToolSource}: `fromMcpSdkClient` for the MCP SDK 1.x
 * `Client` (`@modelcontextprotocol/sdk`) and `fromMcpSdkV2Client` for the 2.x `Client`
 * (`@modelcontextprotocol/client`). Structural: neither SDK is imported, not even its types.
 */
import { describeValue } from '../../util/describe-value.js';
import { errorText } from '../../util/error-text.js';
import type { McpCallToolResult, McpListToolsResult, McpToolSource } from './result.js';

/**
 * What `fromMcpSdkClient` needs of an MCP SDK 1.x `Client` (`@modelcontextprotocol/sdk`,
 * `Client` from `@modelcontextprotocol/sdk/client/index.js`): a real `Client` fits it.
 */
export interface McpSdkClientLike {
  /** 1.x `listTools(params?, options?)`: one page, starting at `params.cursor`. */
  listTools(params?: { cursor?: string }): Promise<unknown>;
  /** 1.x `callTool(params, resultSchema?, options?)`: the signal goes in the third argument. */
  callTool(params: { name: string; arguments?: { [key: string]: unknown } }, resultSchema?: undefined, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** Closes the client and its transport. */
  close(): Promise<void>;
}

/**
 * What `fromMcpSdkV2Client` needs of an MCP SDK 2.x `Client` (`@modelcontextprotocol/client`):
 * a real `Client` fits it.
 */
export interface McpSdkV2ClientLike {
  /** 2.x `listTools(params?, options?)`: without a cursor, every page aggregated (and cached by the client). */
  listTools(params?: { cursor?: string }, options?: { cacheMode?: 'refresh' }): Promise<unknown>;
  /** 2.x `callTool(params, options?)`: the signal goes in the second argument. */
  callTool(params: { name: string; arguments?: { [key: string]: unknown } }, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** Closes the client and its transport. */
  close(): Promise<void>;
}

/** How long `close()` waits for the server to answer the session's `DELETE` before closing anyway. */
const TERMINATE_TIMEOUT_MS = 5_000;
const LIST_CHANGED = 'notifications/tools/list_changed';

type NotificationHandler = (notification: { method?: unknown }) => Promise<void>;
interface NotifiableClient {
  fallbackNotificationHandler?: NotificationHandler;
  readonly transport?: unknown;
}

/**
 * An MCP SDK 1.x `Client` (`@modelcontextprotocol/sdk`) as the source `mountMcpTools`
 * takes. Connect the client first; from the mount on, the mount owns it.
 *
 * - `listTools(cursor)` reads one page (`client.listTools({ cursor })`).
 * - `callTool(name, args, signal)` passes the signal on (`client.callTool(params, undefined,
 *   { signal })`), so an aborted call (the caller's signal, the calling turn's disposal, the
 *   mount's disposal) sends the server `notifications/cancelled`.
 * - `close()` terminates a Streamable HTTP session first (the transport's
 *   `terminateSession()`: an HTTP `DELETE`, so the server drops the session at once), then
 *   closes the client (a stdio server's child process exits). When the server does not
 *   answer the `DELETE` within 5 seconds, the client is closed anyway. A session the server
 *   no longer knows (HTTP 404) is already gone; any other failure to terminate rejects
 *   `close()` after the client was closed.
 * - `notifications/tools/list_changed` re-syncs the mount. The bridge listens through the
 *   client's `fallbackNotificationHandler` (chained with one already set), so it replaces
 *   no handler of yours; if you registered your own `tools/list_changed` handler (or the
 *   client's `listChanged` option), that one wins: call `mount.refresh()` from it.
 *
 * Throws a `TypeError` at once when `client` has no `listTools`, `callTool` or `close`
 * method, or is a 2.x client (use {@link fromMcpSdkV2Client}).
 *
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
 * import { fromMcpSdkClient, mountMcpTools } from 'polestar-di/adapters';
 *
 * const client = new Client({ name: 'my-app', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'node', args: ['server.js'] }));
 * const mount = await mountMcpTools(agentCtx, fromMcpSdkClient(client), { prefix: 'fs_' });
 * ```
 */
export function fromMcpSdkClient(client: McpSdkClientLike): McpToolSource {
  checkClient(client, 'fromMcpSdkClient');
  if (typeof (client as unknown as { listen?: unknown }).listen === 'function') {
    throw new TypeError(
      'fromMcpSdkClient(client): client looks like an MCP SDK 2.x Client (@modelcontextprotocol/client: it has listen()), whose callTool takes the signal in its second argument; use fromMcpSdkV2Client(client).',
    );
  }
  return makeSource(client, {
    listTools: (cursor) => client.listTools(cursor === undefined ? undefined : { cursor }),
    callTool: (name, args, signal) => client.callTool({ name, arguments: { ...args } }, undefined, { signal }),
  });
}

/**
 * An MCP SDK 2.x `Client` (`@modelcontextprotocol/client`) as the source `mountMcpTools`
 * takes. Connect the client first; from the mount on, the mount owns it.
 *
 * - `listTools()` lets the client walk every page itself, with `cacheMode: 'refresh'`
 *   (a re-sync after `list_changed` sees the new list, and the client's cache, which
 *   validates `structuredContent` against each tool's `outputSchema`, is refreshed).
 * - `callTool(name, args, signal)` passes the signal on (`client.callTool(params, { signal })`),
 *   so an aborted call sends the server `notifications/cancelled`.
 * - `close()` and `notifications/tools/list_changed` behave as with {@link fromMcpSdkClient}.
 *   On a connection of protocol revision 2026-07-28 or later, change notifications arrive
 *   only on a subscription: open one with `client.listen({ toolsListChanged: true })`
 *   (or the client's `listChanged` option) for the mount to follow the server's changes.
 *
 * Throws a `TypeError` at once when `client` has no `listTools`, `callTool` or `close`
 * method.
 *
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/client';
 * import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
 * import { fromMcpSdkV2Client, mountMcpTools } from 'polestar-di/adapters';
 *
 * const client = new Client({ name: 'my-app', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'node', args: ['server.js'] }));
 * const mount = await mountMcpTools(agentCtx, fromMcpSdkV2Client(client));
 * ```
 */
export function fromMcpSdkV2Client(client: McpSdkV2ClientLike): McpToolSource {
  checkClient(client, 'fromMcpSdkV2Client');
  return makeSource(client, {
    listTools: (cursor) => client.listTools(cursor === undefined ? undefined : { cursor }, { cacheMode: 'refresh' }),
    callTool: (name, args, signal) => client.callTool({ name, arguments: { ...args } }, { signal }),
  });
}

function checkClient(client: unknown, fn: string): void {
  if (client === null || typeof client !== 'object') {
    throw new TypeError(`${fn}(client): client must be a connected MCP SDK Client, got ${describeValue(client)}.`);
  }
  for (const m of ['listTools', 'callTool', 'close'] as const) {
    const v = (client as Record<string, unknown>)[m];
    if (typeof v !== 'function') {
      throw new TypeError(`${fn}(client): client.${m} must be a function, got ${describeValue(v)}; pass a connected MCP SDK Client (it has listTools, callTool and close).`);
    }
  }
}

function makeSource(
  client: McpSdkClientLike | McpSdkV2ClientLike,
  calls: { listTools(cursor?: string): Promise<unknown>; callTool(name: string, args: { readonly [key: string]: unknown }, signal: AbortSignal): Promise<unknown> },
): McpToolSource {
  const notifiable = client as unknown as NotifiableClient;
  let installed: NotificationHandler | undefined;
  let previous: NotificationHandler | undefined;
  let closing: Promise<void> | undefined;
  return {
    // a client method that throws synchronously still gives a rejected promise
    listTools: (cursor) => settle(() => calls.listTools(cursor)) as Promise<McpListToolsResult>,
    callTool: (name, args, signal) => settle(() => calls.callTool(name, args, signal)) as Promise<McpCallToolResult>,
    onToolsChanged(listener) {
      previous = notifiable.fallbackNotificationHandler;
      const prev = previous;
      installed = async (notification) => {
        if (notification !== null && typeof notification === 'object' && notification.method === LIST_CHANGED) listener();
        if (typeof prev === 'function') await prev.call(client, notification);
      };
      notifiable.fallbackNotificationHandler = installed;
    },
    close() {
      return (closing ??= closeClient());
    },
  };

  async function closeClient(): Promise<void> {
    if (installed !== undefined && notifiable.fallbackNotificationHandler === installed) {
      notifiable.fallbackNotificationHandler = previous;
    }
    let failure: unknown;
    let timedOut = false;
    let transport: unknown;
    try {
      transport = notifiable.transport;
    } catch {
      transport = undefined;
    }
    const terminate = (transport as { terminateSession?: unknown } | null | undefined)?.terminateSession;
    if (typeof terminate === 'function') {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), TERMINATE_TIMEOUT_MS);
        timer.unref?.();
      });
      try {
        const terminating = Promise.resolve().then(() => (terminate as () => unknown).call(transport));
        // closing the client below aborts a DELETE still pending; its rejection is not news
        terminating.catch(() => undefined);
        timedOut = (await Promise.race([terminating, timeout])) === 'timeout';
      } catch (err) {
        if (!isGone(err)) failure = err;
      } finally {
        clearTimeout(timer);
      }
    }
    await client.close();
    if (timedOut) {
      throw new Error(
        `the MCP server did not answer the DELETE that ends its Streamable HTTP session within ${TERMINATE_TIMEOUT_MS} ms; the client was closed, and the server may keep the session until it expires.`,
      );
    }
    if (failure !== undefined) {
      throw new Error(
        `terminating the MCP server's Streamable HTTP session failed (the client was closed, the server may keep the session until it expires): ${errorText(failure)}`,
        { cause: failure },
      );
    }
  }
}

/** `run()`'s promise, or a rejected one when it throws. */
function settle(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return Promise.resolve(run());
  } catch (err) {
    return Promise.reject(err);
  }
}

/** A `DELETE` answered 404: the server no longer knows the session (it is already gone). */
function isGone(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const e = err as { code?: unknown; status?: unknown; data?: { status?: unknown } };
  return e.code === 404 || e.status === 404 || e.data?.status === 404;
}
