// Contract C8: the create transaction as an internal function that §12's sessions call
// with extra unpublished steps, raced against the agent's teardown, with the same
// rollback as setup. (Internal API: imported from its module, not from the package.)
import { Agent, AgentError, Agents, ContextDisposedError, Events, inspect, type SystemContext } from '../../src/index.js';
import { createAgent } from '../../src/agents/create-agent.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { agentServer, deferred, tick } from './helpers.js';

class SessionBusy extends Error {}

async function world() {
  const server = await agentServer();
  const app = server.createContext();
  const agents = app.get(Agents);
  const log: string[] = [];
  app.get(Events).on('agent/created', (a: Agent) => log.push(`created ${a.id}`));
  app.get(Events).on('agent/disposed', (a: Agent) => log.push(`disposed ${a.id}`));
  return { server, app, agents, log };
}

describe('createAgent(view, options, steps)', () => {
  test('runs beforeSetup, setup, prepare in order, all unpublished, then publishes', async () => {
    const { server, agents, log } = await world();
    const seen = (step: string) => (ctx: SystemContext, signal?: AbortSignal, agent?: Agent) => {
      const self = ctx.get(Agent);
      log.push(`${step} ${self.state} get:${String(agents.get('s1'))}${signal ? ` aborted:${signal.aborted}` : ''}${agent ? ` same:${agent === self}` : ''}`);
    };
    const h = await createAgent(agents, { id: 's1', setup: seen('setup') }, { beforeSetup: seen('before'), prepare: seen('prepare') });
    expect(log).toEqual([
      'before composing get:undefined aborted:false same:true',
      'setup composing get:undefined',
      'prepare composing get:undefined aborted:false same:true',
      'created s1',
    ]);
    expect(agents.get('s1')).toBe(h.agent);
    await server.dispose();
  });

  test('the id is reserved before any await: a second create in the same turn is refused', async () => {
    const { server, agents } = await world();
    const gate = deferred();
    const first = createAgent(agents, { id: 'dup' }, { prepare: () => gate.promise });
    const second = createAgent(agents, { id: 'dup' }, {});
    await expect(second).rejects.toThrow(/agent "dup" is already registered \(an agent with that id is still running its setup\)/);
    gate.resolve();
    await expect(first).resolves.toBeDefined();
    await server.dispose();
  });

  test('a step\'s own error is rethrown as it is, after setup\'s registrations were undone', async () => {
    const { server, app, agents, log } = await world();
    const busy = new SessionBusy('session s1 is leased by another process');
    const undone: string[] = [];
    const err = await createAgent(
      agents,
      { id: 's1', setup: (ctx) => void ctx.onDispose(() => undone.push('setup registration')) },
      {
        prepare: async () => {
          await tick();
          throw busy;
        },
      },
    ).catch((e: unknown) => e);
    expect(err).toBe(busy);
    expect(undone).toEqual(['setup registration']);
    expect(log).toEqual([]);
    expect(inspect(app).children.length).toBe(0);
    await expect(agents.create({ id: 's1' })).resolves.toBeDefined();
    await server.dispose();
  });

  test('a failing beforeSetup stops the transaction before setup runs', async () => {
    const { server, agents } = await world();
    let setupRan = false;
    const busy = new SessionBusy('busy');
    await expect(
      createAgent(
        agents,
        { id: 'x', setup: () => void (setupRan = true) },
        {
          beforeSetup: () => {
            throw busy;
          },
        },
      ),
    ).rejects.toBe(busy);
    expect(setupRan).toBe(false);
    expect(agents.list()).toEqual([]);
    await server.dispose();
  });

  test('owner disposed during a step: the signal aborts, the create rejects at once, a late completion publishes nothing', async () => {
    const { server, app, agents, log } = await world();
    const gate = deferred();
    let signal: AbortSignal | undefined;
    const undone: string[] = [];
    const creating = createAgent(
      agents,
      { id: 's2', setup: (ctx) => void ctx.onDispose(() => undone.push('setup registration')) },
      {
        prepare: async (_ctx, s) => {
          signal = s;
          await gate.promise;
        },
      },
    );
    await tick();
    expect(signal?.aborted).toBe(false);
    await app.dispose();
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(ContextDisposedError);
    const err = await creating.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/agent "s2" was disposed while it was being prepared \(its owner context/);
    expect(undone).toEqual(['setup registration']);
    gate.resolve();
    await tick();
    expect(log).toEqual([]);
    assertNoLeaks(server);
    await server.dispose();
  });

  test('`call` names the caller in validation messages; every failure is a rejection', async () => {
    const { server, agents } = await world();
    let p: Promise<unknown> | undefined;
    expect(() => {
      p = createAgent(agents, { id: 7 } as never, { call: 'sessions.create' });
    }).not.toThrow();
    await expect(p).rejects.toThrow(/^sessions\.create\(\{ id \}\): id must be a non-empty string, got the number 7/);
    await server.dispose();
  });
});

describe('Agents.create never throws synchronously', () => {
  test('a disposed view, a disposed parent and bad options all reject', async () => {
    const { server, app, agents } = await world();
    const parent = await agents.create({ id: 'p' });
    await parent.dispose();
    const calls: (() => Promise<unknown>)[] = [
      () => agents.create(undefined as never),
      () => agents.create({ id: 'c', parent: parent.agent }),
      () => agents.create({ id: 'c', setup: 1 as never }),
    ];
    for (const c of calls) {
      let p: Promise<unknown> | undefined;
      expect(() => (p = c())).not.toThrow();
      await expect(p).rejects.toBeInstanceOf(Error);
    }
    await app.dispose();
    let p: Promise<unknown> | undefined;
    expect(() => (p = agents.create({ id: 'late' }))).not.toThrow();
    await expect(p).rejects.toBeInstanceOf(ContextDisposedError);
    await server.dispose();
  });
});
