// moved: shim (remove once imports are updated)
export * from './store/store-bound.js';
