// SPEC §10.7: a subagent created during its parent's setup is composed with it. Its
// create resolves when its own setup finished, still composing and unpublished; after the
// parent is published each such subagent is published in creation order (registry, then
// agent/created), all before the parent's create resolves; a failure of the parent's setup
// or of any agent/created listener of the group rolls the whole group back.
import { Agent, AgentError, AgentHandle, Agents, Events, inspect, type SystemContext } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { agentServer, deferred, tick } from './helpers.js';

async function world() {
  const server = await agentServer();
  const app = server.createContext();
  const agents = app.get(Agents);
  const log: string[] = [];
  const events = app.get(Events);
  // What the registry says at the moment each agent is announced.
  events.on('agent/created', (a: Agent) => {
    const parent = a.parent === undefined ? '' : ` parent:${agents.get(a.parent.id) === a.parent ? 'published' : 'UNPUBLISHED'}`;
    log.push(`created ${a.id} registered:${agents.get(a.id) === a}${parent}`);
  });
  events.on('agent/disposed', (a: Agent) => log.push(`disposed ${a.id}`));
  return { server, app, agents, log };
}

describe('subagents created during their parent\'s setup are composed with it', () => {
  test('they resolve composing and unpublished, then are published after the parent, in creation order, before the parent resolves', async () => {
    const { server, app, agents, log } = await world();
    const seen: string[] = [];
    let billing: AgentHandle | undefined;
    let tech: AgentHandle | undefined;
    const triage = await agents.create({
      id: 'triage',
      setup: async (ctx) => {
        const self = ctx.get(Agent);
        billing = await agents.create({ id: 'billing', parent: self });
        seen.push(`billing ${billing.agent.state} get:${String(agents.get('billing'))}`);
        tech = await agents.create({ id: 'tech', parent: self, setup: async () => tick() });
        seen.push(`tech ${tech.agent.state} get:${String(agents.get('tech'))}`);
        seen.push(`list:${agents.list().length}`);
      },
    });
    expect(seen).toEqual(['billing composing get:undefined', 'tech composing get:undefined', 'list:0']);
    expect(log).toEqual([
      'created triage registered:true',
      'created billing registered:true parent:published',
      'created tech registered:true parent:published',
    ]);
    expect(agents.list().map((a) => a.id)).toEqual(['triage', 'billing', 'tech']);
    expect(billing?.agent.state).toBe('published');
    expect(tech?.agent.state).toBe('published');
    expect(billing?.agent.ctx.parent).toBe(triage.agent.ctx);
    await triage.dispose();
    expect(log.slice(3)).toEqual(['disposed triage', 'disposed tech', 'disposed billing']);
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('nested composition: a grandchild made in a composed child\'s setup is published after both, in creation order', async () => {
    const { server, agents, log } = await world();
    const states: string[] = [];
    await agents.create({
      id: 'root',
      setup: async (ctx) => {
        await agents.create({
          id: 'child',
          parent: ctx.get(Agent),
          setup: async (childCtx) => {
            const grand = await agents.create({ id: 'grand', parent: childCtx.get(Agent) });
            states.push(`grand:${grand.agent.state}`);
          },
        });
        await agents.create({ id: 'sibling', parent: ctx.get(Agent) });
      },
    });
    expect(states).toEqual(['grand:composing']);
    expect(log.map((l) => l.split(' ')[1])).toEqual(['root', 'child', 'grand', 'sibling']);
    expect(log.every((l) => !l.includes('UNPUBLISHED'))).toBe(true);
    await server.dispose();
  });

  test('an agent created through a composing agent\'s own view (no parent option) is composed too', async () => {
    const { server, agents, log } = await world();
    let helper: Agent | undefined;
    const lead = await agents.create({
      id: 'lead',
      setup: async (ctx) => {
        helper = (await ctx.get(Agents).create({ id: 'helper' })).agent;
        expect(helper.state).toBe('composing');
      },
    });
    expect(helper?.parent).toBeUndefined();
    expect(helper?.ctx.parent).toBe(lead.agent.ctx);
    expect(log).toEqual(['created lead registered:true', 'created helper registered:true']);
    await server.dispose();
  });

  test('a subagent whose create was not awaited by the setup is still published before the parent resolves', async () => {
    const { server, agents, log } = await world();
    const gate = deferred();
    let late: Promise<AgentHandle> | undefined;
    const creating = agents.create({
      id: 'parent',
      setup: (ctx) => {
        late = agents.create({ id: 'late', parent: ctx.get(Agent), setup: () => gate.promise });
      },
    });
    await tick();
    await tick();
    expect(log).toEqual([]);
    gate.resolve();
    const parent = await creating;
    expect(log).toEqual(['created parent registered:true', 'created late registered:true parent:published']);
    expect((await late)?.agent.ctx.parent).toBe(parent.agent.ctx);
    await server.dispose();
  });

  test('a subagent created after the parent was published is an ordinary subagent', async () => {
    const { server, agents, log } = await world();
    const parent = await agents.create({ id: 'p' });
    const child = await agents.create({ id: 'c', parent: parent.agent });
    expect(child.agent.state).toBe('published');
    expect(log).toEqual(['created p registered:true', 'created c registered:true parent:published']);
    await server.dispose();
  });
});

describe('the group is rolled back as one', () => {
  test('the parent\'s setup fails after composing subagents: nothing is announced, every id is free', async () => {
    const { server, app, agents, log } = await world();
    const children: Agent[] = [];
    const boom = new Error('config missing');
    const err = await agents
      .create({
        id: 'parent',
        setup: async (ctx) => {
          children.push((await agents.create({ id: 'a', parent: ctx.get(Agent) })).agent);
          children.push((await agents.create({ id: 'b', parent: ctx.get(Agent) })).agent);
          throw boom;
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).cause).toBe(boom);
    expect(children.map((c) => c.state)).toEqual(['disposed', 'disposed']);
    expect(log).toEqual([]);
    expect(agents.list()).toEqual([]);
    expect(inspect(app).children.length).toBe(0);
    for (const id of ['parent', 'a', 'b']) await expect(agents.create({ id })).resolves.toBeInstanceOf(AgentHandle);
    await server.dispose();
  });

  test('an agent/created listener throwing for a composed subagent rolls back the parent and every sibling', async () => {
    const { server, app, agents, log } = await world();
    const off = app.get(Events).on('agent/created', (a: Agent) => {
      if (a.id === 'b') throw new Error('b is not allowed');
    });
    const made: Agent[] = [];
    const err = await agents
      .create({
        id: 'parent',
        setup: async (ctx) => {
          for (const id of ['a', 'b', 'c']) made.push((await agents.create({ id, parent: ctx.get(Agent) })).agent);
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).agentId).toBe('parent');
    expect((err as Error).message).toMatch(/agent "parent": an agent\/created listener failed for the agent "b" composed with it: b is not allowed/);
    // parent, a and b were announced (b's announcement is the one that failed); c never was
    expect(log.filter((l) => l.startsWith('created')).map((l) => l.split(' ')[1])).toEqual(['parent', 'a', 'b']);
    // every published one is paired with agent/disposed; c, still composing, is not announced
    expect(log.filter((l) => l.startsWith('disposed')).sort()).toEqual(['disposed a', 'disposed b', 'disposed parent']);
    expect(made.map((a) => a.state)).toEqual(['disposed', 'disposed', 'disposed']);
    expect(agents.list()).toEqual([]);
    expect(inspect(app).children.length).toBe(0);
    off();
    for (const id of ['parent', 'a', 'b', 'c']) await expect(agents.create({ id })).resolves.toBeInstanceOf(AgentHandle);
    await server.dispose();
  });

  test('an agent/created listener throwing for the parent rolls back the subagents composed with it', async () => {
    const { server, app, agents, log } = await world();
    app.get(Events).on('agent/created', (a: Agent) => {
      if (a.id === 'parent') throw new Error('vetoed');
    });
    let child: Agent | undefined;
    const err = await agents
      .create({ id: 'parent', setup: async (ctx) => void (child = (await agents.create({ id: 'kid', parent: ctx.get(Agent) })).agent) })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/agent "parent": an agent\/created listener failed: vetoed; the agent and every agent composed with it were disposed again/);
    expect(child?.state).toBe('disposed');
    expect(log).toEqual(['created parent registered:true', 'disposed parent']);
    expect(agents.get('kid')).toBeUndefined();
    await server.dispose();
  });

  test('a composed subagent whose own setup fails rejects alone; the parent goes on without it', async () => {
    const { server, agents, log } = await world();
    const parent = await agents.create({
      id: 'parent',
      setup: async (ctx) => {
        await expect(
          agents.create({
            id: 'flaky',
            parent: ctx.get(Agent),
            setup: () => {
              throw new Error('no key');
            },
          }),
        ).rejects.toThrow(/agent "flaky": setup failed: no key/);
        await agents.create({ id: 'solid', parent: ctx.get(Agent) });
      },
    });
    expect(log.map((l) => l.split(' ')[1])).toEqual(['parent', 'solid']);
    expect(agents.get('flaky')).toBeUndefined();
    await parent.dispose();
    await server.dispose();
  });

  test('a composed subagent disposed during the parent\'s setup is not published', async () => {
    const { server, agents, log } = await world();
    await agents.create({
      id: 'parent',
      setup: async (ctx) => {
        const temp = await agents.create({ id: 'temp', parent: ctx.get(Agent) });
        await temp.dispose();
        expect(temp.agent.state).toBe('disposed');
      },
    });
    expect(log).toEqual(['created parent registered:true']);
    await server.dispose();
  });

  test('the owner disposed while the parent waits for a composed subagent\'s setup: both reject, nothing published', async () => {
    const { server, app, agents, log } = await world();
    const gate = deferred();
    let late: Promise<AgentHandle> | undefined;
    const creating = agents.create({
      id: 'parent',
      setup: (ctx: SystemContext) => {
        late = agents.create({ id: 'late', parent: ctx.get(Agent), setup: () => gate.promise });
        late.catch(() => undefined);
      },
    });
    await tick();
    await app.dispose();
    await expect(creating).rejects.toThrow(/agent "parent" was disposed while the agents composed with it were running their setup/);
    await expect(late).rejects.toThrow(/agent "late" was disposed while its setup was running/);
    gate.resolve();
    await tick();
    expect(log).toEqual([]);
    expect(agents.list()).toEqual([]);
    assertNoLeaks(server);
    await server.dispose();
  });
});
