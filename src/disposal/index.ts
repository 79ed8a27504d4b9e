// Ownership of values: whether a value is disposable; cleanups tied to a lifetime.
export { isDisposable } from './disposable.js';
export type { Cleanup, CleanupOptions } from '../lifetime/finalizers.js';
