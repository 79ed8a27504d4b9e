/**
 * What `agents.create()` takes: the agent's id, its setup, and for a subagent its parent
 * and the filter on what it reads from it.
 */
import type { ParentFilter } from '../context/parent-filter.js';
import type { Agent } from './agent.js';
import type { AgentKind, AgentSetup } from './kind.js';

export type { AgentSetup } from './kind.js';

/** What {@link Agents.create} takes. */
export interface CreateAgentOptions {
  /** The agent's id: a non-empty string, unique among the live agents of the server. */
  readonly id: string;
  /**
   * Registers the agent's tools, prompt sections, restrictions, guards and listeners
   * through `agentCtx` (whose scope is the agent). Awaited while the agent is
   * unpublished; if it throws, everything it registered is undone. Optional: an agent
   * without setup sees the global layer only. Not together with `kind`.
   */
  readonly setup?: AgentSetup;
  /**
   * Makes the agent from a kind defined with `agents.define` (the {@link AgentKind} or its
   * name): the kind's `setup` composes it and its `parentFilter` applies unless
   * `parentFilter` is given here; `agent.kind` is the kind's name. Not together with
   * `setup`. An unknown name is a `TypeError` naming the kinds that exist.
   */
  readonly kind?: AgentKind | string;
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
