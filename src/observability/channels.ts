/**
 * polestar's `node:diagnostics_channel` tracing channels: what an APM, a test or the
 * OpenTelemetry bridge subscribes to. Every channel is traced with `tracePromise`
 * semantics, and nothing is built or published while it has no subscriber (one
 * `hasSubscribers` read on the hot path).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Server } from '../context/server.js';
import type { ToolExecution, ToolResult } from '../tools/types.js';
import type { Logger } from './logger.js';

/**
 * The names of polestar's tracing channels, for `diagnostics_channel.tracingChannel(name)`
 * (whose events are published on `tracing:<name>:start`, `:end`, `:asyncStart`,
 * `:asyncEnd` and `:error`). Each call is one trace with one context object: `start` and
 * `end` around its synchronous part, then `asyncStart` and `asyncEnd` when it settles, with
 * `result` (or `error`, after an `error` event) set on the context object.
 *
 * - `agent` (`polestar:agent`): every agent create and dispose, {@link AgentTraceContext};
 * - `turn` (`polestar:turn`): every turn, plain or durable (one trace per durable turn),
 *   {@link TurnTraceContext};
 * - `tool` (`polestar:tool`): every `Tools.execute`, refused, unknown and invalid calls
 *   included, {@link ToolTraceContext};
 * - `store` (`polestar:store`): every promise-returning `SessionStore` call the sessions
 *   plugin makes, {@link StoreTraceContext}.
 *
 * A subscriber that throws is reported by Node as an uncaught exception (the rule of
 * `diagnostics_channel`); it does not change the traced call.
 *
 * @example
 * ```ts
 * import { tracingChannel } from 'node:diagnostics_channel';
 * import { POLESTAR_CHANNELS, type ToolTraceContext } from 'polestar-di';
 *
 * const seen: string[] = [];
 * tracingChannel<unknown, ToolTraceContext>(POLESTAR_CHANNELS.tool).subscribe({
 *   start: (c) => seen.push(`start ${c.call.name} (${c.call.callId})`),
 *   asyncEnd: (c) => seen.push(`end ${c.call.name}: ${c.result?.isError ? c.result.error?.code : 'ok'}`),
 * });
 * ```
 */
export const POLESTAR_CHANNELS = Object.freeze({
  /** Agent creation and disposal: {@link AgentTraceContext}. */
  agent: 'polestar:agent',
  /** One trace per turn (a durable turn is one trace): {@link TurnTraceContext}. */
  turn: 'polestar:turn',
  /** Every `Tools.execute`, refused, unknown and invalid calls included: {@link ToolTraceContext}. */
  tool: 'polestar:tool',
  /** Every promise-returning session store call the sessions plugin makes: {@link StoreTraceContext}. */
  store: 'polestar:store',
} as const);

/** The name of one of polestar's tracing channels (see {@link POLESTAR_CHANNELS}). */
export type PolestarChannelName = (typeof POLESTAR_CHANNELS)[keyof typeof POLESTAR_CHANNELS];

/**
 * The context object of a `polestar:agent` trace: one agent create (from
 * `agents.create(...)` or a durable session's open, until the create settles) or dispose
 * (from the start of the agent's teardown, whichever path started it, until its context
 * is disposed; also the rollback of a create that failed).
 */
export interface AgentTraceContext {
  /** Which lifecycle step. */
  readonly op: 'create' | 'dispose';
  /** The agent's id. */
  readonly agentId: string;
  /** The agent's kind, when it was made from one. */
  readonly kind?: string;
  /** Set when the trace settled: the `AgentHandle` of a create, `undefined` for a dispose. */
  readonly result?: unknown;
  /** Set when the create or dispose rejected: its error (an `AgentError`, an `AggregateError` of the disposal, …). */
  readonly error?: unknown;
}

/**
 * The context object of a `polestar:turn` trace: one `session.turn(fn)` of a session
 * opened under an agent (`durable: false`), or one durable `turn(fn)` (`durable: true`,
 * one trace: the session turn a durable turn runs inside publishes none). A turn of a
 * session opened under a context that is not an agent's publishes nothing.
 */
export interface TurnTraceContext {
  /** The id of the agent whose session runs the turn. */
  readonly agentId: string;
  /** The durable session's id (durable turns only). */
  readonly sessionId?: string;
  /** The turn's number: set on a durable turn once its started record was written (read it at `asyncEnd` or `error`). */
  readonly turn?: number;
  /** The turn's attempt number, set with {@link TurnTraceContext.turn}. */
  readonly attempt?: number;
  /** Whether it is a durable turn. */
  readonly durable: boolean;
  /** Set when the turn resolved: what `fn` returned. */
  readonly result?: unknown;
  /** Set when the turn rejected: its error (`fn`'s own, or a `SessionError`). */
  readonly error?: unknown;
}

/**
 * The context object of a `polestar:tool` trace: one `Tools.execute(call)`. Every call
 * is traced, including those refused before any policy ran (`UNKNOWN_TOOL`,
 * `INVALID_ARGS`); `Tools.execute` never rejects, so a failed call is a `result` with
 * `isError: true`, never an `error` event.
 */
export interface ToolTraceContext {
  /**
   * The call as the pipeline read it: the frozen execution (`callId`, `name`, the
   * detached `arguments`, `scope`, `parent`); its `name` and `callId` are `''` when the
   * call did not carry a string.
   */
  readonly call: ToolExecution;
  /** The id of the agent the call was made for (its scope's agent, else the calling context's nearest agent). */
  readonly agentId?: string;
  /** Set when the call settled: its result. */
  readonly result?: ToolResult;
}

/** The name of a promise-returning `SessionStore` method, as a `polestar:store` trace names its call. */
export type StoreOperation =
  | 'create'
  | 'acquire'
  | 'renew'
  | 'release'
  | 'begin'
  | 'append'
  | 'commit'
  | 'abort'
  | 'rollback'
  | 'pin'
  | 'load'
  | 'attemptStatus'
  | 'checkpoints'
  | 'list'
  | 'delete'
  | 'events'
  | 'requestHandoff'
  | 'requestCancel'
  | 'requests'
  | 'close';

/**
 * The context object of a `polestar:store` trace: one call the sessions plugin makes to
 * its `SessionStore` (each `next()` of an `events` iteration is one `events` call), bounded
 * by `storeTimeoutMs`.
 */
export interface StoreTraceContext {
  /** The store method called. */
  readonly op: StoreOperation;
  /** The session the call is about, when it names one. */
  readonly sessionId?: string;
  /** Set when the call resolved: what it resolved to. */
  readonly result?: unknown;
  /** Set when the call rejected: its error (a `SessionError`, such as the `STORE_ERROR` of a call past its bound). */
  readonly error?: unknown;
}

/** @internal A context object as polestar builds it (the public types are read-only views of it). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** @internal The cached channels (the hot path reads `hasSubscribers` on them, nothing else). */
export const agentChannel = diagnosticsChannel.tracingChannel<unknown, AgentTraceContext>(POLESTAR_CHANNELS.agent);
/** @internal */
export const turnChannel = diagnosticsChannel.tracingChannel<unknown, TurnTraceContext>(POLESTAR_CHANNELS.turn);
/** @internal */
export const toolChannel = diagnosticsChannel.tracingChannel<unknown, ToolTraceContext>(POLESTAR_CHANNELS.tool);
/** @internal */
export const storeChannel = diagnosticsChannel.tracingChannel<unknown, StoreTraceContext>(POLESTAR_CHANNELS.store);

/** The server each traced agent, turn and tool call belongs to, by context object. */
const owners = new WeakMap<object, Server>();

/**
 * @internal Traces `run` on `channel` with `context` (`tracePromise`): `start`, `run()`,
 * `end`, then `asyncStart`/`asyncEnd` with `result` or `error` set. `server` is recorded
 * for {@link serverOfTrace}. Never throws: a synchronous throw becomes the rejection.
 */
export function trace<C extends object, R>(
  channel: diagnosticsChannel.TracingChannel<unknown, C>,
  context: C,
  server: Server | undefined,
  run: () => Promise<R>,
): Promise<R> {
  if (server !== undefined) owners.set(context, server);
  try {
    return channel.tracePromise(run, context);
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * @internal The server a published agent, turn or tool context object belongs to
 * (`undefined` for a store context, or an object polestar did not publish).
 */
export function serverOfTrace(context: object): Server | undefined {
  return owners.get(context);
}

/** @internal The logger of the server a published context object belongs to (see {@link serverOfTrace}). */
export function loggerOfTrace(context: object): Logger | undefined {
  return owners.get(context)?._logger;
}
