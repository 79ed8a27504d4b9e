/**
 * The tools feature's events: their listener types in `EventMap` (by declaration merging)
 * and the reserved `tools/` and `tool/` prefixes, registered when this module loads.
 */
import { reserveEventNames } from '../events/reserved.js';
import type { ExecuteListener, PostExecuteListener, PreExecuteListener, ResultObserver } from './types.js';

declare module '../events/event-map.js' {
  interface EventMap {
    /**
     * Waterfall, before the guards: each listener receives the decision so far (seed
     * `{ kind: 'allow' }`), the frozen execution and the calling context, and returns (or
     * resolves to) the decision to pass on: `allow`, `deny` with a reason, or `ask` (granted
     * only by `Approval`). A throwing listener or a malformed decision denies the call.
     */
    'tools/pre-execute': PreExecuteListener;
    /**
     * Waterfall, after the policy allowed the call: each listener receives the call
     * function so far (seed: the tool's body), the execution and the calling context, and
     * returns the call function to use (to wrap, replace or short-circuit it).
     */
    'tools/execute': ExecuteListener;
    /**
     * Waterfall, after the body ran: each listener receives the decision so far (seed
     * `{ kind: 'accept' }`), the execution, the result and the calling context, and returns
     * `accept` (with `content`/`output` replacing the result's) or `block` with a reason.
     */
    'tools/post-execute': PostExecuteListener;
    /**
     * Observers, once for every call (refused and invalid ones included), with the frozen
     * execution and result. Return values are ignored; a failure is contained and logged.
     */
    'tools/result': ResultObserver;
  }
}

reserveEventNames(['tools/', 'tool/'], ['tools/pre-execute', 'tools/execute', 'tools/post-execute', 'tools/result']);
