// moved: shim (remove once imports are updated)
export * from './conformance/run.js';
