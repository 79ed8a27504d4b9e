// Events: the shared, scope-filtered event bus, typed by EventMap.
export { Events } from './events.js';
export type { ListenOptions } from './events.js';
export type { Listener } from './bus.js';
export type { EventMap, EventListener, EventArgs, WaterfallValue, WaterfallArgs, FreeListener, FreeName } from './event-map.js';
