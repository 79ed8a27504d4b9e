// Durable sessions: the `DurableSession` class, the public types of its turns and
// checkpoints, and a stored event as the public API shows it.
export { DurableSession } from './durable-session.js';
export type { DurableTurnOptions, OpenSnapshot, SessionCheckpoint, SessionEventName, TurnFn, TurnSlotOptions } from './durable-session.js';
export { eventRecord } from './replay.js';
