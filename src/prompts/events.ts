/**
 * The prompts feature's event: its listener type in `EventMap` (by declaration merging)
 * and the reserved `prompt/` and `prompts/` prefixes, registered when this module loads.
 */
import { reserveEventNames } from '../events/reserved.js';
import type { PromptAssembly, PromptContext } from './types.js';

declare module '../events/event-map.js' {
  interface EventMap {
    /**
     * Waterfall inside `Prompts.assemble()`: each listener receives the assembly so far
     * and `{ scope, ctx }`, and returns (or resolves to) the assembly to pass on.
     * Protected names are restored afterwards.
     */
    'prompt/assemble': (assembly: PromptAssembly, context: PromptContext) => PromptAssembly | Promise<PromptAssembly>;
  }
}

reserveEventNames(['prompt/', 'prompts/'], ['prompt/assemble']);
