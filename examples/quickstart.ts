/**
 * Quickstart: the context tree of a multi-agent backend (server → app → agent → session → turn).
 *
 * - globals shared by every agent (AppConfig, a tool catalog, the model name),
 * - a local every agent gets its own instance of (AgentMemory, `per: 'agent'`),
 * - two agents (researcher, writer) made by `agents.create`, with isolated memory,
 * - a session (which holds the conversation) and a turn, shadowing, outputs, a refused
 *   ResMut, and disposal.
 *
 * Run: `npm run build && npm run build:run && node .build/examples/quickstart.js`.
 */
import { Agent, Agents, AgentsPlugin, ConversationHistory, globalResource, localResource, openSession, ParamError, Scratchpad, Server, token, type Plugin } from 'polestar-di';

// ------------------------------------------------------------------ resources

/** Read-only configuration shared by every agent. */
@globalResource()
class AppConfig {
  constructor(readonly appName: string) {}
}

/** A ToolRegistry-like global: one catalog, shared. */
@globalResource()
class ToolCatalog {
  readonly tools = new Map<string, (q: string) => string>();
}

/** Per-agent long-term memory; closed when the agent's context is disposed. */
@localResource()
class AgentMemory implements Disposable {
  constructor(readonly facts: string[] = []) {}
  [Symbol.dispose](): void {
    log(`  AgentMemory with ${this.facts.length} fact(s) disposed`);
  }
}

const MODEL = token<string>('MODEL');
const Answer = token<string>('Answer');

const lines: string[] = [];
function log(line: string): void {
  lines.push(line);
  console.log(line);
}
function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`quickstart self-check failed: ${what}`);
}

// ------------------------------------------------------------------ server

/**
 * A tiny plugin: installs a tool catalog in build(), reports in ready(), undoes in
 * cleanup(). (polestar's own scoped tool registry is ToolsPlugin; see
 * examples/scoped-tools.ts.)
 */
const catalogPlugin: Plugin = {
  id: 'tool-catalog',
  build(server) {
    const catalog = new ToolCatalog();
    catalog.tools.set('search', (q) => `3 results for "${q}"`);
    server.insertGlobal(catalog);
  },
  ready(server) {
    log(`plugin "tool-catalog" ready with ${server.getGlobal(ToolCatalog).tools.size} tool(s)`);
  },
  cleanup() {
    log('  plugin "tool-catalog" cleaned up');
  },
};

const server = new Server();
server.insertGlobal(new AppConfig('polestar quickstart'));
server.insertGlobal(MODEL, 'claude-sonnet-4');
server.registerLocal(AgentMemory, () => new AgentMemory([]), { per: 'agent' }); // every agent (and root context) gets its own
server.addPlugins(catalogPlugin, new AgentsPlugin());
await server.finish();
log('server finished: globals AppConfig, ToolCatalog, MODEL; local AgentMemory (one per agent)');

// ------------------------------------------------------------------ two agents

const app = server.createContext(); // owns the agents it creates
const agents = app.get(Agents);
const researcher = (await agents.create({ id: 'researcher' })).agent;
const writer = (await agents.create({ id: 'writer' })).agent;

check(researcher.ctx.get(ToolCatalog) === writer.ctx.get(ToolCatalog), 'globals are shared');
check(researcher.ctx.get(AgentMemory) !== writer.ctx.get(AgentMemory), 'memory is per agent');
log(`two agents share one ToolCatalog: ${researcher.ctx.get(ToolCatalog) === writer.ctx.get(ToolCatalog)}`);

researcher.ctx.getMut(AgentMemory).facts.push('polestar is built on inversify');
log(`researcher memory: ${JSON.stringify(researcher.ctx.get(AgentMemory).facts)}`);
log(`writer memory:     ${JSON.stringify(writer.ctx.get(AgentMemory).facts)} (isolated)`);
check(writer.ctx.get(AgentMemory).facts.length === 0, 'writer memory is isolated');

// ------------------------------------------------------------------ session and turn

// The conversation belongs to the session: openSession makes a child of the agent's
// context holding a ConversationHistory.
const session = openSession(researcher);
session.history.append({ role: 'user', content: 'what is polestar?' });
await session.turn(async (turn) => {
  // session.turn made `turn` (a child of the session holding a Scratchpad) and disposes it afterwards.
  turn.onDispose(() => log('  turn cleanup ran'));

  // Res: own locals, then each ancestor, then the globals.
  const name = turn.get(Agent).id;
  const model = turn.get(MODEL);
  const search = turn.get(ToolCatalog).tools.get('search');
  turn.getMut(Scratchpad).notes.push(`turn of ${name} using ${model}`);
  const history = turn.get(ConversationHistory); // Res: read-only, from the session
  log(`turn (depth ${turn.depth}) reads its Agent (${name}) from the agent context, MODEL=${model} from the globals`);
  log(`turn reads the session's history: ${history.messages.length} message(s), last "${history.messages.at(-1)?.content}"`);
  log(`turn calls a shared tool: ${search?.('polestar')}`);

  // ResMut never walks up: the agent's memory is not this turn's to mutate.
  try {
    turn.getMut(AgentMemory);
  } catch (err) {
    check(err instanceof ParamError && err.kind === 'ResourceNotFound', 'getMut of a parent local is refused');
    log(`turn.getMut(AgentMemory) refused:\n  ${(err as Error).message}`);
  }
  // A global-marked class is never mutable through a context.
  try {
    turn.getMut(AppConfig);
  } catch (err) {
    check(err instanceof TypeError, 'getMut of a @globalResource is a TypeError');
    log(`turn.getMut(AppConfig) refused:\n  ${(err as Error).message}`);
  }

  // Outputs belong to one context and are never inherited.
  turn.outputs.insert(Answer, 'polestar is a hierarchical DI container');
  const last = turn.outputs.takeLast();
  log(`turn output taken: ${String(last?.value)}`);
  check(last?.token === Answer && turn.outputs.takeLast() === undefined, 'takeLast takes once');
  log('leaving the turn (session.turn disposes it):');
});

// ------------------------------------------------------------------ shadowing

const writerSession = openSession(writer);
writerSession.ctx.insert(MODEL, 'claude-haiku');
const writerTurn = writerSession.ctx.child();
log(`writer session shadows MODEL: its turn sees ${writerTurn.get(MODEL)}, ` +
  `the writer agent still sees ${writer.ctx.get(MODEL)}, the researcher sees ${researcher.ctx.get(MODEL)}`);
check(writerTurn.get(MODEL) === 'claude-haiku' && researcher.ctx.get(MODEL) === 'claude-sonnet-4', 'shadowing is local');

// ------------------------------------------------------------------ disposal

log(`live agents: ${agents.list().map((a) => a.id).join(', ')}; disposing the server (newest first, so the writer goes first):`);
await server.dispose();
check(session.isDisposed && writerTurn.isDisposed && researcher.state === 'disposed' && writer.state === 'disposed', 'server disposal disposes every context');
log('done: every context disposed, every plugin cleaned up');
log('next: examples/systems.ts (systems and borrows), examples/scoped-tools.ts (per-agent tools),');
log('      examples/agent-service.ts (agents behind an HTTP service: npm run service)');

if (process.argv.includes('--self-test')) {
  check(lines.some((l) => l.includes('ResMut never walks up')), 'the ResMut message was printed');
  console.log('self-test ok');
}
