/**
 * `agents.runTask({ parent?, kind | setup, parentFilter?, id?, fn })`: a one-task subagent,
 * handed to `fn` and disposed when `fn` settles. It resolves with `fn`'s value and rejects
 * with `fn`'s error (after the disposal) or with a failed disposal's error; when its owner
 * is disposed first it rejects with the owner's `ContextDisposedError` at once and the
 * subagent is disposed with it; a missing `fn` is a rejected `TypeError`; and any number of
 * tasks leave nothing behind.
 */
import { jest } from '@jest/globals';
import { Agent, Agents, ContextDisposedError, Tools, ToolsPlugin, inspect, openSession } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { agentServer, deferred, tick } from './helpers.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

describe('a task that settles', () => {
  test("resolves with fn's value; the subagent (of parent, or owned by the view's context) is disposed by then", async () => {
    const server = await agentServer(new ToolsPlugin());
    const app = server.createContext();
    const agents = app.get(Agents);
    const lead = (await agents.create({ id: 'lead' })).agent;
    agents.define('summarizer', {
      setup: (ctx) => void ctx.get(Tools).register({ name: 'cut', description: 'Cuts', parameters: { type: 'object' }, execute: () => 'cut' }),
    });
    let seen: Agent | undefined;
    const out = await agents.runTask({
      parent: lead,
      kind: 'summarizer',
      fn: async (agent) => {
        seen = agent;
        expect(agents.get(agent.id)).toBe(agent); // published while fn runs
        const session = openSession(agent);
        const tools = await session.turn((turnCtx) => turnCtx.get(Tools).visible().map((t) => t.name));
        return { tools, kind: agent.kind };
      },
    });
    expect(out).toEqual({ tools: ['cut'], kind: 'summarizer' });
    const sub = seen as Agent;
    expect(sub.parent).toBe(lead);
    expect(sub.id).toMatch(new RegExp(`^summarizer-${UUID}$`));
    expect(sub.isDisposed).toBe(true);
    expect(agents.get(sub.id)).toBeUndefined();

    // without parent: owned by the view's context; with setup; the id defaults to task-<uuid>
    const ids: string[] = [];
    const n = await agents.runTask({
      setup: (ctx) => void ids.push(ctx.get(Agent).id),
      fn: (agent) => {
        expect(agent.parent).toBeUndefined();
        expect(agent.kind).toBeUndefined();
        return 42;
      },
    });
    expect(n).toBe(42);
    expect(ids[0]).toMatch(new RegExp(`^task-${UUID}$`));
    // an explicit id, and no setup at all
    expect(await agents.runTask({ id: 'one-off', fn: (agent) => agent.id })).toBe('one-off');
    expect(inspect(lead.ctx).children).toEqual([]);
    await server.dispose();
    assertNoLeaks(server);
  });

  test("rejects with fn's error (thrown or rejected) after the subagent was disposed; a disposal error then is dropped", async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const order: string[] = [];
    const broken = new Error('the model refused');
    const task = agents.runTask({
      fn: async (agent) => {
        agent.ctx.onDispose(() => void order.push('disposed'));
        await tick();
        throw broken;
      },
    });
    task.catch(() => order.push('rejected'));
    await expect(task).rejects.toBe(broken);
    expect(order).toEqual(['disposed', 'rejected']);

    const sync = new RangeError('step 9 of at most 8');
    let sub: Agent | undefined;
    await expect(agents.runTask({ fn: (agent) => { sub = agent; throw sync; } })).rejects.toBe(sync);
    expect(sub?.isDisposed).toBe(true);

    // fn failed and the disposal failed too: fn's error is the one reported
    const cleanupBroke = new Error('cleanup broke');
    await expect(
      agents.runTask({ fn: (agent) => { agent.ctx.onDispose(() => { throw cleanupBroke; }); throw broken; } }),
    ).rejects.toBe(broken);
    await server.dispose();
  });

  test('a disposal that fails after fn succeeded rejects with the disposal error', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const cleanupBroke = new Error('cleanup broke');
    const task = agents.runTask({ id: 'leaky', fn: (agent) => { agent.ctx.onDispose(() => { throw cleanupBroke; }); return 'done'; } });
    await expect(task).rejects.toThrow(/cleanup broke/);
    await expect(task).rejects.toMatchObject({ errors: [cleanupBroke] });
    expect(agents.get('leaky')).toBeUndefined();
    await server.dispose();
  });
});

describe('the owner disposed first', () => {
  test("a parent agent disposed while fn runs: the subagent is disposed and the task rejects with the parent's ContextDisposedError, whatever fn does later", async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const lead = await agents.create({ id: 'lead' });
    const late = deferred<string>();
    let sub: Agent | undefined;
    const task = agents.runTask({ parent: lead.agent, fn: (agent) => { sub = agent; return late.promise; } });
    await tick();
    expect(sub?.state).toBe('published');
    const leadSignal = lead.agent.ctx.signal;
    const disposing = lead.dispose();
    await expect(task).rejects.toThrow(ContextDisposedError);
    await expect(task).rejects.toBe(leadSignal.reason); // the parent's own disposal error
    await expect(task).rejects.toThrow(/agent "lead"/);
    expect(sub?.isDisposed).toBe(true);
    expect(agents.get(sub?.id as string)).toBeUndefined();
    late.resolve('too late'); // ignored: the task already rejected
    await disposing;
    await tick();

    // the same when fn rejects later (no unhandled rejection), and with the view's context as owner
    const owner = app.child();
    const failing = deferred<never>();
    const owned = owner.get(Agents).runTask({ fn: () => failing.promise });
    await tick();
    const ownerSignal = owner.signal;
    await owner.dispose();
    await expect(owned).rejects.toBe(ownerSignal.reason);
    failing.reject(new Error('fn failed after its owner went'));
    await tick();
    await server.dispose();
    assertNoLeaks(server);
  });

  test('an owner disposed while the subagent runs its setup, or before the call, rejects with a ContextDisposedError and leaves nothing', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    const lead = await agents.create({ id: 'lead' });
    const setupStarted = deferred();
    const fn = jest.fn(() => 'never');
    const task = agents.runTask({ id: 'slow-setup', parent: lead.agent, setup: () => { setupStarted.resolve(); return new Promise(() => undefined); }, fn });
    await setupStarted.promise;
    await lead.dispose();
    await expect(task).rejects.toThrow(ContextDisposedError);
    expect(fn).not.toHaveBeenCalled();
    expect(agents.get('slow-setup')).toBeUndefined();

    // already disposed: a parent agent, and the view's own context
    await expect(agents.runTask({ parent: lead.agent, fn })).rejects.toThrow(ContextDisposedError);
    const gone = app.child();
    const goneAgents = gone.get(Agents);
    await gone.dispose();
    await expect(goneAgents.runTask({ id: 'late', fn })).rejects.toThrow(/Agents\.runTask\(\{ id: "late" \}\) was called on a .* that is disposed/);
    expect(fn).not.toHaveBeenCalled();
    await server.dispose();
    assertNoLeaks(server);
  });

  test('many tasks of one parent all reject when it goes, with no listener warning', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const lead = await agents.create({ id: 'lead' });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const tasks = Array.from({ length: 50 }, () => agents.runTask({ parent: lead.agent, fn: () => new Promise<void>(() => undefined) }));
      await tick();
      expect(inspect(lead.agent.ctx).children).toHaveLength(50);
      await lead.dispose();
      const settled = await Promise.allSettled(tasks);
      expect(settled.every((s) => s.status === 'rejected' && s.reason instanceof ContextDisposedError)).toBe(true);
      await tick();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
    await server.dispose();
    assertNoLeaks(server);
  });
});

describe('bad options', () => {
  test('a missing fn, a fn that is not a function or options that are not an object are TypeErrors, rejected, with nothing made', async () => {
    const server = await agentServer();
    const agents = server.createContext().get(Agents);
    const setup = jest.fn();
    const missing = agents.runTask({ setup } as never); // no synchronous throw
    await expect(missing).rejects.toThrow(TypeError);
    await expect(missing).rejects.toThrow(/Agents\.runTask\(\{ fn \}\): fn must be a function \(agent\) => result, got undefined/);
    await expect(agents.runTask({ fn: 'go' } as never)).rejects.toThrow(/fn must be a function .*got the string "go"/);
    await expect(agents.runTask(null as never)).rejects.toThrow(/Agents\.runTask\(options\): options must be an object/);
    const hostile = {
      get fn(): never {
        throw new Error('no peeking');
      },
    };
    await expect(agents.runTask(hostile as never)).rejects.toThrow(/Agents\.runTask\(options\): reading options\.fn threw: no peeking/);
    // the rest is checked as agents.create checks it, under runTask's name
    await expect(agents.runTask({ id: 'x', kind: 'nope', fn: () => 1 })).rejects.toThrow(/Agents\.runTask\(\{ id: "x", kind \}\): unknown agent kind "nope"/);
    agents.define('k', { setup: () => undefined });
    await expect(agents.runTask({ id: 'x', kind: 'k', setup: () => undefined, fn: () => 1 })).rejects.toThrow(/give either kind or setup, not both/);
    await expect(agents.runTask({ id: '', fn: () => 1 })).rejects.toThrow(/id must be a non-empty string/);
    await expect(agents.runTask({ parent: {} as never, fn: () => 1 })).rejects.toThrow(/parent must be an Agent/);
    expect(setup).not.toHaveBeenCalled();
    expect(agents.list()).toEqual([]);
    await server.dispose();
    assertNoLeaks(server);
  });
});

describe('no leak', () => {
  test('10,000 sequential tasks leave nothing in the registry, the parent or the owner context', async () => {
    const server = await agentServer(new ToolsPlugin());
    const app = server.createContext();
    const agents = app.get(Agents);
    const lead = (await agents.create({ id: 'lead' })).agent;
    agents.define('worker', {
      setup: (ctx) => void ctx.get(Tools).register({ name: 'work', description: 'Works', parameters: { type: 'object' }, execute: () => 'ok' }),
    });
    let sum = 0;
    for (let i = 0; i < 10_000; i++) {
      const kind = i % 2 === 0 ? { kind: 'worker' } : { setup: () => undefined };
      sum += await agents.runTask({ ...(i % 3 === 0 ? { parent: lead } : {}), ...kind, fn: () => 1 });
    }
    expect(sum).toBe(10_000);
    expect(agents.list()).toEqual([lead]);
    const tree = inspect(app);
    expect(tree.children).toHaveLength(1); // only the lead
    expect(tree.children[0].children).toEqual([]);
    expect(tree.children[0].agent?.listeners).toBe(0);
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  }, 60_000);
});
