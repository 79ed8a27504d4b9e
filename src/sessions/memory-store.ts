// moved: shim (remove once imports are updated)
export * from './store/memory.js';
