/**
 * The one agent registry of a server: reserved ids (agents still running `setup`) and
 * published agents, keyed by id.
 */
import type { EventBus } from '../events/bus.js';
import { IdRegistry } from '../registry/id-registry.js';
import type { Agent } from './agent.js';
import type { AgentKind } from './kind.js';

/** @internal The agent registry of one server (made by `AgentsPlugin.build`). */
export class AgentRegistry extends IdRegistry<Agent> {
  /** The server's shared event bus (`agent/created`, `agent/disposed`). */
  readonly bus: EventBus;
  /** The agent kinds defined on the server (`agents.define`), by name, in definition order. */
  readonly kinds = new Map<string, AgentKind>();

  constructor(bus: EventBus) {
    super();
    this.bus = bus;
  }

  /** Publishes a composing agent that holds its id. */
  publish(agent: Agent): void {
    agent._markPublished();
  }

  /** A published agent is live: its `state` turns `disposed` when its disposal starts. */
  protected isPublished(agent: Agent): boolean {
    return agent.state === 'published';
  }

  /** `agent "researcher" (composing)`, or `agent "r-1" (kind "researcher") (composing)`. */
  protected describe(agent: Agent): string {
    return `${agent.toString()} (${agent.state})`;
  }
}
