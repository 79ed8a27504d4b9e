// moved: shim (remove once imports are updated)
export type { InFlight } from '../lifetime/work.js';
