// moved: shim (remove once imports are updated)
export { Finalizers as Ownership, type Cleanup, type CleanupOptions, type Slot } from '../lifetime/finalizers.js';
export { collect, settle, settlePending, start, startWith, thenRun } from '../lifetime/settle.js';
export { collected, throwCollected } from '../lifetime/errors.js';
export { disposeValue, isDisposable, probeDisposable } from './disposable.js';
