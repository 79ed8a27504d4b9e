/**
 * What `agents.create()` takes: the agent's id, its setup, and for a subagent its parent
 * and the filter on what it reads from it.
 */
import type { ParentFilter } from '../context/parent-filter.js';
import type { SystemContext } from '../context/system-context.js';
import type { Agent } from './agent.js';

/** Composes an agent's world through its scoped context; awaited before publication. */
export type AgentSetup = (agentCtx: SystemContext) => void | Promise<void>;

/** What {@link Agents.create} takes. */
export interface CreateAgentOptions {
  /** The agent's id: a non-empty string, unique among the live agents of the server. */
  readonly id: string;
  /**
   * Registers the agent's tools, prompt sections, restrictions, guards and listeners
   * through `agentCtx` (whose scope is the agent). Awaited while the agent is
   * unpublished; if it throws, everything it registered is undone. Optional: an agent
   * without setup sees the global layer only.
   */
  readonly setup?: AgentSetup;
  /**
   * Makes a subagent: owned by `parent` (disposed with it, its context is a child of
   * `parent.ctx`) but with a flat view: global plus its own layer, nothing from the
   * parent's layer.
   */
  readonly parent?: Agent;
  /**
   * Gates every `Res` walk from the agent's context (and its sessions and turns) to its
   * owner and above: `ParentFilter.allowOnly([Llm])` lets a subagent read its
   * parent's `Llm` and nothing else the parent holds. The agent's own locals (its
   * `per: 'agent'` ones included) and the globals are always reachable. Default: no filter.
   */
  readonly parentFilter?: ParentFilter;
}
