/**
 * Agent kinds: `agents.define(name, { setup, parentFilter? })` and `agents.create({ kind })`.
 * Kinds are per server (every view sees them), names are checked and defined once, a kind
 * replaces `setup` (never both), an unknown kind names the kinds that exist, the kind's
 * parent filter applies unless the create gives one, and the kind's name is on the agent,
 * in the messages that name it and in its events.
 */
import { Agent, AgentError, Agents, AgentsPlugin, Events, Server, ParentFilter, Tools, ToolsPlugin, token } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { agentServer } from './helpers.js';

const Llm = token<string>('Llm');

describe('agents.define', () => {
  test('returns a frozen kind that every view of the server sees; agents made from it carry its name', async () => {
    const server = await agentServer(new ToolsPlugin());
    const app = server.createContext();
    const setupRan: string[] = [];
    const researcher = app.get(Agents).define('researcher', {
      setup: (ctx) => {
        setupRan.push(ctx.get(Agent).id);
        ctx.get(Tools).register({ name: 'search', description: 'Searches', parameters: { type: 'object' }, execute: () => 'found' });
      },
    });
    expect(researcher.name).toBe('researcher');
    expect(Object.isFrozen(researcher)).toBe(true);
    expect(() => {
      (researcher as { name: string }).name = 'other';
    }).toThrow(TypeError);

    // by object through the defining view, by name through a view of another root context
    const byObject = await app.get(Agents).create({ id: 'r-1', kind: researcher });
    const elsewhere = server.createContext();
    const byName = await elsewhere.get(Agents).create({ id: 'r-2', kind: 'researcher' });
    expect(setupRan).toEqual(['r-1', 'r-2']);
    expect(byObject.agent.kind).toBe('researcher');
    expect(byName.agent.kind).toBe('researcher');
    expect(byName.agent.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['search']);
    expect(String(byName.agent)).toBe('agent "r-2" (kind "researcher")');

    // an agent made with its own setup (or none) has no kind
    const plain = await app.get(Agents).create({ id: 'plain', setup: () => undefined });
    expect(plain.agent.kind).toBeUndefined();
    expect(String(plain.agent)).toBe('agent "plain"');

    // a name is defined once per server, whichever view asks
    expect(() => elsewhere.get(Agents).define('researcher', { setup: () => undefined })).toThrow(
      /Agents\.define\("researcher", options\): the agent kind "researcher" is already defined on this server/,
    );
    await server.dispose();
    assertNoLeaks(server);
  });

  test('kinds are per server: another server neither sees the name nor accepts the object', async () => {
    const a = await agentServer();
    const b = await agentServer();
    const kind = a.createContext().get(Agents).define('writer', { setup: () => undefined });
    const agentsB = b.createContext().get(Agents);
    await expect(agentsB.create({ id: 'w', kind: 'writer' })).rejects.toThrow(/unknown agent kind "writer"; no kind is defined on this server/);
    await expect(agentsB.create({ id: 'w', kind })).rejects.toThrow(/kind "writer" was defined on another server/);
    // the same name is free on the other server
    expect(agentsB.define('writer', { setup: () => undefined }).name).toBe('writer');
    expect(agentsB.get('w')).toBeUndefined();
    await a.dispose();
    await b.dispose();
  });

  test('a bad name, options, setup or parentFilter is a TypeError naming the option, and defines nothing', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const setup = (): void => undefined;
    const define = (name: unknown, options: unknown) => () => agents.define(name as string, options as never);
    expect(define(42, { setup })).toThrow(/Agents\.define\(kind, options\): kind must be a non-empty string of at most 1024 characters without NUL characters, got the number 42/);
    expect(define(undefined, { setup })).toThrow(/kind must be a non-empty string/);
    expect(define('', { setup })).toThrow(/kind must be a non-empty string .*got an empty string/);
    expect(define('x'.repeat(1025), { setup })).toThrow(/kind must be .* at most 1024 characters.*got a string of 1025 characters/);
    expect(define('a\0b', { setup })).toThrow(/kind must be .*without NUL characters, got "a\\u0000b", which contains a NUL character/);
    expect(define('k', undefined)).toThrow(/Agents\.define\("k", options\): options must be an object \{ setup, parentFilter\? \}/);
    expect(define('k', {})).toThrow(/Agents\.define\("k", \{ setup \}\): setup must be a function .*got undefined/);
    expect(define('k', { setup: 'run' })).toThrow(/setup must be a function/);
    expect(define('k', { setup, parentFilter: [Llm] })).toThrow(/Agents\.define\("k", \{ parentFilter \}\): parentFilter must be made by ParentFilter\.allowOnly/);
    const hostile = {
      get setup(): never {
        throw new Error('no peeking');
      },
    };
    expect(define('k', hostile)).toThrow(/Agents\.define\("k", options\): reading options\.setup threw: no peeking/);
    for (const bad of [42, '', 'a\0b']) expect(define(bad, { setup })).toThrow(TypeError);
    // nothing was defined by the refused calls: 'k' is still free, and the longest name is fine
    expect(agents.define('k', { setup }).name).toBe('k');
    expect(agents.define('x'.repeat(1024), { setup }).name).toHaveLength(1024);
    await server.dispose();
  });
});

describe('agents.create({ kind })', () => {
  test('kind and setup together, an unknown kind, or a kind that is neither a kind nor a string is a TypeError; nothing is left behind', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    agents.define('researcher', { setup: () => undefined });
    agents.define('writer', { setup: () => undefined });
    await expect(agents.create({ id: 'x', kind: 'researcher', setup: () => undefined })).rejects.toThrow(
      /Agents\.create\(\{ id: "x", kind, setup \}\): give either kind or setup, not both/,
    );
    const unknown = agents.create({ id: 'x', kind: 'reseacher' });
    await expect(unknown).rejects.toThrow(TypeError);
    await expect(unknown).rejects.toThrow(/Agents\.create\(\{ id: "x", kind \}\): unknown agent kind "reseacher"; the kinds defined on this server are "researcher", "writer"/);
    await expect(agents.create({ id: 'x', kind: 7 as never })).rejects.toThrow(/kind must be an AgentKind \(made by agents\.define\) or the name of one, got the number 7/);
    await expect(agents.create({ id: 'x', kind: { name: 'researcher', setup: () => undefined } as never })).rejects.toThrow(/kind must be an AgentKind/);
    const hostile = {
      id: 'x',
      get kind(): never {
        throw new Error('no peeking');
      },
    };
    await expect(agents.create(hostile as never)).rejects.toThrow(/reading options\.kind threw: no peeking/);
    expect(agents.get('x')).toBeUndefined();
    // the id is free: every refusal happened before anything was reserved
    expect((await agents.create({ id: 'x', kind: 'writer' })).agent.kind).toBe('writer');
    await server.dispose();
    assertNoLeaks(server);
  });

  test("the kind's parentFilter applies unless the create gives one", async () => {
    const server = new Server().addPlugins(new AgentsPlugin());
    server.insertGlobal(Llm, 'global-llm');
    await server.finish();
    const agents = server.createContext().get(Agents);
    const lead = (await agents.create({ id: 'lead' })).agent;
    lead.ctx.insert(Llm, 'lead-llm');
    agents.define('isolated', { setup: () => undefined, parentFilter: ParentFilter.allowAllExcept([Llm]) });
    const filtered = await agents.create({ id: 'sub-1', parent: lead, kind: 'isolated' });
    expect(filtered.agent.ctx.get(Llm)).toBe('global-llm'); // blocked: falls through to the global
    const overridden = await agents.create({ id: 'sub-2', parent: lead, kind: 'isolated', parentFilter: ParentFilter.allowOnly([Llm]) });
    expect(overridden.agent.ctx.get(Llm)).toBe('lead-llm');
    agents.define('open', { setup: () => undefined });
    expect((await agents.create({ id: 'sub-3', parent: lead, kind: 'open' })).agent.ctx.get(Llm)).toBe('lead-llm');
    await server.dispose();
  });

  test("the kind's name is in the messages that name the agent and on the agent its events carry", async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const broken = new Error('no model configured');
    agents.define('flaky', { setup: () => Promise.reject(broken) });
    agents.define('steady', { setup: () => undefined });
    const failed = agents.create({ id: 'f-1', kind: 'flaky' });
    await expect(failed).rejects.toThrow(AgentError);
    await expect(failed).rejects.toThrow('agent "f-1" (kind "flaky"): setup failed: no model configured');
    await expect(failed).rejects.toMatchObject({ agentId: 'f-1', cause: broken });

    const heard: Array<[string, string, string | undefined]> = [];
    app.get(Events).on('agent/created', (agent) => void heard.push(['created', agent.id, agent.kind]));
    app.get(Events).on('agent/disposed', (agent) => void heard.push(['disposed', agent.id, agent.kind]));
    const handle = await agents.create({ id: 's-1', kind: 'steady' });
    // a disposed agent's context names the kind too
    await handle.dispose();
    expect(() => handle.agent.ctx.get(Llm)).toThrow(/agent "s-1" \(kind "steady"\)/);
    expect(heard).toEqual([
      ['created', 's-1', 'steady'],
      ['disposed', 's-1', 'steady'],
    ]);
    await server.dispose();
  });
});
