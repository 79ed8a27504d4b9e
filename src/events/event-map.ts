/**
 * The typed event catalog: `EventMap` maps event names to listener signatures. Each
 * built-in feature adds its own events to it by declaration merging (next to its code), and
 * applications add theirs the same way.
 */

/**
 * Every typed event, by name, with its listener's signature. `Events.on`, `emit` and
 * `waterfall` are typed by it: a listener of a name in the map must match its entry, and
 * `emit`/`waterfall` of that name must pass its arguments. Names that are not in the map
 * stay free, with `unknown[]` arguments.
 *
 * The built-in features declare their events here: the names under the reserved prefixes
 * (`tools/`, `tool/`, `prompt/`, `prompts/`, `agent/`, `agents/`, `session/`, `sessions/`)
 * are exactly theirs; any other name under them is refused at run time. The event catalog
 * (docs/events.md) says when each fires and what its listener may return.
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
export interface EventMap {} // eslint-disable-line @typescript-eslint/no-empty-object-type -- filled by declaration merging

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
