// Events: the shared, scope-filtered event bus.
export { Events, installEvents } from './events.js';
export type { ListenOptions } from './events.js';
export type { Listener } from './bus.js';
