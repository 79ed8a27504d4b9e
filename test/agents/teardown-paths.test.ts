/**
 * Every path that ends an agent converges on one teardown (SPEC §8): the agent leaves the
 * registry, `agent/disposed` is emitted (only for a published agent) while the agent's
 * scoped registrations and listeners are all still in place, then the scope is unwound,
 * and the id is free again. Each path is checked for that order, not just for the result.
 */
import { Agent, AgentError, Agents, Events, Tools, ToolsPlugin, type AgentHandle, type Server, type SystemContext } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { agentServer, deferred, scopedLive, tick } from './helpers.js';

const ownTool = {
  name: 'own',
  description: 'a tool of the agent only',
  parameters: { type: 'object' },
  execute: () => 'ok',
};

interface World {
  server: Server;
  app: SystemContext;
  watcher: SystemContext;
  handle: AgentHandle;
  parent: AgentHandle | undefined;
  log: string[];
}

/** A published agent "subject" with a scoped tool, a scoped agent/disposed listener and a cleanup, all logging. */
async function world(asSubagent: boolean): Promise<World> {
  const server = await agentServer(new ToolsPlugin());
  const watcher = server.createContext(); // older than app, so server.dispose() ends it last
  const app = server.createContext();
  const log: string[] = [];
  const registry = watcher.get(Agents);
  const tools = watcher.get(Tools);
  let subject: Agent | undefined;
  watcher.get(Events).on('agent/disposed', (a: Agent) => {
    if (a !== subject) return;
    // the agent's key stopped being live when its disposal started: reading its tools by key
    // is refused (SPEC 10.7); that its own tool is still registered shows in what is alive
    log.push(
      `announced: state=${a.state} listed=${registry.list().includes(a)} get=${String(registry.get(a.id))} ` +
        `own-tool=${scopedLive(server, 'subject').includes('tool "own" of scope subject')} read-by-key=${refusal(() => tools.knownNames(a))}`,
    );
  });
  const parent = asSubagent ? await app.get(Agents).create({ id: 'parent' }) : undefined;
  const handle = await app.get(Agents).create({
    id: 'subject',
    parent: parent?.agent,
    setup: (ctx) => {
      subject = ctx.get(Agent);
      // registered first, so (LIFO) it runs after every registration below was undone
      ctx.onDispose(() => void log.push(`unwound: own-tool=${scopedLive(server, 'subject').includes('tool "own" of scope subject')}`));
      ctx.get(Tools).register(ownTool);
      ctx.get(Events).on('agent/disposed', (a: Agent) => void log.push(`scoped listener heard ${a.id}`));
    },
  });
  return { server, app, watcher, handle, parent, log };
}

/** The name of the error `read` throws, `returned` when it does not throw. */
function refusal(read: () => unknown): string {
  try {
    read();
    return 'returned';
  } catch (err) {
    return err instanceof Error ? err.name : String(err);
  }
}

const paths: [string, boolean, (w: World) => Promise<unknown>][] = [
  ['handle.dispose()', false, (w) => w.handle.dispose()],
  ['handle[Symbol.asyncDispose]() (await using)', false, async (w) => {
    await using h = w.handle;
    void h;
  }],
  ['agent.ctx.dispose()', false, (w) => w.handle.agent.ctx.dispose()],
  ['agent.ctx[Symbol.asyncDispose]()', false, (w) => w.handle.agent.ctx[Symbol.asyncDispose]()],
  ['the owner context\'s dispose()', false, (w) => w.app.dispose()],
  ['the parent agent\'s handle.dispose()', true, (w) => (w.parent as AgentHandle).dispose()],
  ['the parent agent\'s ctx.dispose()', true, (w) => (w.parent as AgentHandle).agent.ctx.dispose()],
  ['server.dispose()', false, (w) => w.server.dispose()],
];

describe.each(paths)('teardown through %s', (_label, asSubagent, end) => {
  test('leaves the registry, announces once while the scope is intact, then unwinds and frees the id', async () => {
    const w = await world(asSubagent);
    const { agent } = w.handle;
    await end(w);
    // the global listener was added first, then the agent's own: both hear the end before anything is unwound
    expect(w.log).toEqual([
      'announced: state=disposed listed=false get=undefined own-tool=true read-by-key=TypeError',
      'scoped listener heard subject',
      'unwound: own-tool=false',
    ]);
    expect(agent.state).toBe('disposed');
    expect(agent.ctx.isDisposed).toBe(true);
    if (!w.watcher.isDisposed) {
      // the id is free again: a new agent may take it
      const again = await w.watcher.get(Agents).create({ id: 'subject' });
      expect(w.watcher.get(Agents).get('subject')).toBe(again.agent);
      await again.dispose();
    }
    await w.server.dispose();
    expect(w.log).toHaveLength(3);
    assertNoLeaks(w.server);
  });
});

describe('agent/disposed is announced only for a published agent', () => {
  async function counting(): Promise<{ server: Server; app: SystemContext; announced: string[] }> {
    const server = await agentServer();
    const app = server.createContext();
    const announced: string[] = [];
    const watcher = server.createContext();
    watcher.get(Events).on('agent/created', (a: Agent) => void announced.push(`created ${a.id}`));
    watcher.get(Events).on('agent/disposed', (a: Agent) => void announced.push(`disposed ${a.id}`));
    return { server, app, announced };
  }

  test('a failing setup: no agent/disposed, no leftover, id free', async () => {
    const { server, app, announced } = await counting();
    let scopedHeard = false;
    await expect(
      app.get(Agents).create({
        id: 'x',
        setup: (ctx) => {
          ctx.get(Events).on('agent/disposed', () => void (scopedHeard = true));
          throw new Error('nope');
        },
      }),
    ).rejects.toBeInstanceOf(AgentError);
    expect(announced).toEqual([]);
    expect(scopedHeard).toBe(false);
    await (await app.get(Agents).create({ id: 'x' })).dispose();
    expect(announced).toEqual(['created x', 'disposed x']);
    await server.dispose();
    assertNoLeaks(server);
  });

  test('the owner disposed during setup: no agent/disposed, id free', async () => {
    const { server, app, announced } = await counting();
    const gate = deferred();
    const creating = app.get(Agents).create({ id: 'x', setup: () => gate.promise });
    await tick();
    await app.dispose();
    await expect(creating).rejects.toBeInstanceOf(AgentError);
    gate.resolve();
    await tick();
    expect(announced).toEqual([]);
    const again = await server.createContext().get(Agents).create({ id: 'x' });
    expect(again.agent.state).toBe('published');
    await server.dispose();
    expect(announced).toEqual(['created x', 'disposed x']);
    assertNoLeaks(server);
  });

  test('setup disposing its own agent.ctx: create rejects, nothing announced, id free', async () => {
    const { server, app, announced } = await counting();
    const err = await app
      .get(Agents)
      .create({ id: 'x', setup: async (ctx) => void (await ctx.dispose()) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "x" was disposed while its setup was running/);
    expect(announced).toEqual([]);
    expect(app.get(Agents).get('x')).toBeUndefined();
    await expect(app.get(Agents).create({ id: 'x' })).resolves.toBeDefined();
    await server.dispose();
    assertNoLeaks(server);
  });

  test('server.dispose() during setup: create rejects, nothing announced, nothing leaks', async () => {
    const { server, app, announced } = await counting();
    const gate = deferred();
    const creating = app.get(Agents).create({ id: 'x', setup: () => gate.promise });
    await tick();
    const disposing = server.dispose();
    await expect(creating).rejects.toBeInstanceOf(AgentError);
    gate.resolve();
    await disposing;
    expect(announced).toEqual([]);
    assertNoLeaks(server);
  });
});

describe('concurrent creates of one id', () => {
  test('the loser leaves the winner untouched: still registered, announced once, id still held', async () => {
    const { server, announced, app } = await (async () => {
      const server = await agentServer();
      const app = server.createContext();
      const announced: string[] = [];
      app.get(Events).on('agent/created', (a: Agent) => void announced.push(`created ${a.id}`));
      app.get(Events).on('agent/disposed', (a: Agent) => void announced.push(`disposed ${a.id}`));
      return { server, announced, app };
    })();
    const gate = deferred();
    const agents = app.get(Agents);
    const first = agents.create({ id: 'x', setup: () => gate.promise });
    const losers = await Promise.allSettled([agents.create({ id: 'x' }), server.createContext().get(Agents).create({ id: 'x' })]);
    expect(losers.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    gate.resolve();
    const winner = await first;
    expect(agents.get('x')).toBe(winner.agent);
    await expect(agents.create({ id: 'x' })).rejects.toThrow(/already registered/);
    expect(announced).toEqual(['created x']);
    await winner.dispose();
    expect(announced).toEqual(['created x', 'disposed x']);
    await server.dispose();
    assertNoLeaks(server);
  });

  test('a new agent taking an id its old holder is still releasing is listed after older live agents', async () => {
    const server = await agentServer();
    const owner = server.createContext();
    const agents = server.createContext().get(Agents);
    const gate = deferred();
    await owner.get(Agents).create({ id: 'a' });
    owner.child().onDispose(() => gate.promise); // a newer child: the owner disposes it before "a"
    const b = await agents.create({ id: 'b' });
    const disposing = owner.dispose(); // "a" is marked disposed at once, its teardown waits for the gate
    const a2 = await agents.create({ id: 'a' });
    expect(agents.list()).toEqual([b.agent, a2.agent]);
    gate.resolve();
    await disposing;
    expect(agents.list()).toEqual([b.agent, a2.agent]);
    await server.dispose();
    assertNoLeaks(server);
  });
});
