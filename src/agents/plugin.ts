/**
 * `AgentsPlugin`: installs the `Agents` registry (and the shared `Events`, once).
 */
import type { Plugin } from '../context/plugin.js';
import type { Server } from '../context/server.js';
import { definePlugin } from '../registry/define-plugin.js';
import { Agents } from './agents.js';
import { AgentRegistry } from './registry.js';

const agents = definePlugin<AgentRegistry, Agents>({
  plugin: 'AgentsPlugin',
  token: Agents,
  view: (registry) => (ctx) => new Agents(registry, ctx),
  leaks: (registry) => registry.leaks(),
  installedBy: 'server.addPlugins(new AgentsPlugin())',
});

/** @internal The agent registry of `server`, `undefined` when `AgentsPlugin` was not added. */
export function agentRegistryOf(server: Server): AgentRegistry | undefined {
  return agents.of(server);
}

/**
 * Installs `Agents` as a contextual global (`ctx.get(Agents)` returns a view bound to
 * `ctx`) backed by one registry per server, and the shared `Events` (once, however many
 * of `ToolsPlugin`, `PromptsPlugin` and `AgentsPlugin` are added). Adds a leak probe
 * listing the agents still alive, used by `assertNoLeaks`.
 *
 * Its id is `agents`; it has no dependencies (agents work without tools or prompts).
 */
export class AgentsPlugin implements Plugin {
  /** The plugin id: `agents`. */
  readonly id = 'agents';

  /** Installs `Events` and `Agents`. */
  build(server: Server): void {
    agents.install(server, (bus) => new AgentRegistry(bus));
  }
}
