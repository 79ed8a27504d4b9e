// SPEC §9 additions (issue 13): createTestAgent, runSystem's setup hook, fakeAgent.
import {
  Agent,
  AgentError,
  Agents,
  AgentsPlugin,
  ConversationHistory,
  Events,
  Out,
  Prompts,
  Res,
  ResMut,
  Scratchpad,
  Server,
  Tools,
  ToolsPlugin,
  openSession,
  scopeOf,
  system,
  token,
  type Plugin,
} from '../../src/index.js';
import { assertNoLeaks, createTestAgent, fakeAgent, runSystem } from '../../src/testing/index.js';

const API_KEY = token<string>('API_KEY');
class Memory {
  readonly facts: string[] = [];
}
const echo = {
  name: 'echo',
  description: 'Echoes its text',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args: { text: string }) => args.text,
} as const;

describe('createTestAgent', () => {
  test('a live, published agent on a finished server with Tools, Prompts and Agents installed', async () => {
    const { agent, server } = await createTestAgent();
    expect(agent).toBeInstanceOf(Agent);
    expect(agent.id).toBe('test-agent');
    expect(agent.state).toBe('published');
    expect(server.isFinished).toBe(true);
    expect(agent.ctx.server).toBe(server);
    expect(scopeOf(agent.ctx)).toBe(agent);
    expect(agent.ctx.get(Agents).get('test-agent')).toBe(agent);
    expect(server.hasPlugin('tools') && server.hasPlugin('prompts') && server.hasPlugin('agents')).toBe(true);
    expect(agent.ctx.get(Tools).visible()).toEqual([]);
    await server.dispose();
    expect(agent.isDisposed).toBe(true);
  });

  test('id, setup, globals, locals and plugins are applied; setup runs before publication', async () => {
    const built: string[] = [];
    const plugin: Plugin = { id: 'extra', build: () => void built.push('extra') };
    let publishedDuringSetup: unknown = 'not called';
    const { agent, server } = await createTestAgent({
      id: 'billing',
      globals: [[API_KEY, 'fake-key']],
      locals: [Memory],
      plugins: [plugin],
      setup: (ctx) => {
        publishedDuringSetup = ctx.get(Agents).get('billing');
        ctx.getMut(Memory).facts.push('made before setup'); // locals are per agent: the agent's own
        ctx.get(Tools).register(echo);
        ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'You handle billing.' });
      },
    });
    expect(publishedDuringSetup).toBeUndefined();
    expect(built).toEqual(['extra']);
    expect(agent.id).toBe('billing');
    expect(agent.ctx.get(API_KEY)).toBe('fake-key');
    expect(agent.ctx.getMut(Memory).facts).toEqual(['made before setup']);
    expect(agent.ctx.parent?.getMut(Memory)).not.toBe(agent.ctx.getMut(Memory)); // the owner root has its own
    const result = await agent.ctx.get(Tools).execute({ callId: 'c1', name: 'echo', arguments: { text: 'hi' } });
    expect(result).toEqual({ callId: 'c1', content: 'hi', isError: false, output: 'hi' });
    const prompts = agent.ctx.get(Prompts);
    expect(prompts.render(await prompts.assemble())).toContain('You handle billing.');
    await server.dispose();
  });

  test('a plugin with a default\'s id replaces that default instead of clashing', async () => {
    const tools = new ToolsPlugin();
    const { agent, server } = await createTestAgent({ plugins: [tools] });
    expect(agent.ctx.get(Tools)).toBeDefined();
    await server.dispose();
  });

  test('a failing setup rejects with the AgentError and disposes the server', async () => {
    let seen: Server | undefined;
    const spy: Plugin = { id: 'spy', build: (s) => void (seen = s) };
    const err = await createTestAgent({
      plugins: [spy],
      setup: () => {
        throw new Error('no config');
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "test-agent": setup failed: no config/);
    expect(seen?.isDisposed).toBe(true);
  });

  test('dispose() and await using dispose the server; the owner context is agent.ctx.parent (for leak checks)', async () => {
    const first = await createTestAgent();
    await first.dispose();
    expect(first.server.isDisposed).toBe(true);
    let server: Server | undefined;
    {
      await using t = await createTestAgent();
      server = t.server;
      const session = openSession(t.agent);
      await session.dispose();
      await t.agent.ctx.parent?.dispose();
      assertNoLeaks(t.server);
    }
    expect(server.isDisposed).toBe(true);
  });
});

describe('runSystem({ setup })', () => {
  test('setup(ctx) runs after locals and outputs are placed, before the run, and is awaited', async () => {
    const Draft = token<string>('Draft');
    const order: string[] = [];
    const draft = system([ResMut(Memory), Out(Draft)], (memory, previous) => {
      order.push('run');
      return `${previous}+${memory.facts.join(',')}`;
    });
    const { output, ctx } = await runSystem(draft, {
      locals: [Memory],
      outputs: [[Draft, 'v1']],
      setup: async (c) => {
        order.push(`setup:${c.outputs.get(Draft)}`);
        await new Promise((r) => setImmediate(r));
        c.getMut(Memory).facts.push('seeded');
      },
    });
    expect(order).toEqual(['setup:v1', 'run']);
    expect(output).toBe('v1+seeded');
    await ctx.server.dispose();
  });

  test('setup may register tools when ToolsPlugin is installed', async () => {
    const uses = system([Res(Tools)], (tools) => tools.visible().map((t) => t.name));
    const { output, ctx } = await runSystem(uses, { plugins: [new ToolsPlugin()], setup: (c) => void c.get(Tools).register(echo) });
    expect(output).toEqual(['echo']);
    await ctx.server.dispose();
  });

  test('a failing setup rejects with its error, the system never runs, the server is disposed', async () => {
    let ran = false;
    let seen: Server | undefined;
    const spy: Plugin = { id: 'spy', build: (s) => void (seen = s) };
    const boom = new Error('seed failed');
    await expect(
      runSystem(system([], () => void (ran = true)), {
        plugins: [spy],
        setup: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(ran).toBe(false);
    expect(seen?.isDisposed).toBe(true);
  });

  test('a setup that is not a function is a TypeError (a rejection)', async () => {
    await expect(runSystem(system([], () => 1), { setup: 'x' as never })).rejects.toThrow(/setup must be a function/);
  });
});

describe('fakeAgent', () => {
  test('a genuine, published Agent with a scope of its own, in no registry', async () => {
    const agent = fakeAgent({ id: 'billing' });
    expect(agent).toBeInstanceOf(Agent);
    expect(agent.id).toBe('billing');
    expect(agent.parent).toBeUndefined();
    expect(agent.state).toBe('published');
    expect(scopeOf(agent.ctx)).toBe(agent);
    expect(agent.ctx.get(Agent)).toBe(agent);
    expect(() => agent.ctx.get(Tools)).toThrow(/resource not found: Tools/);
    await agent.ctx.dispose();
    expect(agent.state).toBe('disposed');
  });

  test('Res(Agent) hands it to a system; openSession and turns work on it', async () => {
    const whoAmI = system([Res(Agent), Res(ConversationHistory)], (a, h) => `${a.id}:${h.length}`);
    const agent = fakeAgent({ id: 'tech' });
    const session = openSession(agent);
    session.history.append({ role: 'user', content: 'help' });
    const out = await session.turn(async (turnCtx) => {
      turnCtx.getMut(Scratchpad).notes.push('x');
      return turnCtx.run(whoAmI);
    });
    expect(out).toBe('tech:1');
    expect(session.agent).toBe(agent);
    const { output, ctx } = await runSystem(system([Res(Agent)], (a) => a.id), { locals: [agent] });
    expect(output).toBe('tech');
    await ctx.server.dispose();
    await agent.ctx.dispose();
    expect(session.isDisposed).toBe(true);
  });

  test('parent makes a fake subagent under the parent\'s context', async () => {
    const lead = fakeAgent({ id: 'lead' });
    const sub = fakeAgent({ id: 'sub', parent: lead });
    expect(sub.parent).toBe(lead);
    expect(sub.ctx.parent).toBe(lead.ctx);
    expect(sub.ctx.get(Agent)).toBe(sub);
    await lead.ctx.dispose();
    expect(sub.isDisposed).toBe(true);
  });

  test('bad options are TypeErrors', () => {
    expect(() => fakeAgent(undefined as never)).toThrow(/fakeAgent\(options\): options must be an object/);
    expect(() => fakeAgent({ id: '' })).toThrow(/id must be a non-empty string/);
    expect(() => fakeAgent({ id: 'x', parent: { id: 'p' } as never })).toThrow(/parent must be an Agent/);
  });

  test('a fake is not a real agent of any server: it is refused as a parent by agents.create', async () => {
    const server = new Server();
    server.addPlugins(new AgentsPlugin());
    await server.finish();
    const heard: string[] = [];
    const app = server.createContext();
    app.get(Events).on('agent/created', (a: Agent) => heard.push(a.id));
    await expect(app.get(Agents).create({ id: 'c', parent: fakeAgent({ id: 'p' }) })).rejects.toThrow(/belongs to another server/);
    expect(heard).toEqual([]);
    await server.dispose();
  });
});

describe('types', () => {
  test('createTestAgent checks each [token, value] / [token, factory] pair; fakeAgent is an Agent', async () => {
    const COUNT = token<number>('COUNT');
    const ok = () =>
      createTestAgent({
        globals: [[COUNT, 1], new Memory()],
        locals: [[Memory, () => new Memory()]],
        setup: (ctx) => void ctx.get(COUNT).toFixed(),
      });
    // @ts-expect-error the value does not have the token's type
    const badGlobal = () => createTestAgent({ globals: [[COUNT, 'one']] });
    // @ts-expect-error the factory does not make the token's type
    const badLocal = () => createTestAgent({ locals: [[COUNT, () => 'one']] });
    const a: Agent = fakeAgent({ id: 'x' });
    // @ts-expect-error id is required
    const noId = () => fakeAgent({});
    expect([typeof ok, typeof badGlobal, typeof badLocal, typeof noId, a.id]).toEqual(['function', 'function', 'function', 'function', 'x']);
    const t = await ok();
    await t.dispose();
  });
});
