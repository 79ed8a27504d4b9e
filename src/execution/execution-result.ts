// PLACEHOLDER (replaced by the execution work).
/** @internal placeholder */
export interface ExecutionResult { readonly runId: string; }
