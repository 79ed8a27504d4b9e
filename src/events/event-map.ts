/**
 * The typed event catalog: `EventMap` lists every built-in event with its
 * listener signature; applications add their own events by declaration merging.
 */
import type { Agent } from '../agents/agent.js';
import type { PromptAssembly, PromptContext } from '../prompts/types.js';
import type { ExecuteListener, PostExecuteListener, PreExecuteListener, ResultObserver } from '../tools/types.js';

/**
 * What every `session/*` listener receives: one frozen object describing the durable
 * session at the moment of the event.
 */
export interface SessionEventInfo {
  /** The durable session's id. */
  readonly sessionId: string;
  /** The id of the agent the session created (the event's scope is that agent). */
  readonly agentId: string;
  /**
   * The session's `committedTurn` at that moment; for `session/rolled-back`, the turn it
   * was rolled back to.
   */
  readonly turn: number;
}

/** What a `session/lease-lost` listener receives: {@link SessionEventInfo} plus the failure. */
export interface SessionLeaseLostInfo extends SessionEventInfo {
  /** The `SessionError` (code `LEASE_LOST`) the fenced write failed with. */
  readonly error: Error;
}

/**
 * Every built-in event, by name, with its listener's signature. `Events.on`, `emit` and
 * `waterfall` are typed by it: a listener of a name in the map must match its entry, and
 * `emit`/`waterfall` of that name must pass its arguments. Names that are not in the map
 * stay free, with `unknown[]` arguments.
 *
 * The names under the reserved prefixes (`tools/`, `tool/`, `prompt/`, `prompts/`,
 * `agent/`, `agents/`, `session/`, `sessions/`) are exactly these; any other name under
 * them is refused at run time. The event catalog (docs/events.md) says when each fires
 * and what its listener may return.
 *
 * Add your own events by declaration merging, outside the reserved prefixes:
 *
 * @example
 * ```ts
 * declare module 'polestar-di' {
 *   interface EventMap {
 *     'billing/refund-requested': (refund: { amount: number; customerId: string }) => void;
 *   }
 * }
 * events.on('billing/refund-requested', (refund) => audit(refund.amount));
 * await events.emit(agent, 'billing/refund-requested', { amount: 500, customerId: 'c-4711' });
 * ```
 */
export interface EventMap {
  /**
   * Waterfall, before the guards: each listener receives the decision so far (seed
   * `{ kind: 'allow' }`), the frozen execution and the calling context, and returns (or
   * resolves to) the decision to pass on: `allow`, `deny` with a reason, or `ask` (granted
   * only by `Approval`). A throwing listener or a malformed decision denies the call.
   */
  'tools/pre-execute': PreExecuteListener;
  /**
   * Waterfall, after the policy allowed the call: each listener receives the call
   * function so far (seed: the tool's body), the execution and the calling context, and
   * returns the call function to use (to wrap, replace or short-circuit it).
   */
  'tools/execute': ExecuteListener;
  /**
   * Waterfall, after the body ran: each listener receives the decision so far (seed
   * `{ kind: 'accept' }`), the execution, the result and the calling context, and returns
   * `accept` (with `content`/`output` replacing the result's) or `block` with a reason.
   */
  'tools/post-execute': PostExecuteListener;
  /**
   * Observers, once for every call (refused and invalid ones included), with the frozen
   * execution and result. Return values are ignored; a failure is contained and logged.
   */
  'tools/result': ResultObserver;
  /**
   * Waterfall inside `Prompts.assemble()`: each listener receives the assembly so far
   * and `{ scope, ctx }`, and returns (or resolves to) the assembly to pass on.
   * Protected names are restored afterwards.
   */
  'prompt/assemble': (assembly: PromptAssembly, context: PromptContext) => PromptAssembly | Promise<PromptAssembly>;
  /** Emitted about the agent right after it entered the registry; a throwing listener rolls the creation back. */
  'agent/created': (agent: Agent) => unknown;
  /** Emitted about the agent after it left the registry, before its scope is disposed. */
  'agent/disposed': (agent: Agent) => unknown;
  /** A durable session was created (checkpoint 0 committed); `turn` is 0. */
  'session/created': (info: SessionEventInfo) => unknown;
  /** A durable session was resumed from its store; `turn` is its last committed turn. */
  'session/resumed': (info: SessionEventInfo) => unknown;
  /** A turn was committed; `turn` is its number. */
  'session/turn-committed': (info: SessionEventInfo) => unknown;
  /** The session was rolled back; `turn` is the turn it was rolled back to. */
  'session/rolled-back': (info: SessionEventInfo) => unknown;
  /** A fenced write found the lease lost (`error`); the durable session is disposed at once. */
  'session/lease-lost': (info: SessionLeaseLostInfo) => unknown;
  /** The durable session was disposed (closed, disposed, or after a lost lease). */
  'session/disposed': (info: SessionEventInfo) => unknown;
}

/**
 * The listener of an event name that is not in {@link EventMap}: it receives `unknown`
 * arguments (a listener may still annotate its parameters, as with Node's emitter).
 */
export type FreeListener = {
  /** The listener (declared as a method, whose parameters TypeScript checks bivariantly, so a listener may annotate them). */
  bivarianceHack(...args: unknown[]): unknown;
}['bivarianceHack'];

/** The listener type of event `K`: its {@link EventMap} entry, or a {@link FreeListener} for a name not in the map. */
export type EventListener<K extends string> = K extends keyof EventMap ? EventMap[K] : FreeListener;

/** The arguments `emit(scope, K, ...args)` passes: the parameters of `K`'s listener, `unknown[]` for a name not in the map. */
export type EventArgs<K extends string> = K extends keyof EventMap ? Parameters<EventMap[K]> : unknown[];

/** The value a `waterfall` of `K` threads (its listener's first parameter). */
export type WaterfallValue<K extends string> = K extends keyof EventMap ? (Parameters<EventMap[K]> extends [infer V, ...unknown[]] ? V : never) : unknown;

/** The arguments after the value in a `waterfall` of `K`. */
export type WaterfallArgs<K extends string> = K extends keyof EventMap ? (Parameters<EventMap[K]> extends [unknown, ...infer R] ? R : never) : unknown[];

/**
 * `K` itself when it is not a name in {@link EventMap}, `never` otherwise: the name type of
 * the untyped `waterfall` overload, so that a built-in name must use the typed one.
 */
export type FreeName<K extends string> = K extends keyof EventMap ? never : K;
