/**
 * The agents feature's events: their listener types in `EventMap` (by declaration merging)
 * and the reserved `agent/` and `agents/` prefixes, registered when this module loads.
 */
import { reserveEventNames } from '../events/reserved.js';
import type { Agent } from './agent.js';

declare module '../events/event-map.js' {
  interface EventMap {
    /** Emitted about the agent right after it entered the registry; a throwing listener rolls the creation back. */
    'agent/created': (agent: Agent) => unknown;
    /** Emitted about the agent after it left the registry, before its scope is disposed. */
    'agent/disposed': (agent: Agent) => unknown;
  }
}

reserveEventNames(['agent/', 'agents/'], ['agent/created', 'agent/disposed']);
