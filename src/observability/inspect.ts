/**
 * `inspect` and `formatInspection`: a picture of the live tree (the server, its contexts,
 * agents, sessions and turns, with their locals, tools, prompt sections, listeners and
 * leases), as frozen plain data, as an indented text tree, or as a Mermaid flowchart.
 *
 * Nothing is recorded for it ahead of time: `inspect` reads the tree as it is when called,
 * so it costs nothing until it is called.
 */
import { Agent } from '../agents/agent.js';
import { ConversationHistory } from '../conversation/conversation-history.js';
import { Scratchpad } from '../conversation/session.js';
import { Server } from '../context/server.js';
import { SystemContext } from '../context/system-context.js';
import { nameOf, type Token } from '../context/token.js';
import { describeValue } from '../util/describe-value.js';
import { eventBusOf } from '../events/events.js';
import { promptRegistryOf } from '../prompts/prompts.js';
import { scopeLabel } from '../util/scope-label.js';
import { DurableSession } from '../sessions/durable/durable-session.js';
import { sessionRegistryOf } from '../sessions/plugin.js';
import { toolRegistryOf } from '../tools/tools.js';
import { formatMermaid, formatText, readTree } from './inspect-format.js';
import type { InspectAgent, InspectNode, InspectSession } from './inspect-types.js';

export type { InspectAgent, InspectLease, InspectNode, InspectNodeKind, InspectSession } from './inspect-types.js';

/** The output formats of {@link formatInspection}. */
export type InspectionFormat = 'text' | 'mermaid';

/** The durable sessions of a server, by their agent and by their session context. */
interface Durables {
  readonly byAgent: Map<Agent, DurableSession>;
  readonly bySession: Map<SystemContext, DurableSession>;
}

interface Pending {
  readonly ctx: SystemContext;
  readonly parent: number;
  readonly kids: InspectNode[];
}

/**
 * A picture of the live tree below `serverOrContext`: the server (or the context) and
 * every context below it, each with the names of its locals, and for an agent its tools,
 * prompt sections, listener count and (for a durable session's agent) its lease, for a
 * durable session its id and committed turn. The tree is frozen plain data, made when
 * called: later changes do not show in it.
 *
 * A disposed context never throws: its node is marked `disposed: true` and shows what it
 * still holds. While its disposal runs that is what is left of it; once it ended, the
 * disposal released everything, so only its identity remains: its kind and label as far
 * as they can still be told (an agent's context stays an agent; a session's or a turn's,
 * whose locals are gone, reads `context`), its depth, and no locals, children, tools,
 * sections, listeners or lease. Nothing is recorded in advance for this: contexts,
 * agents and turns cost nothing more than without `inspect`.
 *
 * @param serverOrContext - a {@link Server} (the tree starts at a `'server'` node whose
 *   children are its root contexts) or a {@link SystemContext} (the tree is its subtree).
 * @returns the frozen root node.
 * @throws TypeError when `serverOrContext` is neither a `Server` nor a `SystemContext`.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { Agents, AgentsPlugin, Server, Tools, ToolsPlugin, formatInspection, inspect, openSession } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new ToolsPlugin(), new AgentsPlugin());
 * await server.finish();
 * const app = server.createContext();
 * const { agent } = await app.get(Agents).create({ id: 'helper', setup: (ctx) => {
 *   ctx.get(Tools).register({ name: 'echo', description: 'Echoes', parameters: { type: 'object' }, execute: (args) => JSON.stringify(args) });
 * } });
 * const session = openSession(agent);
 *
 * const tree = inspect(server);
 * const helper = tree.children[0].children[0];
 * assert.equal(helper.kind, 'agent');
 * assert.deepEqual(helper.agent?.tools, ['echo']);
 * assert.equal(helper.children[0].kind, 'session');
 * assert.equal(formatInspection(tree, 'text'), [
 *   'server · globals: Events, Tools, Agents',
 *   '└─ context',
 *   '   └─ agent "helper" · tools: echo · listeners: 0 · locals: Agent',
 *   '      └─ session · locals: ConversationHistory',
 * ].join('\n'));
 *
 * await session.dispose();
 * const gone = inspect(session.ctx); // a disposed context: no throw
 * assert.equal(gone.disposed, true);
 * await server.dispose();
 * ```
 */
export function inspect(serverOrContext: Server | SystemContext): InspectNode {
  if (isA(serverOrContext, Server)) return inspectServer(serverOrContext);
  if (isA(serverOrContext, SystemContext)) return inspectTree(serverOrContext, durablesOf(serverOrContext.server));
  throw new TypeError(
    `inspect(serverOrContext): serverOrContext must be a Server or a SystemContext (such as agent.ctx or session.ctx), got ${describeValue(serverOrContext)}.`,
  );
}

/**
 * Renders a tree made by {@link inspect} (or the same data read back from JSON):
 * - `'text'`: one line per node, indented under its parent with `├─`, `└─` and `│`,
 *   the node's label and then, separated by ` · `, whether it is disposed, an agent's
 *   kind, tools, sections, listener count and lease, a durable session's committed turn,
 *   and the locals (the server's line lists its globals);
 * - `'mermaid'`: a Mermaid `flowchart TD` (in a Markdown code block of language `mermaid`,
 *   GitHub draws it as a picture), one node per tree node (the server a subroutine box, an agent a
 *   stadium, a session a rounded box, any other context a box) with the same details one
 *   per line, disposed nodes dashed. Every label is quoted and escaped with Mermaid's
 *   entity codes (`#quot;`, `#lt;`, …), so ids and token names can not break the diagram.
 *
 * Control characters in labels and names are shown escaped (`\n`), in both formats.
 *
 * @param tree - the root node.
 * @param format - `'text'` or `'mermaid'`.
 * @throws TypeError naming the field when `tree` is not such a tree, or naming `format`
 *   when it is neither `'text'` nor `'mermaid'`.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { AgentsPlugin, Server, formatInspection, inspect } from 'polestar-di';
 *
 * const server = new Server().addPlugins(new AgentsPlugin());
 * await server.finish();
 * server.createContext().child();
 * assert.equal(formatInspection(inspect(server), 'mermaid'), [
 *   'flowchart TD',
 *   '  n0[["server<br/>globals: Events, Agents"]]',
 *   '  n1["context"]',
 *   '  n0 --> n1',
 *   '  n2["context"]',
 *   '  n1 --> n2',
 * ].join('\n'));
 * await server.dispose();
 * ```
 */
export function formatInspection(tree: InspectNode, format: InspectionFormat): string {
  if (format !== 'text' && format !== 'mermaid') {
    throw new TypeError(`formatInspection(tree, format): format must be 'text' or 'mermaid', got ${describeValue(format)}.`);
  }
  const root = readTree(tree);
  return format === 'text' ? formatText(root) : formatMermaid(root);
}

// ------------------------------------------------------------------ reading the tree

function inspectServer(server: Server): InspectNode {
  const durables = durablesOf(server);
  const children: InspectNode[] = [];
  for (const root of [...server._roots]) children.push(inspectTree(root, durables));
  return Object.freeze({
    kind: 'server',
    label: 'server',
    depth: -1,
    disposed: server.isDisposed,
    locals: Object.freeze([...server._globals.keys()].map(tokenName)),
    children: Object.freeze(children),
  });
}

/** The subtree of `top`, without recursion (a chain of thousands of child contexts is fine). */
function inspectTree(top: SystemContext, durables: Durables): InspectNode {
  // Pre-order: every context after its parent; built back to front, so each node's
  // children are finished (and frozen) before the node itself.
  const order: Pending[] = [{ ctx: top, parent: -1, kids: [] }];
  for (let i = 0; i < order.length; i++) {
    for (const c of order[i].ctx._openChildren()) order.push({ ctx: c, parent: i, kids: [] });
  }
  let root: InspectNode | undefined;
  for (let i = order.length - 1; i >= 0; i--) {
    const p = order[i];
    const node = nodeOf(p.ctx, p.kids.reverse(), durables);
    if (p.parent < 0) root = node;
    else order[p.parent].kids.push(node);
  }
  return root as InspectNode;
}

function nodeOf(ctx: SystemContext, children: InspectNode[], durables: Durables): InspectNode {
  const disposed = ctx.isDisposed;
  const tokens: Token[] = [];
  for (const [t] of ctx._localValues()) tokens.push(t);
  const locals = Object.freeze(tokens.map(tokenName));
  const key = ctx._scopeKey;
  const base = { depth: ctx.depth, disposed, locals, children: Object.freeze(children) };
  if (key !== undefined && Agent._is(key) && key.ctx === ctx) {
    return Object.freeze({ kind: 'agent', label: safeLabel(key), ...base, agent: agentOf(key, disposed, durables) });
  }
  const durable = durables.bySession.get(ctx);
  if (durable !== undefined) {
    const session: InspectSession = Object.freeze({ id: durable.id, committedTurn: durable.committedTurn });
    return Object.freeze({ kind: 'session', label: `durable session "${durable.id}"`, ...base, session });
  }
  if (tokens.includes(ConversationHistory)) return Object.freeze({ kind: 'session', label: 'session', ...base });
  let label = 'context';
  if (tokens.includes(Scratchpad)) label = 'turn';
  else if (key !== undefined && key !== ctx.parent?._scopeKey) label = `scope ${safeScopeLabel(key)}`;
  return Object.freeze({ kind: 'context', label, ...base });
}

function agentOf(agent: Agent, disposed: boolean, durables: Durables): InspectAgent {
  const server = agent.ctx.server;
  const tools = toolRegistryOf(server);
  const prompts = promptRegistryOf(server);
  const toolNames: string[] = [];
  if (tools !== undefined) {
    if (disposed) for (const name of tools.layers.layer(agent).keys()) toolNames.push(name);
    else for (const t of tools.resolve(agent).list) toolNames.push(t.name);
  }
  const sections: string[] = [];
  if (prompts !== undefined) {
    const records = disposed ? [...prompts.sections.layer(agent).values()].map((e) => e.value) : [...prompts.sections.merged(agent).values()];
    // the order `assemble` puts them in: by `order`, ties in registration order
    const sorted = records.map((s, i) => ({ s, i })).sort((a, b) => a.s.order - b.s.order || a.i - b.i);
    for (const { s } of sorted) sections.push(s.name);
  }
  const listeners = eventBusOf(server)?.scopedCount(agent) ?? 0;
  const kind = agent.kind;
  const out: { -readonly [K in keyof InspectAgent]: InspectAgent[K] } = {
    id: agent.id,
    ...(kind !== undefined ? { kind } : {}),
    tools: Object.freeze(toolNames),
    sections: Object.freeze(sections),
    listeners,
  };
  const durable = durables.byAgent.get(agent);
  const lease = durable?._lease;
  const expiresAt = durable?._leaseExpiresAt;
  if (!disposed && lease !== undefined && expiresAt !== undefined) {
    out.lease = Object.freeze({ owner: lease.owner, epoch: lease.epoch, expiresAt });
  }
  return Object.freeze(out);
}

function durablesOf(server: Server): Durables {
  const byAgent = new Map<Agent, DurableSession>();
  const bySession = new Map<SystemContext, DurableSession>();
  const registry = sessionRegistryOf(server);
  if (registry !== undefined) {
    for (const d of registry.values()) {
      if (!(d instanceof DurableSession)) continue;
      // still loading: its agent or its session may not exist yet
      const agent = d.agent as Agent | undefined;
      const session = d.session as { readonly ctx: SystemContext } | undefined;
      if (agent !== undefined && !byAgent.has(agent)) byAgent.set(agent, d);
      if (session !== undefined) bySession.set(session.ctx, d);
    }
  }
  return { byAgent, bySession };
}

function tokenName(t: Token): string {
  return nameOf(t);
}

function safeLabel(agent: Agent): string {
  return `agent "${agent.id}"`;
}

function safeScopeLabel(key: object): string {
  try {
    return scopeLabel(key);
  } catch {
    return 'a key that refuses inspection';
  }
}

/** `value instanceof cls`, false (not a throw) for a proxy whose traps throw. */
function isA<T>(value: unknown, cls: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof cls;
  } catch {
    return false;
  }
}
