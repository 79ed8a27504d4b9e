// Ownership: LIFO cleanups, memoized async disposal, AggregateError collection.
export { isDisposable } from './ownership.js';
export type { Cleanup } from './ownership.js';
