/**
 * The one agent registry of a server: reserved ids (agents still running `setup`) and
 * published agents, keyed by id.
 */
import type { EventBus } from '../events/bus.js';
import type { Agent } from './agent.js';

/** @internal The agent registry of one server (made by `AgentsPlugin.build`). */
export class AgentRegistry {
  /** The server's shared event bus (`agent/created`, `agent/disposed`). */
  readonly bus: EventBus;
  /** Every agent holding its id: composing (reserved) or published, creation order. */
  readonly #byId = new Map<string, Agent>();

  constructor(bus: EventBus) {
    this.bus = bus;
  }

  /** The agent holding `id` (composing or published), if any. */
  holder(id: string): Agent | undefined {
    return this.#byId.get(id);
  }

  /**
   * Reserves `agent.id` for `agent`; the caller checked it is free (or held by an agent
   * whose teardown started and has not reached `leave` yet). The entry is re-added so the
   * new agent takes its own place in creation order, not its predecessor's.
   */
  reserve(agent: Agent): void {
    this.#byId.delete(agent.id);
    this.#byId.set(agent.id, agent);
  }

  /** Publishes a composing agent that holds its id. */
  publish(agent: Agent): void {
    agent._markPublished();
  }

  /** Frees the agent's id (if it still holds it). */
  leave(agent: Agent): void {
    if (this.#byId.get(agent.id) === agent) this.#byId.delete(agent.id);
  }

  /** The published, live agent of `id`. */
  get(id: string): Agent | undefined {
    const a = this.#byId.get(id);
    return a !== undefined && a.state === 'published' ? a : undefined;
  }

  /** Published, live agents in creation order. */
  list(): Agent[] {
    const out: Agent[] = [];
    for (const a of this.#byId.values()) if (a.state === 'published') out.push(a);
    return out;
  }

  /** Number of ids held (composing or published, including agents being torn down by their owner). */
  get held(): number {
    return this.#byId.size;
  }

  /** Leak probe: every agent still holding its id. */
  live(): string[] {
    const out: string[] = [];
    for (const a of this.#byId.values()) out.push(`agent "${a.id}" (${a.state})`);
    return out;
  }
}
