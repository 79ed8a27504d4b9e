import {
  Agent,
  AgentError,
  AgentHandle,
  Agents,
  Events,
  ParamError,
  createScope,
  inspect,
  scopeOf,
  token,
  type SystemContext,
} from '../../src/index.js';
import { agentServer, deferred, tick } from './helpers.js';

const REGION = token<string>('REGION');

describe('ctx.get(Agents)', () => {
  test('returns a view bound to the context it was resolved from, one per context', async () => {
    const server = await agentServer();
    const a = server.createContext();
    const b = a.child();
    const va = a.get(Agents);
    expect(va).toBeInstanceOf(Agents);
    expect(va.context).toBe(a);
    expect(a.get(Agents)).toBe(va);
    expect(b.get(Agents).context).toBe(b);
    await server.dispose();
  });

  test('is missing without AgentsPlugin', async () => {
    const { Server } = await import('../../src/index.js');
    const server = new Server();
    await server.finish();
    expect(() => server.createContext().get(Agents)).toThrow(ParamError);
    await server.dispose();
  });
});

describe('agents.create: the agent and its scope', () => {
  test('the agent is its own scope key, under the owner, reaching the owner through Res', async () => {
    const server = await agentServer();
    const app = server.createContext();
    app.insert(REGION, 'eu');
    const handle = await app.get(Agents).create({ id: 'researcher', setup: () => undefined });
    expect(handle).toBeInstanceOf(AgentHandle);
    const { agent } = handle;
    expect(agent).toBeInstanceOf(Agent);
    expect(agent.id).toBe('researcher');
    expect(agent.parent).toBeUndefined();
    expect(scopeOf(agent.ctx)).toBe(agent);
    expect(agent.ctx.parent).toBe(app);
    expect(agent.ctx.get(REGION)).toBe('eu');
    expect(agent.ctx.child().child().get(Agent)).toBe(agent);
    expect(agent.state).toBe('published');
    await server.dispose();
  });

  test('setup is optional; get and list see published agents in creation order', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const a = await agents.create({ id: 'a' });
    const b = await agents.create({ id: 'b', setup: async () => undefined });
    expect(agents.get('a')).toBe(a.agent);
    expect(agents.has('b')).toBe(true);
    expect(agents.get('nope')).toBeUndefined();
    expect(agents.list()).toEqual([a.agent, b.agent]);
    await server.dispose();
  });

  test('ids are unique per server: every view reads and guards the one registry', async () => {
    const server = await agentServer();
    const one = server.createContext().get(Agents);
    const two = server.createContext().get(Agents);
    const h = await one.create({ id: 'shared' });
    expect(two.get('shared')).toBe(h.agent);
    await expect(two.create({ id: 'shared' })).rejects.toThrow('already registered');
    await h.dispose();
    await expect(two.create({ id: 'shared' })).resolves.toBeInstanceOf(AgentHandle);
    await server.dispose();
  });

  test.each([
    ['null options', null, /options must be an object/],
    ['a string', 'x', /options must be an object/],
    ['a missing id', { setup: () => undefined }, /id must be a non-empty string, got undefined/],
    ['an empty id', { id: '' }, /id must be a non-empty string/],
    ['a numeric id', { id: 7 }, /id must be a non-empty string, got the number 7/],
    ['a non-function setup', { id: 'x', setup: 'go' }, /setup must be a function/],
    ['a parent that is not an Agent', { id: 'x', parent: { id: 'p' } }, /parent must be an Agent/],
  ])('bad input (%s) rejects with a TypeError and leaves no residue', async (_label, options, pattern) => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const err = await agents.create(options as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(pattern);
    expect(agents.list()).toEqual([]);
    expect(inspect(app).children.length).toBe(0);
    await server.dispose();
  });

  test('each option field is read once, before any await', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    let reads = 0;
    const gate = deferred();
    const options = {
      get id() {
        reads++;
        return reads === 1 ? 'first' : 'second';
      },
      setup: () => gate.promise,
    };
    const creating = agents.create(options);
    gate.resolve();
    const h = await creating;
    expect(h.agent.id).toBe('first');
    expect(reads).toBe(1);
    await server.dispose();
  });

  test('creating from a disposed context rejects with ContextDisposedError', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    await app.dispose();
    await expect(agents.create({ id: 'late' })).rejects.toThrow(/disposed/);
    await server.dispose();
  });
});

describe('setup runs unpublished with the id reserved', () => {
  test('while setup runs, get(id) is undefined and a concurrent create of that id rejects', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const gate = deferred();
    let seenDuringSetup: unknown = 'not called';
    let stateDuringSetup = '';
    const creating = agents.create({
      id: 'solo',
      setup: async (ctx) => {
        seenDuringSetup = agents.get('solo');
        stateDuringSetup = (ctx.get(Agent) as Agent).state;
        await gate.promise;
      },
    });
    expect(seenDuringSetup).toBeUndefined();
    expect(stateDuringSetup).toBe('composing');
    expect(agents.list()).toEqual([]);
    const dup = await agents.create({ id: 'solo' }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(AgentError);
    expect((dup as Error).message).toMatch(/agent "solo" is already registered/);
    gate.resolve();
    const h = await creating;
    expect(agents.get('solo')).toBe(h.agent);
    await server.dispose();
  });

  test('two racing creates of one id: exactly one wins', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const results = await Promise.allSettled([
      agents.create({ id: 'race', setup: async () => tick() }),
      agents.create({ id: 'race', setup: async () => tick() }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(agents.list().map((a) => a.id)).toEqual(['race']);
    await server.dispose();
  });

  test('setup failure undoes every registration, publishes nothing, frees the id and names the agent', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const events = app.get(Events);
    const created: string[] = [];
    events.on('agent/created', (a: Agent) => created.push(a.id));
    const undone: string[] = [];
    let agentCtx: SystemContext | undefined;
    const boom = new Error('no API key');
    const err = await agents
      .create({
        id: 'broken',
        setup: async (ctx) => {
          agentCtx = ctx;
          ctx.get(Events).on('agent/created', () => undefined);
          ctx.onDispose(() => undone.push('cleanup'));
          openSessionLike(ctx);
          await tick();
          throw boom;
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).message).toMatch(/agent "broken": setup failed: no API key/);
    expect((err as AgentError).cause).toBe(boom);
    expect((err as AgentError).agentId).toBe('broken');
    expect(undone).toEqual(['cleanup']);
    expect(agentCtx?.isDisposed).toBe(true);
    expect(events.listenerCount('agent/created', scopeOf(agentCtx as SystemContext))).toBe(1);
    expect(created).toEqual([]);
    expect(agents.get('broken')).toBeUndefined();
    expect(inspect(app).children.length).toBe(0);
    const again = await agents.create({ id: 'broken' });
    expect(again.agent.id).toBe('broken');
    expect(created).toEqual(['broken']);
    await server.dispose();
  });

  test('a synchronously throwing setup is rolled back the same way', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    await expect(
      agents.create({
        id: 'sync',
        setup: () => {
          throw new TypeError('bad config');
        },
      }),
    ).rejects.toThrow(/agent "sync": setup failed: bad config/);
    expect(agents.get('sync')).toBeUndefined();
    await expect(agents.create({ id: 'sync' })).resolves.toBeInstanceOf(AgentHandle);
    await server.dispose();
  });

  test('owner disposed while setup awaits: rejects at once, undoes setup, and late completion cannot publish', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const created: string[] = [];
    server.createContext().get(Events).on('agent/created', (a: Agent) => created.push(a.id));
    const gate = deferred();
    const undone: string[] = [];
    let agentCtx: SystemContext | undefined;
    let lateError: unknown;
    const creating = agents.create({
      id: 'orphan',
      setup: async (ctx) => {
        agentCtx = ctx;
        ctx.onDispose(() => undone.push('registration'));
        await gate.promise;
        try {
          ctx.get(Events).on('x', () => undefined);
        } catch (e) {
          lateError = e;
        }
      },
    });
    await tick();
    await app.dispose();
    const err = await creating.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "orphan" was disposed while its setup was running \(its owner context/);
    expect(undone).toEqual(['registration']);
    expect(agentCtx?.isDisposed).toBe(true);
    gate.resolve();
    await tick();
    expect(lateError).toBeDefined();
    expect(created).toEqual([]);
    expect(agents.get('orphan')).toBeUndefined();
    const other = server.createContext().get(Agents);
    await expect(other.create({ id: 'orphan' })).resolves.toBeInstanceOf(AgentHandle);
    await server.dispose();
  });

  test('owner disposal started in the same turn as a synchronous setup still wins', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const creating = agents.create({ id: 'doomed', setup: () => undefined });
    const disposing = app.dispose();
    await expect(creating).rejects.toThrow(/agent "doomed" was disposed while its setup was running/);
    await disposing;
    expect(agents.get('doomed')).toBeUndefined();
    await server.dispose();
  });
});

describe('publication', () => {
  test('the agent enters the registry before agent/created, which the agent and global listeners hear', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const log: string[] = [];
    app.get(Events).on('agent/created', (a: Agent) => log.push(`global:${a.id}:${agents.get(a.id) === a}`));
    const other = await agents.create({
      id: 'other',
      setup: (ctx) => void ctx.get(Events).on('agent/created', (a: Agent) => log.push(`other-scoped:${a.id}`)),
    });
    log.length = 0;
    await agents.create({
      id: 'main',
      setup: (ctx) => void ctx.get(Events).on('agent/created', (a: Agent) => log.push(`own:${a.id}:${a.state}`)),
    });
    expect(log).toEqual(['global:main:true', 'own:main:published']);
    await other.dispose();
    await server.dispose();
  });

  test('a throwing agent/created listener rolls the agent back and pairs it with agent/disposed', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const events = app.get(Events);
    const log: string[] = [];
    const off = events.on('agent/created', () => {
      throw new Error('listener exploded');
    });
    events.on('agent/disposed', (a: Agent) => log.push(`disposed:${a.id}:${agents.get(a.id) === undefined}`));
    let agentCtx: SystemContext | undefined;
    const err = await agents.create({ id: 'vetoed', setup: (ctx) => void (agentCtx = ctx) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "vetoed": an agent\/created listener failed: listener exploded/);
    expect(log).toEqual(['disposed:vetoed:true']);
    expect(agentCtx?.isDisposed).toBe(true);
    off();
    await expect(agents.create({ id: 'vetoed' })).resolves.toBeInstanceOf(AgentHandle);
    await server.dispose();
  });
});

describe('disposal', () => {
  test('handle.dispose is memoized: leaves the registry, emits agent/disposed, then disposes the scope', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const log: string[] = [];
    const h = await agents.create({
      id: 'worker',
      setup: (ctx) => {
        ctx.get(Events).on('agent/disposed', (a: Agent) => log.push(`scoped-listener:${agents.get(a.id) === undefined}:${a.ctx.isDisposed}`));
        ctx.onDispose(() => log.push('scope-cleanup'));
      },
    });
    app.get(Events).on('agent/disposed', () => log.push('global-listener'));
    const p1 = h.dispose();
    const p2 = h.dispose();
    expect(p2).toBe(p1);
    expect(agents.get('worker')).toBeUndefined();
    await Promise.all([p1, p2, h.agent.ctx.dispose()]);
    expect(log).toEqual(['scoped-listener:true:false', 'global-listener', 'scope-cleanup']);
    expect(h.agent.state).toBe('disposed');
    expect(h.agent.ctx.isDisposed).toBe(true);
    expect(inspect(app).children.length).toBe(0);
    await h.dispose();
    expect(log).toHaveLength(3);
    await server.dispose();
  });

  test('disposing the owner disposes the agent, which leaves the registry and is announced once', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const watcher = server.createContext();
    const disposed: string[] = [];
    watcher.get(Events).on('agent/disposed', (a: Agent) => disposed.push(a.id));
    const h = await agents.create({ id: 'owned' });
    const undone: string[] = [];
    h.agent.ctx.onDispose(() => undone.push('x'));
    const disposing = app.dispose();
    expect(agents.get('owned')).toBeUndefined();
    expect(agents.list()).toEqual([]);
    expect(h.agent.isDisposed).toBe(true);
    await disposing;
    await h.dispose();
    expect(disposed).toEqual(['owned']);
    expect(undone).toEqual(['x']);
    await server.dispose();
  });

  test('racing disposals (handle, scope context, owner) run one teardown', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const disposed: string[] = [];
    server.createContext().get(Events).on('agent/disposed', (a: Agent) => disposed.push(a.id));
    const h = await agents.create({ id: 'r', setup: (ctx) => void ctx.onDispose(async () => tick()) });
    await Promise.all([app.dispose(), h.dispose(), h.agent.ctx.dispose(), h.agent.ctx[Symbol.asyncDispose](), h[Symbol.asyncDispose]()]);
    expect(disposed).toEqual(['r']);
    await server.dispose();
  });

  test('an id is free again once its agent is disposed', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const first = await agents.create({ id: 'again' });
    await first.dispose();
    const second = await agents.create({ id: 'again' });
    expect(second.agent).not.toBe(first.agent);
    expect(agents.get('again')).toBe(second.agent);
    await server.dispose();
  });

  test('the id can be reused while the owner is still tearing the old agent down', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const gate = deferred();
    await app.get(Agents).create({ id: 'slow', setup: (ctx) => void ctx.onDispose(() => gate.promise) });
    const disposing = app.dispose();
    const other = server.createContext().get(Agents);
    const h = await other.create({ id: 'slow' });
    expect(other.get('slow')).toBe(h.agent);
    gate.resolve();
    await disposing;
    expect(other.get('slow')).toBe(h.agent);
    await server.dispose();
  });

  test('failing agent/disposed listeners and cleanups reject dispose after the whole teardown ran', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const ran: string[] = [];
    const h = await agents.create({
      id: 'noisy',
      setup: (ctx) => {
        ctx.onDispose(() => ran.push('first'));
        ctx.onDispose(() => {
          throw new Error('cleanup failed');
        });
      },
    });
    app.get(Events).on('agent/disposed', () => {
      throw new Error('listener failed');
    });
    const err = await h.dispose().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(['listener failed', 'cleanup failed']);
    expect((err as Error).message).toMatch(/agent "noisy"/);
    expect(ran).toEqual(['first']);
    expect(agents.get('noisy')).toBeUndefined();
    expect(h.agent.ctx.isDisposed).toBe(true);
    await server.dispose();
  });

  test('server.dispose disposes every agent', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const handles = await Promise.all(['a', 'b', 'c'].map((id) => agents.create({ id })));
    await server.dispose();
    for (const h of handles) expect(h.agent.isDisposed).toBe(true);
    expect(agents.list()).toEqual([]);
  });
});

describe('subagents', () => {
  test('a subagent is a new scope under its parent, owned by it, and disposed with it', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const disposed: string[] = [];
    app.get(Events).on('agent/disposed', (a: Agent) => disposed.push(a.id));
    const parent = await agents.create({ id: 'parent' });
    const child = await agents.create({ id: 'child', parent: parent.agent });
    const grandchild = await agents.create({ id: 'grandchild', parent: child.agent });
    expect(child.agent.parent).toBe(parent.agent);
    expect(child.agent.ctx.parent).toBe(parent.agent.ctx);
    expect(scopeOf(child.agent.ctx)).toBe(child.agent);
    expect(child.agent.ctx.get(Agent)).toBe(child.agent);
    await parent.dispose();
    // Each agent announces itself, then disposes its scope (and so its subagents): top-down.
    expect(disposed).toEqual(['parent', 'child', 'grandchild']);
    expect(child.agent.isDisposed).toBe(true);
    expect(grandchild.agent.isDisposed).toBe(true);
    expect(agents.list()).toEqual([]);
    await server.dispose();
  });

  test('disposing the parent during a subagent setup rolls the subagent back', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const parent = await agents.create({ id: 'p' });
    const gate = deferred();
    const creating = agents.create({ id: 'c', parent: parent.agent, setup: () => gate.promise });
    await tick();
    await parent.dispose();
    await expect(creating).rejects.toThrow(/agent "c" was disposed while its setup was running \(its parent agent "p"/);
    gate.resolve();
    await tick();
    expect(agents.get('c')).toBeUndefined();
    await server.dispose();
  });

  test('a disposed parent is refused', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const parent = await agents.create({ id: 'gone' });
    await parent.dispose();
    await expect(agents.create({ id: 'c', parent: parent.agent })).rejects.toThrow(/parent agent "gone" is disposed/);
    await server.dispose();
  });

  test('a parent from another server is refused', async () => {
    const s1 = await agentServer();
    const s2 = await agentServer();
    const p = await s1.createContext().get(Agents).create({ id: 'p' });
    await expect(s2.createContext().get(Agents).create({ id: 'c', parent: p.agent })).rejects.toThrow(/belongs to another server/);
    await s1.dispose();
    await s2.dispose();
  });

  test('events about a subagent reach its own listeners, not its parent\'s layer', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const heard: string[] = [];
    const parent = await agents.create({
      id: 'p',
      setup: (ctx) => void ctx.get(Events).on('agent/created', (a: Agent) => heard.push(`parent-layer:${a.id}`)),
    });
    heard.length = 0;
    await agents.create({
      id: 'c',
      parent: parent.agent,
      setup: (ctx) => void ctx.get(Events).on('agent/created', (a: Agent) => heard.push(`child-layer:${a.id}`)),
    });
    expect(heard).toEqual(['child-layer:c']);
    await server.dispose();
  });
});

describe('scopes below an agent', () => {
  test('ownership follows the view: an agent created through a turn\'s view is disposed with the turn', async () => {
    const server = await agentServer();
    const lead = await server.createContext().get(Agents).create({ id: 'lead' });
    const turn = lead.agent.ctx.child().child();
    const temp = await turn.get(Agents).create({ id: 'temp' });
    expect(temp.agent.ctx.parent).toBe(turn);
    expect(temp.agent.parent).toBeUndefined();
    await turn.dispose();
    expect(temp.agent.isDisposed).toBe(true);
    expect(turn.server.createContext().get(Agents).get('temp')).toBeUndefined();
    expect(lead.agent.isDisposed).toBe(false);
    await server.dispose();
  });

  test('a nested createScope under agent.ctx replaces the tag, the Agent association is inherited', async () => {
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'a' });
    const key = {};
    const inner = createScope(h.agent.ctx, key);
    expect(scopeOf(inner.ctx)).toBe(key);
    expect(inner.ctx.get(Agent)).toBe(h.agent);
    await h.dispose();
    expect(inner.ctx.isDisposed).toBe(true);
    await server.dispose();
  });
});

/** Opens a session-like child so the rollback has a descendant to dispose too. */
function openSessionLike(ctx: SystemContext): SystemContext {
  return ctx.child();
}
