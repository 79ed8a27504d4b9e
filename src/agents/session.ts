export * from '../conversation/session.js'; // moved: shim (remove once imports are updated)
