// PLACEHOLDER (replaced by the execution work).
/** @internal placeholder */
export type Step = unknown;
