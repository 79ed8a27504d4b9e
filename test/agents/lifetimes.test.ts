// SPEC §10.3 and §10.4 as they meet agents: `per: 'agent'` locals are made on every agent
// context before setup and disposed with the agent (a subagent's own instance shadows its
// parent's); `per: 'session'` locals on every session openSession makes; and
// agents.create({ parentFilter }) gates the agent's Res walks to its owner.
import {
  Agent,
  AgentError,
  Agents,
  AgentsPlugin,
  ConversationHistory,
  Events,
  ParamError,
  ParentFilter,
  Res,
  ResMut,
  Server,
  ServerError,
  inspect,
  openSession,
  system,
  token,
  type SystemContext,
} from '../../src/index.js';
import { createAgent } from '../../src/agents/create-agent.js';
import { assertNoLeaks } from '../../src/testing/index.js';

class AgentMemory {
  static made = 0;
  readonly facts: string[] = [];
  disposed = false;
  readonly n = ++AgentMemory.made;
  constructor(readonly owner?: string) {}
  [Symbol.dispose](): void {
    this.disposed = true;
  }
}
class Draft {
  disposed = false;
  constructor(readonly messagesAtOpen: number) {}
  [Symbol.dispose](): void {
    this.disposed = true;
  }
}
const Llm = token<string>('Llm');

async function server(configure: (s: Server) => void = () => undefined): Promise<Server> {
  const s = new Server();
  s.addPlugins(new AgentsPlugin());
  configure(s);
  await s.finish();
  return s;
}

const ownerOf = (ctx: SystemContext): string => ctx.tryGet(Agent)?.id ?? 'root';

describe("per: 'agent' locals", () => {
  test('each agent gets its own instance, made before setup from its own context; a subagent shadows its parent', async () => {
    const s = await server((srv) => srv.registerLocal(AgentMemory, (ctx) => new AgentMemory(ownerOf(ctx)), { per: 'agent' }));
    const app = s.createContext();
    const agents = app.get(Agents);
    const seenInSetup: string[] = [];
    const setup = (ctx: SystemContext): void => {
      const own = ctx.getMut(AgentMemory); // ResMut: the agent's own local
      seenInSetup.push(`${ctx.get(Agent).id}:${own.owner}`);
    };
    const billing = await agents.create({ id: 'billing', setup });
    const tech = await agents.create({ id: 'tech', setup });
    const sub = await agents.create({ id: 'sub', parent: billing.agent, setup });
    expect(seenInSetup).toEqual(['billing:billing', 'tech:tech', 'sub:sub']);
    const rootMem = app.get(AgentMemory);
    const [b, t, u] = [billing, tech, sub].map((h) => h.agent.ctx.get(AgentMemory));
    expect(rootMem.owner).toBe('root');
    expect(new Set([rootMem, b, t, u]).size).toBe(4); // nobody shares one by accident
    // a session and a turn of the subagent read the subagent's own, not its parent's
    const session = openSession(sub.agent);
    expect(await session.turn((turnCtx) => turnCtx.get(AgentMemory))).toBe(u);
    // a system with ResMut on the agent's context writes the agent's own memory
    await billing.agent.ctx.run(system([ResMut(AgentMemory)], (m) => void m.facts.push('refund policy: 30 days')));
    expect(b.facts).toEqual(['refund policy: 30 days']);
    expect(t.facts).toEqual([]);
    await billing.dispose();
    expect(b.disposed).toBe(true);
    expect(u.disposed).toBe(true); // the subagent went with its parent
    expect(t.disposed).toBe(false);
    expect(rootMem.disposed).toBe(false);
    await app.dispose();
    expect(t.disposed && rootMem.disposed).toBe(true);
    assertNoLeaks(s);
    await s.dispose();
  });

  test("per: 'root' locals stay one per root; agents read the root's", async () => {
    const s = await server((srv) => srv.registerLocal(AgentMemory));
    const app = s.createContext();
    const h = await app.get(Agents).create({ id: 'a' });
    expect(h.agent.ctx.hasLocal(AgentMemory)).toBe(false);
    expect(h.agent.ctx.get(AgentMemory)).toBe(app.get(AgentMemory));
    await s.dispose();
  });

  test('composed subagents and create steps see their per-agent locals too', async () => {
    const s = await server((srv) => srv.registerLocal(AgentMemory, (ctx) => new AgentMemory(ownerOf(ctx)), { per: 'agent' }));
    const agents = s.createContext().get(Agents);
    const seen: string[] = [];
    await createAgent(
      agents,
      {
        id: 'lead',
        setup: async (ctx) => {
          const kid = await agents.create({ id: 'kid', parent: ctx.get(Agent) });
          seen.push(`kid:${kid.agent.ctx.getMut(AgentMemory).owner}`);
        },
      },
      {
        beforeSetup: (ctx) => void seen.push(`before:${ctx.getMut(AgentMemory).owner}`),
        prepare: (ctx) => void seen.push(`prepare:${ctx.getMut(AgentMemory).owner}`),
      },
    );
    expect(seen).toEqual(['before:lead', 'kid:kid', 'prepare:lead']);
    await s.dispose();
  });

  test('a failing per-agent factory rejects the create naming the token, with nothing left behind', async () => {
    let calls = 0;
    const s = await server((srv) => {
      srv.registerLocal(Draft, () => new Draft(0), { per: 'agent' });
      srv.registerLocal(
        AgentMemory,
        () => {
          if (++calls > 1) throw new Error('memory store down'); // the root's succeeds, the agent's fails
          return new AgentMemory('root');
        },
        { per: 'agent' },
      );
    });
    const app = s.createContext();
    const agents = app.get(Agents);
    const created: string[] = [];
    app.get(Events).on('agent/created', (a: Agent) => created.push(a.id));
    let setupRan = false;
    let agentCtx: SystemContext | undefined;
    const err = await createAgent(agents, { id: 'x', setup: () => void (setupRan = true) }, { beforeSetup: (ctx) => void (agentCtx = ctx) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "x": making its per-agent locals failed: .*AgentMemory threw: memory store down/);
    expect((err as AgentError).cause).toBeInstanceOf(ServerError);
    expect(setupRan).toBe(false);
    expect(agentCtx).toBeUndefined();
    expect(created).toEqual([]);
    expect(agents.get('x')).toBeUndefined();
    expect(inspect(app).children.length).toBe(0);
    calls = 0; // the next agent's factory succeeds: the id is free
    await expect(agents.create({ id: 'x' })).resolves.toBeDefined();
    await s.dispose();
  });
});

describe("per: 'session' locals", () => {
  test('every session openSession makes gets its own, made after the history; roots, agents and turns get none', async () => {
    const s = await server((srv) => srv.registerLocal(Draft, (ctx) => new Draft(ctx.get(ConversationHistory).length), { per: 'session' }));
    const app = s.createContext();
    expect(app.hasLocal(Draft)).toBe(false);
    const h = await app.get(Agents).create({ id: 'support' });
    expect(h.agent.ctx.has(Draft)).toBe(false);
    const one = openSession(h.agent, { history: new ConversationHistory([{ role: 'user', content: 'hi' }]) });
    const two = openSession(h.agent);
    const d1 = one.ctx.getMut(Draft);
    expect(d1.messagesAtOpen).toBe(1);
    expect(two.ctx.getMut(Draft)).not.toBe(d1);
    expect(await one.turn((turnCtx) => [turnCtx.hasLocal(Draft), turnCtx.get(Draft)])).toEqual([false, d1]);
    // any context can own a session
    expect(openSession(app).ctx.hasLocal(Draft)).toBe(true);
    await one.dispose();
    expect(d1.disposed).toBe(true);
    expect(two.ctx.get(Draft).disposed).toBe(false);
    await s.dispose();
  });

  test('a failing per-session factory throws a ServerError naming the token and leaves no session behind', async () => {
    const s = await server((srv) =>
      srv.registerLocal(
        Draft,
        () => {
          throw new Error('no drafts today');
        },
        { per: 'session' },
      ),
    );
    const app = s.createContext();
    const h = await app.get(Agents).create({ id: 'support' });
    expect(() => openSession(h.agent)).toThrow(ServerError);
    expect(() => openSession(h.agent)).toThrow(/Draft threw: no drafts today/);
    await new Promise((r) => setImmediate(r));
    expect(inspect(h.agent.ctx).children.length).toBe(0);
    await app.dispose();
    assertNoLeaks(s);
    await s.dispose();
  });
});

describe('agents.create({ parentFilter })', () => {
  test('gates the agent\'s Res walks (and its sessions\' and turns\') to its owner; own locals and globals stay reachable', async () => {
    const s = await server((srv) => {
      srv.insertGlobal(Llm, 'global-llm');
      srv.registerLocal(AgentMemory, (ctx) => new AgentMemory(ownerOf(ctx)), { per: 'agent' });
    });
    const app = s.createContext();
    const agents = app.get(Agents);
    const triage = await agents.create({
      id: 'triage',
      setup: (ctx) => void ctx.getMut(AgentMemory).facts.push('customer 4711 is under fraud investigation'),
    });
    triage.agent.ctx.insert(Llm, 'triage-llm');
    class Secret {}
    triage.agent.ctx.insert(new Secret());
    const billing = await agents.create({ id: 'billing', parent: triage.agent, parentFilter: ParentFilter.allowOnly([Llm]) });
    const ctx = billing.agent.ctx;
    expect(ctx.get(Llm)).toBe('triage-llm'); // allowed through
    expect(ctx.get(AgentMemory).owner).toBe('billing'); // its own per-agent memory
    expect(ctx.get(AgentMemory).facts).toEqual([]); // not the parent's private notes
    const err = (() => {
      try {
        return ctx.get(Secret);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ParamError);
    expect((err as ParamError).kind).toBe('ResourceOutOfScope');
    const turnSees = await openSession(billing.agent).turn((turnCtx) => [turnCtx.has(Secret), turnCtx.get(Agent).id]);
    expect(turnSees).toEqual([false, 'billing']);
    const read = system([Res(Secret, { optional: true }), Res(Llm)], (secret, llm) => [secret === undefined, llm]);
    expect(await ctx.child().run(read)).toEqual([true, 'triage-llm']);
    // blocked tokens fall through to the globals
    const tech = await agents.create({ id: 'tech', parent: triage.agent, parentFilter: ParentFilter.allowAllExcept([Llm]) });
    expect(tech.agent.ctx.get(Llm)).toBe('global-llm');
    expect(tech.agent.ctx.has(Secret)).toBe(true);
    await s.dispose();
  });

  test('a parentFilter that is not a ParentFilter is a TypeError with no residue', async () => {
    const s = await server();
    const app = s.createContext();
    const agents = app.get(Agents);
    for (const bad of [{ kind: 'allowOnly', tokens: [] }, 'allowOnly', new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } })]) {
      await expect(agents.create({ id: 'x', parentFilter: bad as never })).rejects.toThrow(
        /Agents\.create\(\{ id: "x", parentFilter \}\): parentFilter must be made by ParentFilter\.allowOnly/,
      );
    }
    expect(agents.list()).toEqual([]);
    expect(inspect(app).children.length).toBe(0);
    await s.dispose();
  });
});
