import diagnosticsChannel from 'node:diagnostics_channel';
import {
  SpanKind,
  SpanStatusCode,
  context as otelContext,
  createContextKey,
  diag,
  trace,
  type Context,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_POLESTAR_STORE_OPERATION,
  ATTR_POLESTAR_TURN_ATTEMPT,
  ATTR_POLESTAR_TURN_DURABLE,
  ATTR_POLESTAR_TURN_NUMBER,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  GEN_AI_OPERATION_INVOKE_AGENT,
  SEMCONV_SCHEMA_URL,
} from './semconv.js';
import { installWrapper, uninstallWrapper, type WrappedKind } from './wrapper-slot.js';
import { agentRegistryOf } from '../agents/plugin.js';
import { loggerOfTrace, serverOfTrace } from '../observability/channels.js';
import { checkLogger, log, type Logger } from '../observability/logger.js';
import { errorText } from '../util/error-text.js';

/** The instrumentation's name, as OpenTelemetry reports it (the tracer's name too). */
export const INSTRUMENTATION_NAME = 'polestar-di';
/** The instrumentation's version: the `polestar-di` release it ships with. */
export const INSTRUMENTATION_VERSION = '0.1.0';

/**
 * The configuration of {@link PolestarInstrumentation} (and the options of
 * {@link instrumentPolestar}). Every field is optional.
 */
export interface PolestarInstrumentationConfig {
  /**
   * Whether the instrumentation starts enabled (default `true`): a disabled one subscribes
   * to nothing until `enable()` (OpenTelemetry's `registerInstrumentations` calls it).
   */
  enabled?: boolean;
  /**
   * Where the bridge's own failures go. Default: the logger of the server the traced agent
   * belongs to (its `logger` option, else the console); OpenTelemetry's `diag` when no
   * server is known.
   */
  logger?: Logger;
  /**
   * Whether session-store calls become spans (default `true`): `polestar.store.<method>`.
   * A call made inside a turn's function (by a tool body, say) is a child of the span
   * active there; one polestar makes for a turn (`begin`, `commit`) a child of the turn's
   * span; any other a child of the span active at the call. A store call made outside any
   * trace (a lease renewal on a timer) makes no span.
   */
  storeSpans?: boolean;
}

/** The options of {@link instrumentPolestar}. */
export interface InstrumentPolestarOptions {
  /** The tracer provider to make spans with. Default: the global one (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Where the bridge's own failures go; see {@link PolestarInstrumentationConfig.logger}. */
  logger?: Logger;
  /** Whether session-store calls become spans; see {@link PolestarInstrumentationConfig.storeSpans}. */
  storeSpans?: boolean;
}

// ---- the channel context objects this bridge reads (published by polestar itself)

interface TraceMessage {
  error?: unknown;
  result?: unknown;
}
interface AgentMessage extends TraceMessage {
  readonly op: 'create' | 'dispose';
  readonly agentId: string;
  readonly kind?: string;
}
interface TurnMessage extends TraceMessage {
  readonly agentId: string;
  readonly kind?: string;
  readonly sessionId?: string;
  readonly turn?: number;
  readonly attempt?: number;
  readonly durable: boolean;
}
interface ToolMessage extends TraceMessage {
  readonly call: { readonly callId: string; readonly name: string };
  readonly agentId?: string;
  result?: { readonly isError: boolean; readonly error?: { readonly code: string; readonly message: string } };
}
interface StoreMessage extends TraceMessage {
  readonly op: string;
  readonly sessionId?: string;
}

type TraceEvent = 'start' | 'end' | 'asyncEnd' | 'error';
type Handler = (message: unknown) => void;
/** One subscription: a handler on one event of one of polestar's tracing channels. */
interface Subscription {
  readonly channel: string;
  readonly event: TraceEvent;
  readonly handler: Handler;
}
type ChannelLike = { subscribe(handler: Handler): void; unsubscribe(handler: Handler): boolean };

/** Marks the contexts inside a turn's function (and everything it calls): the value is the turn's span. */
const INSIDE_TURN = createContextKey('polestar-di turn');

const eventChannel = (name: string, event: TraceEvent): ChannelLike =>
  (diagnosticsChannel.tracingChannel(name) as unknown as Record<TraceEvent, ChannelLike>)[event];

function subscribeAll(subscriptions: readonly Subscription[]): void {
  for (const s of subscriptions) eventChannel(s.channel, s.event).subscribe(s.handler);
}

function unsubscribeAll(subscriptions: readonly Subscription[]): void {
  for (const s of subscriptions) eventChannel(s.channel, s.event).unsubscribe(s.handler);
}

/** The `error.type` of a thrown value: its string `code`, else its name. */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  }
  return '_OTHER';
}

/** The status message of a span that failed with `error`: its message (also a plain object's string `message`), else the value described. */
function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && !(error instanceof Error) && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return errorText(error);
}

/** Checks a logger option given to `where` (absent: none given). */
function checkOptionalLogger(logger: unknown, where: string): void {
  if (logger !== undefined) checkLogger(logger, where);
}

function checkTracerProvider(provider: unknown, where: string): void {
  if (typeof provider !== 'object' || provider === null || typeof (provider as { getTracer?: unknown }).getTracer !== 'function') {
    throw new TypeError(`${where}: tracerProvider has no getTracer(name, version?) method; give an OpenTelemetry TracerProvider (a BasicTracerProvider or NodeTracerProvider, say)`);
  }
}

function markFailed(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
  if (error instanceof Error) span.recordException(error);
}

/**
 * Makes OpenTelemetry spans of what polestar does, in the OpenTelemetry GenAI semantic
 * conventions (version {@link SEMCONV_VERSION}). It implements OpenTelemetry's
 * `Instrumentation` interface, so it can be handed to `registerInstrumentations` or to the
 * Node SDK's `instrumentations`; {@link instrumentPolestar} is the short form.
 *
 * - **A turn** (of an in-process or a durable session) is an `invoke_agent <kind>` span
 *   (`invoke_agent <agentId>` when the agent has no kind), span kind `INTERNAL`, with
 *   `gen_ai.operation.name` `invoke_agent`, `gen_ai.agent.id`, `gen_ai.agent.name` (the
 *   kind, else the id), `gen_ai.conversation.id` (the durable session's id), and
 *   `polestar.turn.durable`, `polestar.turn.number`, `polestar.turn.attempt`. A turn that
 *   rejects has status `ERROR` and `error.type` (the error's `code`, else its name).
 * - **A tool call** (every `Tools.execute`, refused, unknown and invalid calls included) is
 *   an `execute_tool <name>` span, kind `INTERNAL`, with `gen_ai.operation.name`
 *   `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`
 *   (`function`) and `gen_ai.agent.id`. An error result has status `ERROR` and `error.type`
 *   its code (`UNKNOWN_TOOL`, `INVALID_ARGS`, `DENIED`, `TIMEOUT`, `EXECUTION_ERROR`).
 * - **A session-store call** made in a trace is a `polestar.store.<method>` span (a child
 *   of the span active at the call; polestar's own `begin` and `commit` of a turn are
 *   children of the turn's span), with
 *   `polestar.store.operation` and `gen_ai.conversation.id`; a failure has `error.type` the
 *   `SessionError`'s code. Turn `storeSpans` off to skip them.
 *
 * Each span's parent is the context active at the call, so polestar's spans nest under a
 * model SDK's own (the AI SDK's `ai.toolCall`, say). A turn's function and a tool's body run
 * with their span active, so spans made inside them are its children. An
 * `AsyncLocalStorageContextManager` (the Node SDK registers one) is needed for that.
 *
 * The instrumentation never throws into a turn or a tool call: its own failures go to the
 * `logger` of its config, else to the server's logger.
 *
 * @example
 * ```ts
 * import { NodeSDK } from '@opentelemetry/sdk-node';
 * import { PolestarInstrumentation } from 'polestar-di/otel';
 *
 * new NodeSDK({ instrumentations: [new PolestarInstrumentation()] }).start();
 * ```
 */
export class PolestarInstrumentation {
  /** `polestar-di`: the name OpenTelemetry reports (and the tracer's name). */
  readonly instrumentationName: string = INSTRUMENTATION_NAME;
  /** The `polestar-di` version this instrumentation ships with. */
  readonly instrumentationVersion: string = INSTRUMENTATION_VERSION;
  /** What it instruments, for OpenTelemetry's listings. */
  readonly instrumentationDescription: string =
    'Spans of polestar-di turns, tool calls and session-store calls, in the OpenTelemetry GenAI semantic conventions';

  #config: PolestarInstrumentationConfig;
  #tracerProvider: TracerProvider | undefined;
  #tracer: Tracer;
  #enabled = false;
  /** The span of each traced call, by its channel context object. */
  readonly #spans = new WeakMap<object, Span>();
  /** The context objects an `error` was published for. */
  readonly #errored = new WeakSet<object>();
  /**
   * The turns in flight of each durable session, oldest first: the oldest is the one running
   * (its span is the parent of the session's store calls); a later one is a call refused
   * while it runs, traced until it rejects.
   */
  readonly #turnsOfSession = new Map<string, Array<{ readonly span: Span; readonly message: TurnMessage }>>();
  /** Agent kinds seen on `agent` create, by server and agent id, for turns whose context does not carry the kind. */
  #kinds = new WeakMap<object, Map<string, string>>();

  /** The `start` handlers (they make the spans), subscribed while enabled. */
  #starts: readonly Subscription[] = [];
  /**
   * The handlers that end spans, subscribed while enabled and, after `disable()`, until
   * the spans started before it have ended.
   */
  #finishers: readonly Subscription[] = [];
  /** How many spans are started and not yet ended. */
  #inFlight = 0;

  /**
   * Creates the instrumentation and, unless `config.enabled` is `false`, enables it at
   * once with the global tracer provider (as every OpenTelemetry instrumentation does).
   */
  constructor(config: PolestarInstrumentationConfig = {}) {
    checkOptionalLogger(config.logger, 'new PolestarInstrumentation(config)');
    this.#config = { ...config };
    this.#tracer = this.#makeTracer();
    if (this.#config.enabled !== false) this.enable();
  }

  /** Subscribes to polestar's channels and installs the wrapper that makes spans active. Idempotent. */
  enable(): void {
    if (this.#enabled) return;
    this.#enabled = true;
    const on = (channel: string, event: TraceEvent, fn: (message: never) => void): Subscription => ({
      channel,
      event,
      handler: (message) => {
        try {
          fn(message as never);
        } catch (error) {
          this.#report(message, error);
        }
      },
    });
    const store = this.#config.storeSpans !== false;
    if (this.#finishers.length === 0) {
      // (still subscribed when re-enabled before the spans of the last enable all ended)
      this.#finishers = [
        on('polestar:agent', 'asyncEnd', (m: AgentMessage) => this.#agentEnd(m)),
        on('polestar:turn', 'end', (m: TurnMessage) => this.#syncEnd(m, 'turn')),
        on('polestar:turn', 'error', (m: TurnMessage) => this.#failed(m)),
        on('polestar:turn', 'asyncEnd', (m: TurnMessage) => this.#turnEnd(m)),
        on('polestar:tool', 'end', (m: ToolMessage) => this.#syncEnd(m, 'tool')),
        on('polestar:tool', 'error', (m: ToolMessage) => this.#failed(m)),
        on('polestar:tool', 'asyncEnd', (m: ToolMessage) => this.#toolEnd(m)),
        ...(store
          ? [
              on('polestar:store', 'end', (m: StoreMessage) => this.#syncEnd(m, 'store')),
              on('polestar:store', 'error', (m: StoreMessage) => this.#failed(m)),
              on('polestar:store', 'asyncEnd', (m: StoreMessage) => this.#finish(m)),
            ]
          : []),
      ];
      subscribeAll(this.#finishers);
    }
    this.#starts = [
      on('polestar:agent', 'start', (m: AgentMessage) => this.#agentStart(m)),
      on('polestar:turn', 'start', (m: TurnMessage) => this.#turnStart(m)),
      on('polestar:tool', 'start', (m: ToolMessage) => this.#toolStart(m)),
      ...(store ? [on('polestar:store', 'start', (m: StoreMessage) => this.#storeStart(m))] : []),
    ];
    subscribeAll(this.#starts);
    installWrapper(this);
  }

  /**
   * Unsubscribes and removes the wrapper: no span is started from here on. A span already
   * started still ends when its call settles (its channels stay subscribed until then, so a
   * call made meanwhile still builds its channel message). Idempotent.
   */
  disable(): void {
    if (!this.#enabled) return;
    this.#enabled = false;
    uninstallWrapper(this);
    unsubscribeAll(this.#starts);
    this.#starts = [];
    if (this.#inFlight === 0) this.#unsubscribeFinishers();
    this.#kinds = new WeakMap();
  }

  #unsubscribeFinishers(): void {
    unsubscribeAll(this.#finishers);
    this.#finishers = [];
  }

  /** Whether the instrumentation is subscribed (between `enable()` and `disable()`). */
  get isEnabled(): boolean {
    return this.#enabled;
  }

  /** Makes the spans with `tracerProvider` from here on (OpenTelemetry's `registerInstrumentations` calls it). */
  setTracerProvider(tracerProvider: TracerProvider): void {
    checkTracerProvider(tracerProvider, 'PolestarInstrumentation.setTracerProvider(tracerProvider)');
    this.#tracerProvider = tracerProvider;
    this.#tracer = this.#makeTracer();
  }

  /** Does nothing: polestar records no metrics. Present because OpenTelemetry's `Instrumentation` interface has it. */
  setMeterProvider(_meterProvider: MeterProvider): void {}

  /**
   * Replaces the configuration. `enabled` is not acted on here (call `enable()` or
   * `disable()`); a changed `storeSpans` applies from the next `enable()`.
   */
  setConfig(config: PolestarInstrumentationConfig = {}): void {
    checkOptionalLogger(config.logger, 'PolestarInstrumentation.setConfig(config)');
    this.#config = { ...config };
  }

  /** A copy of the current configuration. */
  getConfig(): PolestarInstrumentationConfig {
    return { ...this.#config };
  }

  #makeTracer(): Tracer {
    const provider = this.#tracerProvider ?? trace.getTracerProvider();
    return provider.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION, { schemaUrl: SEMCONV_SCHEMA_URL });
  }

  // ---- the channel handlers

  #agentStart(m: AgentMessage): void {
    if (m.op !== 'create' || typeof m.kind !== 'string') return;
    const server = serverOfTrace(m);
    if (server === undefined) return;
    let kinds = this.#kinds.get(server);
    if (kinds === undefined) this.#kinds.set(server, (kinds = new Map()));
    kinds.set(m.agentId, m.kind);
  }

  #agentEnd(m: AgentMessage): void {
    if (m.op !== 'dispose') return;
    const server = serverOfTrace(m);
    if (server !== undefined) this.#kinds.get(server)?.delete(m.agentId);
  }

  #kindOf(m: TurnMessage): string | undefined {
    if (typeof m.kind === 'string') return m.kind;
    const server = serverOfTrace(m);
    if (server === undefined) return undefined;
    // the live agent's own (also one created before `enable()`), else the kind seen at its create
    const live = agentRegistryOf(server)?.liveHolder(m.agentId);
    return live !== undefined ? live.kind : this.#kinds.get(server)?.get(m.agentId);
  }

  #turnStart(m: TurnMessage): void {
    const kind = this.#kindOf(m);
    const name = kind ?? m.agentId;
    const span = this.#tracer.startSpan(`${GEN_AI_OPERATION_INVOKE_AGENT} ${name}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_INVOKE_AGENT,
        [ATTR_GEN_AI_AGENT_ID]: m.agentId,
        [ATTR_GEN_AI_AGENT_NAME]: name,
        [ATTR_POLESTAR_TURN_DURABLE]: m.durable === true,
        ...(m.sessionId !== undefined ? { [ATTR_GEN_AI_CONVERSATION_ID]: m.sessionId } : {}),
      },
    }, otelContext.active());
    this.#spans.set(m, span);
    this.#inFlight++;
    if (m.sessionId !== undefined) {
      const turns = this.#turnsOfSession.get(m.sessionId);
      if (turns === undefined) this.#turnsOfSession.set(m.sessionId, [{ span, message: m }]);
      else turns.push({ span, message: m });
    }
  }

  #turnEnd(m: TurnMessage): void {
    const span = this.#spans.get(m);
    if (span === undefined) return;
    if (typeof m.turn === 'number') span.setAttribute(ATTR_POLESTAR_TURN_NUMBER, m.turn);
    if (typeof m.attempt === 'number') span.setAttribute(ATTR_POLESTAR_TURN_ATTEMPT, m.attempt);
    this.#finish(m);
  }

  #toolStart(m: ToolMessage): void {
    const name = typeof m.call?.name === 'string' ? m.call.name : '';
    const callId = typeof m.call?.callId === 'string' ? m.call.callId : '';
    const span = this.#tracer.startSpan(name === '' ? GEN_AI_OPERATION_EXECUTE_TOOL : `${GEN_AI_OPERATION_EXECUTE_TOOL} ${name}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL,
        ...(name !== '' ? { [ATTR_GEN_AI_TOOL_NAME]: name } : {}),
        ...(callId !== '' ? { [ATTR_GEN_AI_TOOL_CALL_ID]: callId } : {}),
        [ATTR_GEN_AI_TOOL_TYPE]: 'function',
        ...(m.agentId !== undefined ? { [ATTR_GEN_AI_AGENT_ID]: m.agentId } : {}),
      },
    }, otelContext.active());
    this.#spans.set(m, span);
    this.#inFlight++;
  }

  #toolEnd(m: ToolMessage): void {
    const span = this.#spans.get(m);
    if (span === undefined) return;
    const error = m.result?.error;
    if (m.result?.isError === true && error !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    this.#finish(m);
  }

  #storeStart(m: StoreMessage): void {
    const turnSpan = m.sessionId !== undefined ? this.#turnsOfSession.get(m.sessionId)?.[0]?.span : undefined;
    const active = otelContext.active();
    let parent: Context;
    if (turnSpan !== undefined) {
      // inside the turn's function (a tool's body, say): the innermost span; else polestar's
      // own begin/commit, run in the caller's context: the turn's span
      parent = active.getValue(INSIDE_TURN) === turnSpan ? active : trace.setSpan(active, turnSpan);
    } else if (trace.getSpan(active) !== undefined) parent = active;
    else return; // outside any trace: a lease renewal on a timer, say
    const span = this.#tracer.startSpan(`polestar.store.${m.op}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR_POLESTAR_STORE_OPERATION]: m.op,
        ...(m.sessionId !== undefined ? { [ATTR_GEN_AI_CONVERSATION_ID]: m.sessionId } : {}),
      },
    }, parent);
    this.#spans.set(m, span);
    this.#inFlight++;
  }

  /** `error` of any channel: the call threw or rejected. */
  #failed(m: TraceMessage): void {
    const span = this.#spans.get(m);
    if (span === undefined) return;
    this.#errored.add(m);
    markFailed(span, m.error);
  }

  /**
   * `end` of any channel: a call that threw synchronously (its `error` came before `end`)
   * gets no `asyncEnd`, so its span ends here.
   */
  #syncEnd(m: TraceMessage, kind: 'turn' | 'tool' | 'store'): void {
    if (!this.#errored.has(m)) return;
    if (kind === 'turn') this.#turnEnd(m as TurnMessage);
    else this.#finish(m);
  }

  #finish(m: TraceMessage): void {
    const span = this.#spans.get(m);
    if (span === undefined) return;
    this.#spans.delete(m);
    if (--this.#inFlight === 0 && !this.#enabled) this.#unsubscribeFinishers();
    const sessionId = (m as { sessionId?: unknown }).sessionId;
    const turns = typeof sessionId === 'string' ? this.#turnsOfSession.get(sessionId) : undefined;
    const at = turns?.findIndex((t) => t.span === span) ?? -1;
    if (turns !== undefined && at >= 0) {
      turns.splice(at, 1);
      if (turns.length === 0) this.#turnsOfSession.delete(sessionId as string);
    }
    span.end();
  }

  // ---- the wrapper: runs a turn's function or a tool's body with its span active

  /** @internal Runs `body` with the span of `message` active (or as is when there is none). */
  runInSpan(kind: WrappedKind, message: object, body: () => unknown): unknown {
    let active: Context | undefined;
    try {
      const span = this.#spans.get(message);
      if (span !== undefined) {
        active = trace.setSpan(otelContext.active(), span);
        if (kind === 'turn') active = active.setValue(INSIDE_TURN, span);
      }
    } catch (error) {
      this.#report(message, error);
    }
    return active === undefined ? body() : otelContext.with(active, body);
  }

  // ---- its own failures never reach polestar

  /** The logger of the server `message` belongs to (a store call's: that of its session's turn in flight). */
  #serverLogger(message: unknown): Logger | undefined {
    if (typeof message !== 'object' || message === null) return undefined;
    const own = loggerOfTrace(message);
    if (own !== undefined) return own;
    const sessionId = (message as { sessionId?: unknown }).sessionId;
    const turn = typeof sessionId === 'string' ? this.#turnsOfSession.get(sessionId)?.[0] : undefined;
    return turn === undefined ? undefined : loggerOfTrace(turn.message);
  }

  #report(message: unknown, error: unknown): void {
    const text = `polestar-di/otel: could not trace a polestar call (${errorMessage(error)}); the call itself is unaffected. Check the tracer provider given to instrumentPolestar().`;
    try {
      const logger = this.#config.logger ?? this.#serverLogger(message);
      if (logger !== undefined) log(logger, 'error', text, { error, message });
      else diag.error(text, error);
    } catch {
      // a logger that throws has nowhere left to report to
    }
  }
}

/**
 * Traces polestar with OpenTelemetry: subscribes a {@link PolestarInstrumentation} to
 * polestar's channels and returns the disposer that unsubscribes it (no span is made after
 * it; calling it twice does nothing).
 *
 * @example
 * ```ts
 * import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
 * import { instrumentPolestar } from 'polestar-di/otel';
 *
 * const exporter = new InMemorySpanExporter();
 * const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
 * const stop = instrumentPolestar({ tracerProvider });
 * await session.turn(async (turn) => turn.get(Tools).execute({ callId: '1', name: 'search', arguments: { q: 'moon' } }));
 * stop();
 * // exporter.getFinishedSpans(): execute_tool search, invoke_agent <agent>
 * ```
 */
export function instrumentPolestar(options: InstrumentPolestarOptions = {}): () => void {
  checkOptionalLogger(options.logger, 'instrumentPolestar(options)');
  if (options.tracerProvider !== undefined) checkTracerProvider(options.tracerProvider, 'instrumentPolestar(options)');
  const instrumentation = new PolestarInstrumentation({
    enabled: false,
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.storeSpans !== undefined ? { storeSpans: options.storeSpans } : {}),
  });
  if (options.tracerProvider !== undefined) instrumentation.setTracerProvider(options.tracerProvider);
  instrumentation.enable();
  return () => instrumentation.disable();
}
