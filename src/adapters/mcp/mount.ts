/**
 * `mountMcpTools`: every tool of an MCP server registered through one context, owned by
 * it. The mount owns its source from the call on: it is closed exactly once, when the
 * context (or the handle) is disposed, or when the mount fails.
 */
import { SystemContext } from '../../context/system-context.js';
import { describeValue } from '../../util/describe-value.js';
import { errorText } from '../../util/error-text.js';
import { Events } from '../../events/events.js';
import type { JsonObject } from '../../util/lossless-json.js';
import { Tools } from '../../tools/tools.js';
import type { ToolDefinition, ToolExecution, ToolExecutionToken, ToolResult } from '../../tools/types.js';
import { Lifetime } from '../../lifetime/lifetime.js';
import { shapeResult, type McpTool, type McpToolSource, type ShapedResult } from './result.js';
import { McpMountError } from './mount-error.js';
import { MountedTool } from './mounted-tool.js';

/** The `$schema` a listed `inputSchema` without one is registered with (MCP's default dialect). */
export const MCP_DEFAULT_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** What `mountMcpTools` accepts as its third argument (read once, at the call). */
export interface McpMountOptions {
  /** Registered names are `prefix + tool.name` (default `''`): mount two servers with the same tool names under different prefixes. */
  readonly prefix?: string;
  /** Mount only the tools for which it returns `true` (called with the tool as listed, on every sync). */
  readonly filter?: (tool: McpTool) => boolean;
  /**
   * Called with the error of a re-sync started by the server's `list_changed`
   * notification (nothing else reports it; an explicit `refresh()` rejects instead).
   */
  readonly onRefreshError?: (error: McpMountError) => void;
}

/** The handle `mountMcpTools` resolves to. */
export interface McpMount {
  /** The registered names (`prefix + tool.name`), in listing order; a fresh frozen array on every read, empty once disposed. */
  readonly names: readonly string[];
  /**
   * Re-lists the server's tools and re-syncs: registers new ones, unregisters the ones no
   * longer listed (aborting their in-flight calls) and re-registers changed ones. Syncs
   * run one at a time. Rejects with a {@link McpMountError} naming the tool that failed
   * (the tools synced before it stay), or when the mount is disposed.
   */
  refresh(): Promise<void>;
  /**
   * Unregisters the tools, aborts their in-flight calls, awaits them and closes the source
   * (once, however often it is called; the same as disposing the context). Rejects when
   * closing the source failed.
   */
  dispose(): Promise<void>;
  /** Same as {@link McpMount.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Mounts every tool of an MCP server as polestar tools, registered through `ctx` (so into
 * the layer of `scopeOf(ctx)`: mount into an agent's context and only that agent sees
 * them), named `prefix + tool.name`, with the listed `annotations`. A listed
 * `inputSchema` without `$schema` is registered as JSON Schema 2020-12 (MCP's default
 * dialect). Pages are followed through `nextCursor`.
 *
 * A call runs `source.callTool(tool.name, args, signal)`; `signal` aborts when the call
 * is aborted, when the tool is unregistered, and when the mount is disposed. The MCP
 * result becomes the polestar result: `isError: true` fails the call with
 * `EXECUTION_ERROR` and the server's text; otherwise the text parts joined with a newline
 * are the `content` and the whole MCP result (`content`, `structuredContent`) is the
 * `output`.
 *
 * The mount owns `source` from the call on. Disposing `ctx` (or the handle) unregisters
 * the tools, aborts and awaits their in-flight calls and closes the source exactly once:
 * a concurrent cleanup of `ctx`, started as soon as the disposal of `ctx`
 * starts, so several mounts close together. If listing or any registration fails, or
 * `ctx` is disposed first, every registration is undone, the source is closed once and
 * the promise rejects with a {@link McpMountError} naming the tool (skip tools with
 * `options.filter`, rename them with `options.prefix`). It never throws synchronously.
 *
 * When the source has `onToolsChanged`, every `notifications/tools/list_changed`
 * re-lists and re-syncs, like {@link McpMount.refresh}.
 *
 * @example
 * ```ts
 * const mount = await mountMcpTools(agentCtx, fromMcpSdkClient(client), { prefix: 'fs_' });
 * mount.names; // ['fs_read_text_file', …]
 * ```
 */
export async function mountMcpTools(ctx: SystemContext, source: McpToolSource, options?: McpMountOptions): Promise<McpMount> {
  const close = closerOf(source);
  let prefix = '';
  let filter: McpMountOptions['filter'];
  let onRefreshError: McpMountOptions['onRefreshError'];
  let tools: Tools;
  let events: Events;
  try {
    if (!(ctx instanceof SystemContext)) {
      throw new TypeError(`mountMcpTools(ctx, source): ctx must be a SystemContext (an agent's or session's context), got ${describeValue(ctx)}.`);
    }
    for (const m of ['listTools', 'callTool', 'close'] as const) {
      if (typeof (source as unknown as Record<string, unknown> | null)?.[m] !== 'function') {
        throw new TypeError(
          `mountMcpTools(ctx, source): source.${m} must be a function, got ${describeValue((source as unknown as Record<string, unknown> | null)?.[m])}; ` +
            'pass an McpToolSource (listTools, callTool, close, optional onToolsChanged), e.g. a bridge over an MCP SDK client (see docs/adapters-and-mcp.md).',
        );
      }
    }
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') {
        throw new TypeError(`mountMcpTools(ctx, source, options): options must be { prefix?, filter?, onRefreshError? }, got ${describeValue(options)}.`);
      }
      const p = options.prefix;
      if (p !== undefined && typeof p !== 'string') throw new TypeError(`mountMcpTools(ctx, source, options): options.prefix must be a string, got ${describeValue(p)}.`);
      prefix = p ?? '';
      filter = options.filter;
      if (filter !== undefined && typeof filter !== 'function') {
        throw new TypeError(`mountMcpTools(ctx, source, options): options.filter must be a function (tool) => boolean, got ${describeValue(filter)}.`);
      }
      onRefreshError = options.onRefreshError;
      if (onRefreshError !== undefined && typeof onRefreshError !== 'function') {
        throw new TypeError(`mountMcpTools(ctx, source, options): options.onRefreshError must be a function, got ${describeValue(onRefreshError)}.`);
      }
    }
    ctx._live('mountMcpTools()');
    const t = ctx.tryGet(Tools);
    if (t === undefined) {
      throw new TypeError('mountMcpTools(ctx, source): Tools is not installed; add it with server.addPlugins(new ToolsPlugin()) before server.finish().');
    }
    tools = t;
    events = ctx.get(Events);
  } catch (err) {
    // The mount owns the source from the call on: a refused call still closes it (once).
    if (close !== undefined) await close().catch(() => undefined);
    throw err;
  }
  const mount = new Mount(ctx, tools, events, source, prefix, filter, onRefreshError);
  return mount.start();
}

function closerOf(source: unknown): (() => Promise<void>) | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  let close: unknown;
  try {
    close = (source as { close?: unknown }).close;
  } catch {
    return undefined;
  }
  if (typeof close !== 'function') return undefined;
  return async () => {
    await (close as () => unknown).call(source);
  };
}

/** The identity of a listed tool's definition: a change re-registers it. */
function keyOf(tool: McpTool): string | undefined {
  try {
    return JSON.stringify([tool.description, tool.inputSchema, tool.annotations]);
  } catch {
    return undefined;
  }
}

/** The result shaping of the mount's calls, handed from the body to the `tools/post-execute` listener by execution token. */
type Shaped = WeakMap<ToolExecutionToken, ShapedResult>;

class Mount implements McpMount {
  readonly #ctx: SystemContext;
  readonly #tools: Tools;
  readonly #events: Events;
  readonly #source: McpToolSource;
  readonly #prefix: string;
  readonly #filter: McpMountOptions['filter'];
  readonly #onRefreshError: McpMountOptions['onRefreshError'];
  readonly #entries = new Map<string, MountedTool>();
  readonly #shaped: Shaped = new WeakMap();
  /**
   * The mount's lifetime. Its close starts when the mount is disposed, when its context's
   * disposal starts, or when mounting fails: it unregisters every tool (aborting their
   * calls), awaits the calls, removes the result listener and closes the source.
   */
  readonly #lifetime: Lifetime;
  /** Why the mount closes (the first close's reason): what the tools' calls are aborted with. */
  #reason: unknown = undefined;
  /** The close as the handle reports it, memoized like the lifetime's. */
  #closed: Promise<void> | undefined;
  #tail: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;
  #offCleanup: (() => void) | undefined;
  #onCtxAbort: (() => void) | undefined;

  constructor(
    ctx: SystemContext,
    tools: Tools,
    events: Events,
    source: McpToolSource,
    prefix: string,
    filter: McpMountOptions['filter'],
    onRefreshError: McpMountOptions['onRefreshError'],
  ) {
    this.#ctx = ctx;
    this.#tools = tools;
    this.#events = events;
    this.#source = source;
    this.#prefix = prefix;
    this.#filter = filter;
    this.#onRefreshError = onRefreshError;
    this.#lifetime = Lifetime.root({ label: 'MCP mount', timeoutMs: ctx._closeTimeoutMs() });
    // The mount owns the source from here on: its close closes it, last.
    this.#lifetime.addFinalizer(async () => {
      try {
        await this.#source.close();
      } catch (err) {
        throw new McpMountError(`closing the MCP source failed: ${errorText(err)}`, { cause: err });
      }
    });
  }

  get names(): readonly string[] {
    return Object.freeze([...this.#entries.keys()]);
  }

  refresh(): Promise<void> {
    if (this.#ended) {
      return Promise.reject(new McpMountError(`refresh(): this MCP mount was disposed; mount the server again with mountMcpTools(ctx, source).`));
    }
    return this.#requestSync();
  }

  dispose(): Promise<void> {
    this.#detachFromContext();
    return this.#closeOnce(new McpMountError('the MCP mount was disposed'));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  /** Whether the mount's close has started. */
  get #ended(): boolean {
    return this.#lifetime.state !== 'open';
  }

  /** Wires the mount to its context, then lists and registers; resolves to the handle. */
  async start(): Promise<McpMount> {
    const ctx = this.#ctx;
    try {
      this.#offCleanup = ctx.onDispose(() => this.#closeOnce(ctx.signal.reason), { concurrent: true });
      // Start closing the moment the disposal of ctx starts (so mounts close together and a
      // pending listing gives up); the finalizer above awaits the same close.
      const signal = ctx.signal;
      if (signal.aborted) throw this.#disposedDuringMount();
      this.#onCtxAbort = () => void this.#closeOnce(signal.reason).catch(noop);
      signal.addEventListener('abort', this.#onCtxAbort, { once: true });
      // the name as a plain string: #postExecute reads any decision defensively (typed
      // listeners are checked against EventMap, whose decision carries no `output`)
      const offListener = this.#events.on('tools/post-execute' as string, this.#postExecute, { prepend: true });
      this.#lifetime.addFinalizer(offListener);
      const onChanged = this.#source.onToolsChanged;
      if (typeof onChanged === 'function') {
        onChanged.call(this.#source, () => {
          if (this.#ended) return;
          this.#requestSync().catch((err: unknown) => {
            if (this.#ended || this.#onRefreshError === undefined) return;
            try {
              this.#onRefreshError(err instanceof McpMountError ? err : new McpMountError(errorText(err), { cause: err }));
            } catch {
              // the reporter's own failure has nowhere else to go
            }
          });
        });
      }
      await this.#requestSync();
      if (this.#ended) throw this.#disposedDuringMount();
      return this;
    } catch (err) {
      const failure =
        err instanceof McpMountError
          ? err
          : new McpMountError(`mountMcpTools(): ${errorText(err)}`, { cause: err });
      this.#detachFromContext();
      try {
        await this.#closeOnce(failure);
      } catch (closeErr) {
        failure.message += ` (closing the source failed too: ${errorText(closeErr)})`;
      }
      throw failure;
    }
  }

  #disposedDuringMount(): McpMountError {
    return new McpMountError(
      'mountMcpTools(): the context was disposed while the MCP tools were being mounted; every registration was undone and the source closed. Mount into a live context.',
      { cause: this.#ctx.signal.reason },
    );
  }

  #detachFromContext(): void {
    const off = this.#offCleanup;
    this.#offCleanup = undefined;
    try {
      off?.();
    } catch {
      // ctx is being disposed: its finalizer runs this same (memoized) close
    }
    if (this.#onCtxAbort !== undefined) {
      this.#ctx.signal.removeEventListener('abort', this.#onCtxAbort);
      this.#onCtxAbort = undefined;
    }
  }

  // ------------------------------------------------------------------ syncing

  /** Queues a sync after the running one; requests made before it starts share it. */
  #requestSync(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    const p: Promise<void> = this.#tail.then(() => {
      if (this.#queued === p) this.#queued = undefined;
      return this.#sync();
    });
    this.#queued = p;
    this.#tail = p.catch(noop);
    return p;
  }

  /** Races `p` against the mount's close: once it started, the source's answer no longer matters. */
  #untilEnded<T>(p: Promise<T>): Promise<T> {
    const ended = this.#lifetime.signal;
    return new Promise<T>((resolve, reject) => {
      const onEnd = (): void => {
        p.catch(noop);
        reject(this.#endedError());
      };
      if (ended.aborted) {
        onEnd();
        return;
      }
      ended.addEventListener('abort', onEnd, { once: true });
      p.then(
        (value) => {
          ended.removeEventListener('abort', onEnd);
          resolve(value);
        },
        (err: unknown) => {
          ended.removeEventListener('abort', onEnd);
          reject(err);
        },
      );
    });
  }

  #endedError(): McpMountError {
    return this.#ctx.signal.aborted
      ? this.#disposedDuringMount()
      : new McpMountError('the MCP mount was disposed while it listed the server\'s tools');
  }

  async #listAll(): Promise<McpTool[]> {
    const listed: McpTool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (;;) {
      let page: unknown;
      try {
        page = await this.#untilEnded(Promise.resolve().then(() => this.#source.listTools(cursor)));
      } catch (err) {
        if (err instanceof McpMountError) throw err;
        throw new McpMountError(
          `listing the MCP server's tools failed${cursor === undefined ? '' : ` (page at cursor "${cursor}")`}: ${errorText(err)}`,
          { cause: err },
        );
      }
      const tools = (page as { tools?: unknown } | null)?.tools;
      if (page === null || typeof page !== 'object' || !Array.isArray(tools)) {
        throw new McpMountError(`source.listTools(${cursor === undefined ? '' : JSON.stringify(cursor)}) resolved to ${describeValue(page)}, not { tools: [...], nextCursor? }; check the source's listTools bridge.`);
      }
      for (let i = 0; i < tools.length; i++) {
        const tool = tools[i] as unknown;
        const name = (tool as { name?: unknown } | null)?.name;
        if (tool === null || typeof tool !== 'object' || typeof name !== 'string' || name === '') {
          throw new McpMountError(
            `source.listTools() listed ${describeValue(tool)} at index ${i}${typeof name === 'string' ? ' named ""' : ''}, not a tool with a non-empty name: the MCP server's listing is invalid (or the source's listTools bridge is); fix the server, or wrap the source to drop that entry.`,
          );
        }
        listed.push(tool as McpTool);
      }
      const next = (page as { nextCursor?: unknown }).nextCursor;
      if (next === undefined || next === null || next === '') return listed;
      if (typeof next !== 'string') throw new McpMountError(`source.listTools() gave nextCursor ${describeValue(next)}, not a string.`);
      if (seenCursors.has(next)) throw new McpMountError(`source.listTools() gave nextCursor "${next}" twice; the server's pagination loops.`);
      seenCursors.add(next);
      cursor = next;
    }
  }

  async #sync(): Promise<void> {
    if (this.#ended) throw this.#endedError();
    const listed = await this.#listAll();
    if (this.#ended) throw this.#endedError();
    // From here on everything is synchronous: a close can not interleave.
    const wanted = new Map<string, McpTool>();
    for (const tool of listed) {
      let keep: unknown;
      try {
        keep = this.#filter === undefined ? true : this.#filter(tool);
      } catch (err) {
        throw new McpMountError(`options.filter threw for MCP tool "${tool.name}": ${errorText(err)}`, { toolName: tool.name, cause: err });
      }
      if (typeof keep !== 'boolean') {
        throw new McpMountError(`options.filter returned ${describeValue(keep)} for MCP tool "${tool.name}"; it must return true (mount) or false (skip).`, { toolName: tool.name });
      }
      if (!keep) continue;
      const name = this.#prefix + tool.name;
      if (wanted.has(name)) {
        throw new McpMountError(`the MCP server listed tool "${tool.name}" twice; skip one with options.filter.`, { toolName: tool.name });
      }
      wanted.set(name, tool);
    }
    for (const [name, entry] of [...this.#entries]) {
      const tool = wanted.get(name);
      if (tool === undefined || entry.key === undefined || keyOf(tool) !== entry.key) {
        entry.untrack();
        this.#unregister(entry, new McpMountError(`MCP tool "${entry.mcpName}" was unregistered: the server ${tool === undefined ? 'no longer lists it' : 'changed it'}`, { toolName: entry.mcpName }));
      }
    }
    for (const [name, tool] of wanted) {
      if (!this.#entries.has(name)) this.#register(name, tool);
    }
  }

  #register(name: string, tool: McpTool): void {
    const fail = (why: string, cause?: unknown): McpMountError =>
      new McpMountError(
        `could not register MCP tool "${tool.name}"${name === tool.name ? '' : ` as "${name}"`}: ${why}. Skip it with options.filter, or mount the server under options.prefix.`,
        { toolName: tool.name, cause },
      );
    const schema: unknown = tool.inputSchema;
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
      throw fail(`its inputSchema is ${describeValue(schema)}, not a JSON Schema object`);
    }
    const parameters = (
      (schema as { $schema?: unknown }).$schema === undefined ? { $schema: MCP_DEFAULT_SCHEMA_DIALECT, ...schema } : schema
    ) as JsonObject;
    const entry = new MountedTool(name, tool.name, keyOf(tool), this.#unmount);
    const definition: ToolDefinition & { readonly annotations?: JsonObject } = {
      name,
      description: typeof tool.description === 'string' ? tool.description : '',
      parameters,
      execute: (args: unknown, execution: ToolExecution) => this.#call(entry, args, execution),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as JsonObject }),
    };
    try {
      entry.off = this.#tools.register(definition);
    } catch (err) {
      throw fail(errorText(err), err);
    }
    this.#entries.set(name, entry);
    entry.untrack = this.#lifetime.track(entry);
  }

  /** A tool's part of the mount's close: unregistered with the close's reason (it stays tracked, so the close awaits its calls). */
  readonly #unmount = (entry: MountedTool): void => {
    this.#unregister(entry, this.#reason);
  };

  #unregister(entry: MountedTool, reason: unknown): void {
    this.#entries.delete(entry.name);
    entry.calls.abort(reason);
    entry.off();
  }

  // ------------------------------------------------------------------ calls

  /**
   * One call of a mounted tool. The source gets a signal of this call alone, aborted by the
   * tool's signal (unregistered, mount disposed) or the execution's: every listener is
   * removed when the call settles, so nothing of a call outlives it (a signal combined
   * with `AbortSignal.any` from the long-lived tool signal would stay behind, and so would
   * a listener an SDK adds to a signal it is given and never removes).
   */
  #call(entry: MountedTool, args: unknown, execution: ToolExecution): Promise<ShapedResult['output']> {
    const { mcpName } = entry;
    const toolSignal = entry.calls.signal;
    const es = (execution as { signal?: AbortSignal | undefined } | undefined)?.signal;
    const call = new AbortController();
    const signal = call.signal;
    const p = new Promise<ShapedResult['output']>((resolve, reject) => {
      const aborted = toolSignal.aborted ? toolSignal : es?.aborted === true ? es : undefined;
      if (aborted !== undefined) {
        reject(abortedError(mcpName, aborted.reason));
        return;
      }
      // the call settles once: at its first abort, or with the source's answer
      const done = (): void => {
        toolSignal.removeEventListener('abort', onTool);
        es?.removeEventListener('abort', onExecution);
      };
      const abortedBy = (by: AbortSignal) => (): void => {
        done();
        call.abort(by.reason);
        reject(abortedError(mcpName, by.reason));
      };
      const onTool = abortedBy(toolSignal);
      // (added to `es` only when there is one)
      const onExecution = abortedBy(es as AbortSignal);
      toolSignal.addEventListener('abort', onTool);
      es?.addEventListener('abort', onExecution);
      const a = args === undefined ? {} : (args as { readonly [key: string]: unknown });
      Promise.resolve()
        .then(() => this.#source.callTool(mcpName, a, signal))
        .then(
          (result) => {
            done();
            const shaped = shapeResult(mcpName, result);
            if (execution !== undefined) this.#shaped.set(execution.token, shaped);
            resolve(shaped.output);
          },
          (err: unknown) => {
            done();
            reject(err);
          },
        )
        .catch(reject);
    });
    const running = entry.running;
    const tracked = p.catch(noop);
    running.add(tracked);
    void tracked.then(() => running.delete(tracked));
    return p;
  }

  /**
   * Gives the model the MCP text as `content` (the body returned the whole MCP result: the
   * `output`). Inert once the mount's close started, as if already removed.
   */
  readonly #postExecute = (decision: unknown, execution: ToolExecution, result: ToolResult): unknown => {
    const shaped = execution === undefined ? undefined : this.#shaped.get(execution.token);
    if (shaped === undefined) return decision;
    this.#shaped.delete(execution.token);
    if (this.#ended || result.isError || decision === null || typeof decision !== 'object') return decision;
    const d = decision as { kind?: unknown; content?: unknown; output?: unknown };
    if (d.kind !== 'accept' || d.content !== undefined) return decision;
    return { kind: 'accept', content: shaped.text, output: d.output !== undefined ? d.output : shaped.output };
  };

  // ------------------------------------------------------------------ close

  /** Starts the mount's close once (the first `reason` is what the calls are aborted with); every caller gets the same promise. */
  #closeOnce(reason: unknown): Promise<void> {
    if (this.#closed === undefined) {
      this.#reason = reason;
      this.#closed = this.#lifetime.close().catch(mountCloseError);
    }
    return this.#closed;
  }
}

/**
 * The failure of a mount's close as the handle reports it: the one error itself, or an
 * `AggregateError` of all of them.
 */
function mountCloseError(err: unknown): never {
  const errors: unknown[] = err instanceof AggregateError ? err.errors : [err];
  if (errors.length === 1) throw errors[0];
  throw new AggregateError(errors, `disposing the MCP mount failed ${errors.length} times: ${errors.map(errorText).join('; ')}`);
}

function abortedError(mcpName: string, reason: unknown): Error {
  return new Error(`MCP tool "${mcpName}" was aborted: ${errorText(reason)}`, { cause: reason });
}

function noop(): void {
  // intentionally empty
}
