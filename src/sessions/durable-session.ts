export * from './durable/index.js'; // moved: shim (remove once imports are updated)
