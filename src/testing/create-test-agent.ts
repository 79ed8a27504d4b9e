/**
 * createTestAgent: a live, published agent on a finished test server.
 */
import type { Agent } from '../agents/agent.js';
import { Agents, type AgentSetup } from '../agents/agents.js';
import { AgentsPlugin } from '../agents/plugin.js';
import type { Plugin } from '../context/plugin.js';
import { Server } from '../context/server.js';
import { PromptsPlugin } from '../prompts/prompts.js';
import { ToolsPlugin } from '../tools/tools.js';
import type { CheckedFactoryPairs, CheckedPairs } from './checked-pairs.js';
import { configure, type TestGlobal, type TestLocal } from './create-test-server.js';

/**
 * Options of {@link createTestAgent}. `G` and `L` are the types of the `globals` and
 * `locals` lists, inferred at the call so that each pair is checked against its token.
 */
export interface TestAgentOptions<G extends readonly TestGlobal[] = readonly TestGlobal[], L extends readonly TestLocal[] = readonly TestLocal[]> {
  /** The agent's id; `'test-agent'` by default. */
  readonly id?: string;
  /** The agent's setup (registers its tools, prompts, listeners), awaited before it is published. */
  readonly setup?: AgentSetup;
  /**
   * Globals of the test server: `[token, value]` pairs (fakes: `[ToolLibrary, new FakeLibrary()]`),
   * or values, each stored under its own class (a bare `new FakeLibrary()` is found as
   * `FakeLibrary`, not as the `ToolLibrary` it extends).
   */
  readonly globals?: CheckedPairs<G>;
  /**
   * Locals: tokens or `[token, factory]` pairs, registered `per: 'agent'`: the agent's
   * context gets its own instance (made before `setup`, so `ResMut` works on `agent.ctx`),
   * and so does every root context and every other agent made on the server.
   */
  readonly locals?: CheckedFactoryPairs<L>;
  /**
   * Plugins added besides `ToolsPlugin`, `PromptsPlugin` and `AgentsPlugin` (which are
   * always installed; passing one of them, e.g. a configured `ToolsPlugin`, replaces the default).
   */
  readonly plugins?: readonly Plugin[];
}

/** What {@link createTestAgent} resolves to. */
export interface TestAgent extends AsyncDisposable {
  /** The live, published agent (`agent.ctx` is its scope; `ctx.get(Agents).get(agent.id) === agent`). */
  readonly agent: Agent;
  /** The finished test server the agent lives on. */
  readonly server: Server;
  /** Disposes the server, and so the agent (same as `server.dispose()`). */
  dispose(): Promise<void>;
}

/**
 * Makes a finished test server with `ToolsPlugin`, `PromptsPlugin` and `AgentsPlugin`
 * (plus `plugins`, `globals` and `locals`), then creates one agent through
 * `agents.create({ id, setup })` on a root context of its own (`agent.ctx.parent`), and
 * resolves once the agent is published. When anything fails (a plugin, a local factory,
 * the setup: an `AgentError`), the server is disposed and the promise rejects.
 *
 * Dispose the server when the test ends (`await server.dispose()`, or `await using`).
 * To check for leaks, dispose the agent's owner first:
 * `await agent.ctx.parent?.dispose(); assertNoLeaks(server)`.
 *
 * @example
 * ```ts
 * import { Tools } from 'polestar-di';
 * import { createTestAgent } from 'polestar-di/testing';
 *
 * const { agent, server } = await createTestAgent({
 *   id: 'billing',
 *   setup: (ctx) => {
 *     ctx.get(Tools).register({
 *       name: 'refund',
 *       description: 'Refunds an order',
 *       parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
 *       execute: (args: { order: string }) => `refunded ${args.order}`,
 *     });
 *   },
 * });
 * const result = await agent.ctx.get(Tools).execute({ callId: 'c1', name: 'refund', arguments: { order: 'A-17' } });
 * expect(result.content).toBe('refunded A-17');
 * await server.dispose();
 * ```
 */
export async function createTestAgent<const G extends readonly TestGlobal[] = readonly TestGlobal[], const L extends readonly TestLocal[] = readonly TestLocal[]>(
  options: TestAgentOptions<G, L> = {},
): Promise<TestAgent> {
  const id = options.id ?? 'test-agent';
  const setup = options.setup;
  const extra = options.plugins ?? [];
  const given = new Set(extra.map((p) => (p !== null && typeof p === 'object' ? p.id : undefined)));
  const defaults = [new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin()].filter((p) => !given.has(p.id));
  const server = new Server();
  try {
    configure(server, { globals: options.globals, locals: options.locals, plugins: [...defaults, ...extra] }, 'createTestAgent(options)', 'agent');
    await server.finish();
    const owner = server.createContext();
    const { agent } = await owner.get(Agents).create({ id, setup });
    return {
      agent,
      server,
      dispose: () => server.dispose(),
      [Symbol.asyncDispose]: () => server.dispose(),
    };
  } catch (err) {
    await server.dispose().catch(() => undefined);
    throw err;
  }
}
