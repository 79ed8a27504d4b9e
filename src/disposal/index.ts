// Ownership: LIFO cleanups, memoized async disposal, AggregateError collection.
export { isDisposable } from './ownership.js';
export type { Cleanup, CleanupOptions } from './ownership.js';
