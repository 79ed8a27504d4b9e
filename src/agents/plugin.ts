/**
 * `AgentsPlugin`: installs the `Agents` registry (and the shared `Events`, once).
 */
import type { Plugin } from '../context/plugin.js';
import type { Server } from '../context/server.js';
import { ServerError } from '../context/errors.js';
import { setProvider } from '../context/provider-hints.js';
import { installEvents } from '../events/events.js';
import { Agents } from './agents.js';
import { AgentRegistry } from './registry.js';

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
    const bus = installEvents(server);
    const registry = new AgentRegistry(bus);
    if (!server.insertGlobalView(Agents, (ctx) => new Agents(registry, ctx))) {
      throw new ServerError('AgentsPlugin: a global of token Agents already exists; add AgentsPlugin once and do not insert Agents by hand.');
    }
    server._leakProbes.add(() => registry.live());
  }
}

setProvider(Agents, 'it is installed by AgentsPlugin: call server.addPlugins(new AgentsPlugin()) before server.finish()');
