// moved: shim (remove once imports are updated)
export * from '../util/lossless-json.js';
