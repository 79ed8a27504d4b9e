/**
 * `inspect` and `formatInspection`: a real tree (plugins, two agents, global and scoped
 * tools, prompt sections, scoped listeners, a plain session with a turn in flight, a
 * durable session holding its lease) rendered exactly, as data, text and Mermaid; a
 * disposed context never throws; bad input is a TypeError naming the argument.
 */
import {
  Agents, AgentsPlugin, Events, MemorySessionStore, Prompts, PromptsPlugin, Server, Sessions, SessionsPlugin, Tools, ToolsPlugin,
  formatInspection, inspect, openSession, token, type InspectNode, type SystemContext,
} from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

interface Model {
  readonly name: string;
}
const Model = token<Model>('Model');
class Memory {
  readonly notes: string[] = [];
}

const LEASE_TTL_MS = 30_000;
const noArgs = { type: 'object' } as const;

async function desk(): Promise<{ server: Server; app: SystemContext }> {
  const server = new Server().addPlugins(
    new ToolsPlugin(),
    new PromptsPlugin(),
    new AgentsPlugin(),
    new SessionsPlugin({ store: new MemorySessionStore(), owner: 'desk-1', leaseTtlMs: LEASE_TTL_MS }),
  );
  server.insertGlobal(Model, { name: 'fake' });
  server.registerLocal(Memory, { per: 'agent' });
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({ name: 'lookup', description: 'Looks up', parameters: noArgs, execute: () => 'found' });
  app.get(Prompts).section({ name: 'persona', order: 0, text: 'You help.' });
  app.get(Events).on('tools/result', () => undefined); // unscoped: hears every agent, counted by none
  return { server, app };
}

/** Every object and array of the tree is frozen. */
function deepFrozen(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  return Object.isFrozen(v) && Object.values(v).every(deepFrozen);
}

describe('a real tree', () => {
  test('data, text and mermaid of a server with two agents, a plain session in a turn and a durable session', async () => {
    const { server, app } = await desk();
    const agents = app.get(Agents);
    const planner = (await agents.create({ id: 'planner', setup: (ctx) => {
      ctx.get(Tools).register({ name: 'plan', description: 'Plans', parameters: noArgs, execute: () => 'planned' });
      ctx.get(Prompts).section({ name: 'planner:rules', order: 1, text: 'Plan first.' });
      ctx.get(Prompts).section({ name: 'planner:intro', order: -1, text: 'Hello.' });
      ctx.get(Events).on('tools/pre-execute', (d) => d);
      ctx.get(Events).on('agent/disposed', () => undefined);
    } })).agent;
    const coder = (await agents.create({ id: 'coder', parent: planner, setup: (ctx) => {
      ctx.get(Tools).register({ name: 'write_code', description: 'Writes code', parameters: noArgs, execute: () => 'written' });
      ctx.get(Tools).restrict({ deny: ['lookup'] });
      ctx.get(Events).on('tools/result', () => undefined);
    } })).agent;
    expect(coder.parent).toBe(planner);

    const before = Date.now();
    const durable = await app.get(Sessions).create({ agentId: 'support:42', sessionId: 'ticket-42', setup: (ctx) => {
      ctx.get(Tools).register({ name: 'refund', description: 'Refunds', parameters: noArgs, execute: () => 'refunded' });
    } });
    await durable.turn((_turn, session) => void session.history.append({ role: 'user', content: 'hi' }));

    const chat = openSession(planner);
    const tree = await chat.turn(() => inspect(server));
    const after = Date.now();

    expect(deepFrozen(tree)).toBe(true);
    // the durable session's agent holds the lease; it expires a TTL after it was taken (or renewed)
    const supportNode = tree.children[0].children[1];
    const lease = supportNode.agent?.lease;
    expect(lease).toEqual({ owner: 'desk-1', epoch: 1, expiresAt: expect.any(Number) });
    const expiresAt = (lease as { expiresAt: number }).expiresAt;
    expect(expiresAt).toBeGreaterThanOrEqual(before + LEASE_TTL_MS - 1);
    expect(expiresAt).toBeLessThanOrEqual(after + LEASE_TTL_MS + 1);
    const until = new Date(expiresAt).toISOString();

    const agentOf = (n: InspectNode) => n.agent;
    expect(tree.kind).toBe('server');
    expect(tree.depth).toBe(-1);
    const plannerNode = tree.children[0].children[0];
    expect(agentOf(plannerNode)).toEqual({ id: 'planner', tools: ['lookup', 'plan'], sections: ['planner:intro', 'persona', 'planner:rules'], listeners: 2 });
    expect(agentOf(plannerNode.children[0])).toEqual({ id: 'coder', tools: ['write_code'], sections: ['persona'], listeners: 1 });
    expect(plannerNode.children[1]).toMatchObject({ kind: 'session', label: 'session', depth: 2, locals: ['ConversationHistory'] });
    expect(plannerNode.children[1].session).toBeUndefined();
    expect(plannerNode.children[1].children[0]).toMatchObject({ kind: 'context', label: 'turn', depth: 3, locals: ['Scratchpad'], children: [] });
    expect(supportNode.children[0]).toMatchObject({ kind: 'session', label: 'durable session "ticket-42"', session: { id: 'ticket-42', committedTurn: 1 } });

    expect(formatInspection(tree, 'text')).toBe([
      'server · globals: Model, Events, Tools, Prompts, Agents, Sessions',
      '└─ context · locals: Memory',
      '   ├─ agent "planner" · tools: lookup, plan · sections: planner:intro, persona, planner:rules · listeners: 2 · locals: Agent, Memory',
      '   │  ├─ agent "coder" · tools: write_code · sections: persona · listeners: 1 · locals: Agent, Memory',
      '   │  └─ session · locals: ConversationHistory',
      '   │     └─ turn · locals: Scratchpad',
      `   └─ agent "support:42" · tools: lookup, refund · sections: persona · listeners: 0 · lease: desk-1 epoch 1 until ${until} · locals: Agent, Memory`,
      '      └─ durable session "ticket-42" · committed turn: 1 · locals: ConversationHistory',
    ].join('\n'));

    expect(formatInspection(tree, 'mermaid')).toBe([
      'flowchart TD',
      '  n0[["server<br/>globals: Model, Events, Tools, Prompts, Agents, Sessions"]]',
      '  n1["context<br/>locals: Memory"]',
      '  n0 --> n1',
      '  n2(["agent #quot;planner#quot;<br/>tools: lookup, plan<br/>sections: planner:intro, persona, planner:rules<br/>listeners: 2<br/>locals: Agent, Memory"])',
      '  n1 --> n2',
      '  n3(["agent #quot;coder#quot;<br/>tools: write_code<br/>sections: persona<br/>listeners: 1<br/>locals: Agent, Memory"])',
      '  n2 --> n3',
      '  n4("session<br/>locals: ConversationHistory")',
      '  n2 --> n4',
      '  n5["turn<br/>locals: Scratchpad"]',
      '  n4 --> n5',
      `  n6(["agent #quot;support:42#quot;<br/>tools: lookup, refund<br/>sections: persona<br/>listeners: 0<br/>lease: desk-1 epoch 1 until ${until}<br/>locals: Agent, Memory"])`,
      '  n1 --> n6',
      '  n7("durable session #quot;ticket-42#quot;<br/>committed turn: 1<br/>locals: ConversationHistory")',
      '  n6 --> n7',
    ].join('\n'));

    // the same data read back from JSON renders the same
    const copy = JSON.parse(JSON.stringify(tree)) as InspectNode;
    expect(formatInspection(copy, 'text')).toBe(formatInspection(tree, 'text'));
    expect(formatInspection(copy, 'mermaid')).toBe(formatInspection(tree, 'mermaid'));

    // a picture, not a view: later changes do not show in it, and inspecting left nothing behind
    await chat.dispose();
    await durable.close();
    expect(tree.children[0].children).toHaveLength(2);
    expect(inspect(server).children[0].children.map((n) => n.label)).toEqual(['agent "planner"']);
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('a context gives its own subtree, at its own depth', async () => {
    const { server, app } = await desk();
    const { agent } = await app.get(Agents).create({ id: 'solo' });
    const session = openSession(agent);
    const sub = inspect(agent.ctx);
    expect(sub).toMatchObject({ kind: 'agent', label: 'agent "solo"', depth: 1, disposed: false });
    expect(formatInspection(sub, 'text')).toBe([
      'agent "solo" · tools: lookup · sections: persona · listeners: 0 · locals: Agent, Memory',
      '└─ session · locals: ConversationHistory',
    ].join('\n'));
    expect(inspect(session.ctx).children).toEqual([]);
    await server.dispose();
  });

  test("an agent made from a kind shows it: agent.kind in the data, 'kind: …' in text and mermaid", async () => {
    const { server, app } = await desk();
    const agents = app.get(Agents);
    agents.define('researcher', { setup: (ctx) => void ctx.get(Tools).register({ name: 'search', description: 'Searches', parameters: noArgs, execute: () => 'found' }) });
    const { agent } = await agents.create({ id: 'r-1', kind: 'researcher' });
    await agents.create({ id: 'plain', parent: agent });
    const node = inspect(agent.ctx);
    expect(node.label).toBe('agent "r-1"');
    expect(node.agent).toEqual({ id: 'r-1', kind: 'researcher', tools: ['lookup', 'search'], sections: ['persona'], listeners: 0 });
    expect(node.children[0].agent !== undefined && 'kind' in node.children[0].agent).toBe(false);
    expect(formatInspection(node, 'text')).toBe([
      'agent "r-1" · kind: researcher · tools: lookup, search · sections: persona · listeners: 0 · locals: Agent, Memory',
      '└─ agent "plain" · tools: lookup · sections: persona · listeners: 0 · locals: Agent, Memory',
    ].join('\n'));
    expect(formatInspection(node, 'mermaid')).toContain('kind: researcher');
    // a disposed agent keeps its kind
    await agent.ctx.dispose();
    expect(inspect(agent.ctx).agent?.kind).toBe('researcher');
    await server.dispose();
  });

  test('a registration scope and plain children read as contexts', async () => {
    const { server, app } = await desk();
    const { createScope } = await import('../../src/index.js');
    const scope = createScope(app, { id: 'batch-7' });
    scope.ctx.child().child();
    expect(formatInspection(inspect(app), 'text')).toBe([
      'context · locals: Memory',
      '└─ scope batch-7',
      '   └─ context',
      '      └─ context',
    ].join('\n'));
    await server.dispose();
  });
});

describe('disposed contexts and servers never throw', () => {
  test('a disposed agent keeps its identity and holds nothing', async () => {
    const { server, app } = await desk();
    const handle = await app.get(Agents).create({ id: 'gone', setup: (ctx) => {
      ctx.get(Tools).register({ name: 'own', description: 'Own', parameters: noArgs, execute: () => 'x' });
      ctx.get(Events).on('tools/result', () => undefined);
    } });
    const session = openSession(handle.agent);
    await handle.dispose();
    const node = inspect(handle.agent.ctx);
    expect(node).toEqual({
      kind: 'agent', label: 'agent "gone"', depth: 1, disposed: true, locals: [], children: [],
      agent: { id: 'gone', tools: [], sections: [], listeners: 0 },
    });
    // a session's context, whose locals are gone, reads as a context
    expect(inspect(session.ctx)).toEqual({ kind: 'context', label: 'context', depth: 2, disposed: true, locals: [], children: [] });
    expect(formatInspection(node, 'text')).toBe('agent "gone" · disposed · listeners: 0');
    expect(formatInspection(node, 'mermaid')).toBe([
      'flowchart TD',
      '  n0(["agent #quot;gone#quot;<br/>listeners: 0<br/>(disposed)"])',
      '  classDef disposed stroke-dasharray: 5 5',
      '  class n0 disposed',
    ].join('\n'));
    await server.dispose();
  });

  test('while its disposal runs, a context shows what it still holds, marked disposed', async () => {
    const { server, app } = await desk();
    const { agent } = await app.get(Agents).create({ id: 'closing', setup: (ctx) => {
      ctx.get(Tools).register({ name: 'own', description: 'Own', parameters: noArgs, execute: () => 'x' });
    } });
    openSession(agent);
    let seen: InspectNode | undefined;
    // registered after setup: runs first among the agent's cleanups, before its registrations are undone
    agent.ctx.onDispose(() => void (seen = inspect(server)));
    await agent.ctx.dispose();
    const node = (seen as InspectNode).children[0].children[0];
    expect(node).toMatchObject({ kind: 'agent', disposed: true, locals: ['Agent', 'Memory'], children: [] });
    expect(node.agent?.tools).toEqual(['own']); // only its own scope: its turns see nothing any more
    await server.dispose();
  });

  test('a disposed durable session: no lease, and its session reads as a context', async () => {
    const { server, app } = await desk();
    const durable = await app.get(Sessions).create({ agentId: 'support:7', sessionId: 'ticket-7' });
    expect(inspect(durable.agent.ctx).agent?.lease?.epoch).toBe(1);
    await durable.close();
    expect(inspect(durable.agent.ctx)).toMatchObject({ kind: 'agent', disposed: true, agent: { id: 'support:7', tools: [], sections: [], listeners: 0 } });
    expect(inspect(durable.agent.ctx).agent?.lease).toBeUndefined();
    expect(inspect(durable.session.ctx)).toMatchObject({ kind: 'context', disposed: true });
    await server.dispose();
  });

  test('a disposed server: its globals, no root contexts', async () => {
    const { server } = await desk();
    await server.dispose();
    expect(formatInspection(inspect(server), 'text')).toBe('server · disposed · globals: Model, Events, Tools, Prompts, Agents, Sessions');
  });
});

describe('formats', () => {
  test('labels and names can not break the text or the diagram', async () => {
    const server = new Server().addPlugins(new AgentsPlugin());
    const Odd = token<string>('a "quoted" <b>bold</b> #1 & `tick`\nnext');
    await server.finish();
    const app = server.createContext();
    app.insert(Odd, 'x');
    await app.get(Agents).create({ id: 'he said "hi" <script>#x;' });
    const tree = inspect(app);
    expect(formatInspection(tree, 'text')).toBe([
      'context · locals: a "quoted" <b>bold</b> #1 & `tick`\\nnext',
      '└─ agent "he said "hi" <script>#x;" · listeners: 0 · locals: Agent',
    ].join('\n'));
    expect(formatInspection(tree, 'mermaid')).toBe([
      'flowchart TD',
      '  n0["context<br/>locals: a #quot;quoted#quot; #lt;b#gt;bold#lt;/b#gt; #35;1 #amp; #96;tick#96;\\nnext"]',
      '  n1(["agent #quot;he said #quot;hi#quot; #lt;script#gt;#35;x;#quot;<br/>listeners: 0<br/>locals: Agent"])',
      '  n0 --> n1',
    ].join('\n'));
    await server.dispose();
  });

  test('a chain of thousands of contexts inspects and renders without recursion', async () => {
    const server = new Server();
    await server.finish();
    let c = server.createContext();
    for (let i = 0; i < 20_000; i++) c = c.child();
    const tree = inspect(server);
    let n: InspectNode = tree;
    for (let i = 0; i <= 20_000; i++) n = n.children[0];
    expect(n).toMatchObject({ depth: 20_000, children: [] });
    expect(formatInspection(tree, 'mermaid').split('\n')).toHaveLength(1 + 20_002 + 20_001);
    // the text tree indents every level, so its size grows with the square of the depth: a shorter chain
    const top = server.createContext();
    c = top;
    for (let i = 0; i < 3_000; i++) c = c.child();
    const lines = formatInspection(inspect(top), 'text').split('\n');
    expect(lines).toHaveLength(3_001);
    expect(lines[3_000]).toBe(`${'   '.repeat(2_999)}└─ context`);
    await server.dispose();
  });
});

describe('bad input', () => {
  test('inspect of anything but a server or a context is a TypeError naming the argument', () => {
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } });
    for (const v of [undefined, null, {}, 'server', hostile, { server: {} }]) {
      expect(() => inspect(v as never)).toThrow(TypeError);
      expect(() => inspect(v as never)).toThrow(/^inspect\(serverOrContext\): serverOrContext must be a Server or a SystemContext/);
    }
  });

  test('formatInspection names the format, and the first bad field of the tree', async () => {
    const server = new Server();
    await server.finish();
    server.createContext();
    const tree = inspect(server);
    expect(() => formatInspection(tree, 'html' as never)).toThrow(/^formatInspection\(tree, format\): format must be 'text' or 'mermaid', got/);
    expect(() => formatInspection(undefined as never, 'text')).toThrow(/^formatInspection\(tree\): tree must be a node object/);
    expect(() => formatInspection({ ...tree, kind: 'turn' } as never, 'text')).toThrow(/tree\.kind must be 'server', 'context', 'agent' or 'session'/);
    const badChild = { ...tree, children: [{ ...tree.children[0], label: 42 }] };
    expect(() => formatInspection(badChild as never, 'mermaid')).toThrow(/^formatInspection\(tree\): tree\.children\[0\]\.label must be a string, got the number 42; pass the tree inspect\(\) returned\.$/);
    const badAgent = { ...tree, children: [{ ...tree.children[0], kind: 'agent', agent: { id: 'a', tools: ['t', 3], sections: [], listeners: 0 } }] };
    expect(() => formatInspection(badAgent as never, 'text')).toThrow(/tree\.children\[0\]\.agent\.tools\[1\] must be a string, got the number 3;/);
    const loop: { children: unknown[] } & Record<string, unknown> = { kind: 'context', label: 'x', depth: 0, disposed: false, locals: [], children: [] };
    loop.children.push(loop);
    expect(() => formatInspection(loop as never, 'text')).toThrow(/tree\.children\[0\] is a node met before/);
    const throwing = { ...tree, get label(): string { throw new Error('boom'); } };
    expect(() => formatInspection(throwing as never, 'text')).toThrow(/^formatInspection\(tree\): reading tree threw \(boom\)/);
    await server.dispose();
  });
});
