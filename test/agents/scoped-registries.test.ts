import {
  Agent,
  AgentError,
  Agents,
  Prompts,
  PromptsPlugin,
  Tools,
  ToolsPlugin,
  type ToolDefinition,
} from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { agentServer, deferred, scopedLive } from './helpers.js';

function tool(name: string, reply = name): ToolDefinition {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => reply,
  };
}

const fullServer = () => agentServer(new ToolsPlugin(), new PromptsPlugin());

describe('agents with Tools and Prompts', () => {
  test('what setup registers through agentCtx is the agent\'s layer only, and goes away with the agent', async () => {
    const server = await fullServer();
    const app = server.createContext();
    app.get(Tools).register(tool('search'));
    app.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You are helpful.' });
    const h = await app.get(Agents).create({
      id: 'researcher',
      setup: (ctx) => {
        ctx.get(Tools).register(tool('cite'));
        ctx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'You research.' });
      },
    });
    const agent = h.agent;
    const tools = app.get(Tools);
    expect(tools.visible(agent).map((t) => t.name)).toEqual(['search', 'cite']);
    expect(tools.visible().map((t) => t.name)).toEqual(['search']);
    const prompt = await app.get(Prompts).assemble({ scope: agent });
    expect(prompt.sections.map((s) => s.text)).toEqual(['You research.']);
    expect(prompt.tools.map((t) => t.name)).toEqual(['search', 'cite']);
    // a system in a turn sees the agent's layer by omission
    const turn = agent.ctx.child().child();
    expect(turn.get(Tools).visible().map((t) => t.name)).toEqual(['search', 'cite']);
    expect((await turn.get(Tools).execute({ callId: '1', name: 'cite', arguments: {} })).content).toBe('cite');
    expect(scopedLive(server, 'researcher').sort()).toEqual(['prompt section "deployment:persona" of scope researcher', 'tool "cite" of scope researcher']);
    await h.dispose();
    expect(scopedLive(server, 'researcher')).toEqual([]);
    // the agent's key is no longer live: reading by it is refused (SPEC 10.7) instead of answering the globals
    expect(() => tools.visible(agent)).toThrow(TypeError);
    expect(() => tools.knownNames(agent)).toThrow(/knownNames\(scope\): scope researcher is neither this view's own scope nor a live scope key/);
    expect((await tools.execute({ callId: '2', name: 'cite', arguments: {}, scope: agent })).error?.code).toBe('INVALID_ARGS');
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('a failed setup undoes its tools, prompt sections, restrictions and guards (no leaks)', async () => {
    const server = await fullServer();
    const app = server.createContext();
    app.get(Tools).register(tool('search'));
    let agent: Agent | undefined;
    const err = await app
      .get(Agents)
      .create({
        id: 'half',
        setup: (ctx) => {
          agent = ctx.get(Agent);
          ctx.get(Tools).register(tool('private'));
          ctx.get(Tools).restrict({ allow: [] });
          ctx.get(Tools).guard(() => 'never');
          ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'half' });
          ctx.get(Tools).restrict({ allow: ['no-such-tool'] });
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "half": setup failed: .*unknown tool "no-such-tool"/);
    // what setup made before it failed is undone (the second restriction was refused)
    expect(scopedLive(server, 'half')).toEqual([]);
    expect(() => app.get(Tools).visible(agent)).toThrow(TypeError);
    // the agent's key is no longer live: assemble refuses it (SPEC 10.7) instead of reading the bare global layer
    await expect(app.get(Prompts).assemble({ scope: agent })).rejects.toThrow(/neither this view's own scope nor a live scope key/);
    expect((await app.get(Prompts).assemble()).sections).toEqual([]);
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('a subagent is owned by its parent but resolves tools and prompts flat: global plus its own layer', async () => {
    const server = await fullServer();
    const app = server.createContext();
    app.get(Tools).register(tool('search'));
    app.get(Tools).register(tool('shell'));
    app.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'global persona' });
    const agents = app.get(Agents);
    const parent = await agents.create({
      id: 'lead',
      setup: (ctx) => {
        ctx.get(Tools).register(tool('delegate'));
        ctx.get(Tools).restrict({ deny: ['shell'] });
        ctx.get(Tools).guard(() => 'the lead may not run tools');
        ctx.get(Prompts).section({ name: 'deployment:persona', order: 0, text: 'lead persona' });
      },
    });
    const child = await agents.create({
      id: 'helper',
      parent: parent.agent,
      setup: (ctx) => void ctx.get(Tools).register(tool('summarize')),
    });
    const tools = child.agent.ctx.get(Tools);
    // nothing from the parent's layer: not its tool, not its restriction, not its guard
    expect(tools.visible().map((t) => t.name)).toEqual(['search', 'shell', 'summarize']);
    expect((await tools.execute({ callId: 'c', name: 'delegate', arguments: {} })).error?.code).toBe('UNKNOWN_TOOL');
    const ran = await tools.execute({ callId: 'c', name: 'shell', arguments: {} });
    expect(ran.isError).toBe(false);
    expect((await parent.agent.ctx.get(Tools).execute({ callId: 'p', name: 'search', arguments: {} })).error?.code).toBe('DENIED');
    expect((await child.agent.ctx.get(Prompts).assemble()).sections.map((s) => s.text)).toEqual(['global persona']);
    expect(scopedLive(server, 'helper')).toEqual(['tool "summarize" of scope helper']);
    // ...but it is disposed with its parent
    await parent.dispose();
    expect(child.agent.isDisposed).toBe(true);
    expect(scopedLive(server, 'helper')).toEqual([]);
    expect(scopedLive(server, 'lead')).toEqual([]);
    expect(() => app.get(Tools).knownNames(child.agent)).toThrow(TypeError);
    expect(agents.list()).toEqual([]);
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('owner disposal during setup: registrations made before it are undone, later ones refused', async () => {
    const server = await fullServer();
    const app = server.createContext();
    const gate = deferred();
    let agent: Agent | undefined;
    let late: unknown;
    const creating = app.get(Agents).create({
      id: 'cut',
      setup: async (ctx) => {
        agent = ctx.get(Agent);
        ctx.get(Tools).register(tool('early'));
        await gate.promise;
        try {
          ctx.get(Tools).register(tool('late'));
        } catch (e) {
          late = e;
        }
      },
    });
    const observer = server.createContext();
    await app.dispose();
    await expect(creating).rejects.toThrow(AgentError);
    gate.resolve();
    await gate.promise;
    await new Promise((r) => setImmediate(r));
    expect((late as Error).message).toMatch(/disposed/);
    // "early" is undone with the agent, "late" was never made; the dead key is not readable
    expect(scopedLive(server, 'cut')).toEqual([]);
    expect(() => observer.get(Tools).knownNames(agent)).toThrow(TypeError);
    await observer.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('assertNoLeaks reports a live agent, and passes once it is disposed', async () => {
    const server = await fullServer();
    const app = server.createContext();
    const h = await app.get(Agents).create({ id: 'leaky', setup: (ctx) => void ctx.get(Tools).register(tool('t')) });
    expect(() => assertNoLeaks(server)).toThrow(/agent "leaky" \(published\)/);
    await h.dispose();
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });
});
