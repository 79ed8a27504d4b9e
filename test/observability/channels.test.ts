/**
 * The tracing channels: polestar:agent, polestar:turn, polestar:tool and polestar:store on
 * node:diagnostics_channel, with tracePromise semantics, one context object per call, and
 * nothing built or published without a subscriber. Also the body wrapper the OpenTelemetry
 * bridge installs around a turn's function and a tool's body.
 */
import { jest } from '@jest/globals';
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import {
  Agents,
  AgentsPlugin,
  MemorySessionStore,
  POLESTAR_CHANNELS,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  Tools,
  ToolsPlugin,
  openSession,
  type AgentTraceContext,
  type SessionStore,
  type StoreTraceContext,
  type ToolResult,
  type ToolTraceContext,
  type TurnTraceContext,
} from '../../src/index.js';
import { setBodyWrapper } from '../../src/observability/wrap.js';
import { delegateStore } from '../sessions/harness.js';

type Event = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';
const EVENTS: readonly Event[] = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];

interface Seen<C> {
  readonly event: Event;
  readonly context: C;
  /** A copy of the context object as it was when the event was published. */
  readonly snapshot: Record<string, unknown>;
}

/** Subscribes to every event of one of polestar's channels; `off()` unsubscribes. */
function record<C extends object>(name: string): { seen: Seen<C>[]; off: () => void; contexts: () => C[] } {
  const seen: Seen<C>[] = [];
  const channel = diagnosticsChannel.tracingChannel<unknown, C>(name);
  const handlers = Object.fromEntries(EVENTS.map((event) => [event, (context: C) => void seen.push({ event, context, snapshot: { ...(context as Record<string, unknown>) } })]));
  channel.subscribe(handlers as never);
  return {
    seen,
    off: () => channel.unsubscribe(handlers as never),
    contexts: () => [...new Set(seen.map((s) => s.context))],
  };
}

/** The events each context object saw, in order. */
function sequences<C extends object>(seen: readonly Seen<C>[]): Event[][] {
  const by = new Map<C, Event[]>();
  for (const s of seen) {
    let list = by.get(s.context);
    if (list === undefined) by.set(s.context, (list = []));
    list.push(s.event);
  }
  return [...by.values()];
}

async function agentServer(store: SessionStore = new MemorySessionStore(), storeTimeoutMs?: number): Promise<Server> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin(), new SessionsPlugin(storeTimeoutMs === undefined ? { store } : { store, storeTimeoutMs }));
  await server.finish();
  return server;
}

const echo = {
  name: 'echo',
  description: 'echoes q',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
  execute: (args: { q: string }) => args.q,
};

test('the channel names are exported, frozen', () => {
  expect(POLESTAR_CHANNELS).toEqual({ agent: 'polestar:agent', turn: 'polestar:turn', tool: 'polestar:tool', store: 'polestar:store' });
  expect(Object.isFrozen(POLESTAR_CHANNELS)).toBe(true);
});

describe('polestar:tool', () => {
  test('every Tools.execute is one trace, refused, unknown and invalid calls included; an error result is a result, not an error', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const { agent } = await app.get(Agents).create({ id: 'desk', setup: (ctx) => void ctx.get(Tools).register(echo) });
    agent.ctx.get(Tools).guard((e) => (e.callId === 'deny' ? 'not this one' : undefined));
    const rec = record<ToolTraceContext>(POLESTAR_CHANNELS.tool);
    const results: ToolResult[] = [];
    try {
      const tools = agent.ctx.get(Tools);
      results.push(await tools.execute({ callId: 'ok', name: 'echo', arguments: { q: 'hi' } }));
      results.push(await tools.execute({ callId: 'deny', name: 'echo', arguments: { q: 'hi' } }));
      results.push(await tools.execute({ callId: 'unknown', name: 'nope', arguments: {} }));
      results.push(await tools.execute({ callId: 'invalid', name: 'echo', arguments: { q: 1 } }));
      results.push(await tools.execute(null as never));
    } finally {
      rec.off();
    }
    const contexts = rec.contexts();
    expect(contexts).toHaveLength(5);
    expect(sequences(rec.seen)).toEqual(Array(5).fill(['start', 'end', 'asyncStart', 'asyncEnd']));
    expect(contexts.map((c) => [c.call.callId, c.call.name, c.agentId, c.result?.error?.code ?? 'ok'])).toEqual([
      ['ok', 'echo', 'desk', 'ok'],
      ['deny', 'echo', 'desk', 'DENIED'],
      ['unknown', 'nope', 'desk', 'UNKNOWN_TOOL'],
      ['invalid', 'echo', 'desk', 'INVALID_ARGS'],
      ['', '', 'desk', 'INVALID_ARGS'],
    ]);
    // the result set on the context object is the very result the caller got
    contexts.forEach((c, i) => expect(c.result).toBe(results[i]));
    // at start the call is known and the result is not
    const starts = rec.seen.filter((s) => s.event === 'start');
    expect(starts.map((s) => [s.snapshot.result, (s.snapshot.call as { name: string }).name])).toEqual([
      [undefined, 'echo'], [undefined, 'echo'], [undefined, 'nope'], [undefined, 'echo'], [undefined, ''],
    ]);
    expect(contexts[0].call.arguments).toEqual({ q: 'hi' });
    await server.dispose();
  });

  test('start and end are published synchronously within the call; a call outside any agent has no agentId', async () => {
    const server = await agentServer();
    const app = server.createContext();
    app.get(Tools).register(echo);
    const rec = record<ToolTraceContext>(POLESTAR_CHANNELS.tool);
    try {
      const pending = app.get(Tools).execute({ callId: 'c1', name: 'echo', arguments: { q: 'x' } });
      expect(rec.seen.map((s) => s.event)).toEqual(['start', 'end']);
      await pending;
      expect(rec.seen.map((s) => s.event)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
      expect('agentId' in rec.seen[0].context).toBe(false);
    } finally {
      rec.off();
    }
    await server.dispose();
  });
});

describe('polestar:turn', () => {
  test('a plain turn of an agent session: { agentId, durable: false }, its result, and a failing turn as an error', async () => {
    const server = await agentServer();
    const { agent } = await server.createContext().get(Agents).create({ id: 'planner' });
    const session = openSession(agent);
    const rec = record<TurnTraceContext>(POLESTAR_CHANNELS.turn);
    const boom = new Error('boom');
    try {
      await expect(session.turn(() => 42)).resolves.toBe(42);
      await expect(session.turn(() => Promise.reject(boom))).rejects.toBe(boom);
    } finally {
      rec.off();
    }
    const [ok, failed] = rec.contexts();
    expect(rec.contexts()).toHaveLength(2);
    expect(ok).toEqual({ agentId: 'planner', durable: false, result: 42 });
    expect(failed).toEqual({ agentId: 'planner', durable: false, error: boom });
    expect(sequences(rec.seen)).toEqual([
      ['start', 'end', 'asyncStart', 'asyncEnd'],
      ['start', 'end', 'error', 'asyncStart', 'asyncEnd'],
    ]);
    await server.dispose();
  });

  test('a turn of a session opened under a context that is no agent publishes nothing', async () => {
    const server = await agentServer();
    const session = openSession(server.createContext());
    const rec = record<TurnTraceContext>(POLESTAR_CHANNELS.turn);
    try {
      await expect(session.turn(() => 'done')).resolves.toBe('done');
    } finally {
      rec.off();
    }
    expect(rec.seen).toEqual([]);
    await server.dispose();
  });

  test('a durable turn is one trace (not two), with sessionId, and turn/attempt set once begin resolved', async () => {
    const server = await agentServer();
    const durable = await server.createContext().get(Sessions).create({ agentId: 'support', sessionId: 'ticket-1' });
    const rec = record<TurnTraceContext>(POLESTAR_CHANNELS.turn);
    let inside: Record<string, unknown> | undefined;
    try {
      await durable.turn((_ctx, s) => {
        inside = { ...rec.seen[0].context };
        s.history.append({ role: 'user', content: 'hello' });
        return 'first';
      });
      await expect(durable.turn(() => Promise.reject(new Error('model down')))).rejects.toThrow('model down');
      await durable.turn(() => 'third');
    } finally {
      rec.off();
    }
    const contexts = rec.contexts();
    expect(contexts).toHaveLength(3);
    expect(rec.seen[0].snapshot).toEqual({ agentId: 'support', sessionId: 'ticket-1', durable: true });
    expect(inside).toEqual({ agentId: 'support', sessionId: 'ticket-1', durable: true, turn: 1, attempt: 1 });
    expect(contexts[0]).toEqual({ agentId: 'support', sessionId: 'ticket-1', durable: true, turn: 1, attempt: 1, result: 'first' });
    expect(contexts[1]).toMatchObject({ turn: 2, attempt: 1, durable: true, error: new Error('model down') });
    // the failed turn 2 was aborted: the next one is turn 2 again, a new attempt
    expect(contexts[2]).toMatchObject({ turn: 2, attempt: 2, result: 'third' });
    await server.dispose();
  });

  test('a durable turn refused at once (SESSION_CLOSED) is traced as an error, without turn or attempt', async () => {
    const server = await agentServer();
    const durable = await server.createContext().get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await durable.close();
    const rec = record<TurnTraceContext>(POLESTAR_CHANNELS.turn);
    try {
      await expect(durable.turn(() => 'late')).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    } finally {
      rec.off();
    }
    const contexts = rec.contexts();
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toEqual({ agentId: 'a', sessionId: 's', durable: true, error: expect.any(SessionError) });
    expect((contexts[0].error as SessionError).code).toBe('SESSION_CLOSED');
    await server.dispose();
  });
});

describe('polestar:agent', () => {
  test('create and dispose, whichever path disposes the agent; a failed create is an error', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const rec = record<AgentTraceContext>(POLESTAR_CHANNELS.agent);
    const broken = new Error('setup broke');
    let handle: unknown;
    try {
      const h = await app.get(Agents).create({ id: 'one' });
      handle = h;
      await h.dispose();
      const owner = app.child();
      await owner.get(Agents).create({ id: 'two' });
      await owner.dispose(); // disposed by its owner's disposal
      await expect(app.get(Agents).create({ id: 'three', setup: () => { throw broken; } })).rejects.toThrow(/setup failed/);
    } finally {
      rec.off();
    }
    const contexts = rec.contexts();
    expect(contexts.map((c) => [c.op, c.agentId])).toEqual([
      ['create', 'one'], ['dispose', 'one'],
      ['create', 'two'], ['dispose', 'two'],
      ['create', 'three'], ['dispose', 'three'], // the rollback of the failed create
    ]);
    expect(contexts[0].result).toBe(handle);
    expect(contexts[4].error).toMatchObject({ name: 'AgentError', cause: broken });
    expect(sequences(rec.seen)[4]).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    // a dispose's trace spans the whole teardown: it ends after the agent's context is disposed
    expect(sequences(rec.seen)[1]).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    await server.dispose();
  });

  test('the dispose trace ends once the agent context is disposed (its cleanups ran)', async () => {
    const server = await agentServer();
    const order: string[] = [];
    const { agent } = await server.createContext().get(Agents).create({ id: 'slow' });
    agent.ctx.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 5));
      order.push('cleanup');
    });
    const channel = diagnosticsChannel.tracingChannel<unknown, AgentTraceContext>(POLESTAR_CHANNELS.agent);
    const handlers = { start: () => void order.push('start'), end: () => void order.push('end'), asyncStart: () => {}, asyncEnd: () => void order.push('asyncEnd'), error: () => {} };
    channel.subscribe(handlers);
    try {
      await agent.ctx.dispose();
      await new Promise((r) => setTimeout(r, 1));
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(order).toEqual(['start', 'end', 'cleanup', 'asyncEnd']);
    await server.dispose();
  });
});

describe('polestar:agent: kinds', () => {
  test('an agent made from a kind carries kind on its create and dispose contexts; one without a kind has no kind key', async () => {
    const server = await agentServer();
    const app = server.createContext();
    const agents = app.get(Agents);
    agents.define('researcher', { setup: () => undefined });
    const rec = record<AgentTraceContext>(POLESTAR_CHANNELS.agent);
    try {
      const kinded = await agents.create({ id: 'r-1', kind: 'researcher' });
      await kinded.dispose();
      await agents.runTask({ id: 't-1', kind: 'researcher', fn: () => undefined });
      const plain = await agents.create({ id: 'p-1' });
      await plain.dispose();
    } finally {
      rec.off();
    }
    const contexts = rec.contexts();
    expect(contexts.map((c) => [c.op, c.agentId, c.kind])).toEqual([
      ['create', 'r-1', 'researcher'], ['dispose', 'r-1', 'researcher'],
      ['create', 't-1', 'researcher'], ['dispose', 't-1', 'researcher'],
      ['create', 'p-1', undefined], ['dispose', 'p-1', undefined],
    ]);
    // the kind is there from `start` on (a subscriber reads it as soon as the trace begins)
    const starts = rec.seen.filter((s) => s.event === 'start').map((s) => s.snapshot.kind);
    expect(starts).toEqual(['researcher', 'researcher', 'researcher', 'researcher', undefined, undefined]);
    expect('kind' in (contexts[4] as object)).toBe(false);
    await server.dispose();
  });
});

describe('polestar:store', () => {
  test('every store call the plugin makes: { op, sessionId? } and its result', async () => {
    const server = await agentServer();
    const rec = record<StoreTraceContext>(POLESTAR_CHANNELS.store);
    try {
      const sessions = server.createContext().get(Sessions);
      const durable = await sessions.create({ agentId: 'a', sessionId: 's1' });
      await durable.turn(() => 'x');
      await sessions.list();
      await durable.close();
    } finally {
      rec.off();
    }
    const ops = rec.contexts().map((c) => [c.op, c.sessionId]);
    expect(ops).toEqual(expect.arrayContaining([['create', 's1'], ['begin', 's1'], ['commit', 's1'], ['list', undefined], ['release', 's1']]));
    const list = rec.contexts().find((c) => c.op === 'list') as StoreTraceContext;
    expect('sessionId' in list).toBe(false);
    expect(list.result).toMatchObject({ items: [expect.objectContaining({ sessionId: 's1' })] });
    // create first asks whether the id is taken: that call rejects with the store's SESSION_NOT_FOUND
    const probe = rec.contexts().find((c) => c.op === 'checkpoints') as StoreTraceContext;
    expect(probe).toMatchObject({ sessionId: 's1', error: { name: 'SessionError', code: 'SESSION_NOT_FOUND' } });
    const seqs = sequences(rec.seen);
    rec.contexts().forEach((c, i) => expect(seqs[i]).toEqual(c === probe ? ['start', 'end', 'error', 'asyncStart', 'asyncEnd'] : ['start', 'end', 'asyncStart', 'asyncEnd']));
    await server.dispose();
  });

  test("a failing store call carries the store's SessionError, and a call past storeTimeoutMs the STORE_ERROR of its bound", async () => {
    const refusal = new SessionError('STORE_ERROR', 'store error: the database is down');
    const store = delegateStore(new MemorySessionStore(), {
      list: () => Promise.reject(refusal),
      pin: () => new Promise(() => undefined), // never answers
    });
    const server = await agentServer(store, 50);
    const rec = record<StoreTraceContext>(POLESTAR_CHANNELS.store);
    try {
      const sessions = server.createContext().get(Sessions);
      await expect(sessions.list()).rejects.toBe(refusal);
      const durable = await sessions.create({ agentId: 'a', sessionId: 's2' });
      await expect(durable.checkpoint('pinned')).rejects.toMatchObject({ code: 'STORE_ERROR', message: expect.stringMatching(/did not answer within 50 ms/) });
      await durable.close();
    } finally {
      rec.off();
    }
    const list = rec.contexts().find((c) => c.op === 'list') as StoreTraceContext;
    expect(list.error).toBe(refusal);
    const slow = rec.contexts().find((c) => c.op === 'pin') as StoreTraceContext;
    expect(slow).toMatchObject({ op: 'pin', sessionId: 's2', error: { code: 'STORE_ERROR', message: expect.stringMatching(/store\.pin\(\) for session "s2" did not answer/) } });
    expect(rec.contexts().filter((c) => 'error' in c).map((c) => c.op)).toEqual(['list', 'checkpoints', 'pin']);
    await server.dispose();
  });
});

describe('without subscribers', () => {
  test('nothing is traced: no tracePromise call, no context object, the body wrapper is never called', async () => {
    const proto = Object.getPrototypeOf(diagnosticsChannel.tracingChannel('polestar:probe')) as { tracePromise: (...a: unknown[]) => unknown };
    const traced = jest.spyOn(proto, 'tracePromise');
    const wrapped: string[] = [];
    setBodyWrapper((kind, _context, body) => {
      wrapped.push(kind);
      return body();
    });
    const run = async (): Promise<void> => {
      const server = await agentServer();
      const app = server.createContext();
      const h = await app.get(Agents).create({ id: 'quiet', setup: (ctx) => void ctx.get(Tools).register(echo) });
      await h.agent.ctx.get(Tools).execute({ callId: '1', name: 'echo', arguments: { q: 'a' } });
      await h.agent.ctx.get(Tools).execute({ callId: '2', name: 'missing', arguments: {} });
      await openSession(h.agent).turn(() => 1);
      const durable = await app.get(Sessions).create({ agentId: 'durable', sessionId: 'd' });
      await durable.turn(() => 2);
      await h.dispose();
      await server.dispose();
    };
    try {
      await run();
      expect(traced).not.toHaveBeenCalled();
      expect(wrapped).toEqual([]);
      // the same run with one subscriber per channel traces every call (so the probe above can fail)
      const recs = [POLESTAR_CHANNELS.agent, POLESTAR_CHANNELS.turn, POLESTAR_CHANNELS.tool, POLESTAR_CHANNELS.store].map((n) => record(n));
      try {
        await run();
      } finally {
        for (const r of recs) r.off();
      }
      const [agents, turns, tools, stores] = recs.map((r) => r.contexts().length);
      expect({ agents, turns, tools }).toEqual({ agents: 4, turns: 2, tools: 2 });
      expect(stores).toBeGreaterThan(3);
      expect(traced).toHaveBeenCalledTimes(agents + turns + tools + stores);
      expect(wrapped).toEqual(['tool', 'turn', 'turn']); // the unknown tool never reached a body
    } finally {
      setBodyWrapper(undefined);
      traced.mockRestore();
    }
  });
});

describe('the body wrapper', () => {
  test("runs a tool's body and a turn's function with the context object the channel published at start", async () => {
    const als = new AsyncLocalStorage<object>();
    const calls: { kind: string; context: object }[] = [];
    setBodyWrapper((kind, context, body) => {
      calls.push({ kind, context });
      return als.run(context, body);
    });
    const tools = record<ToolTraceContext>(POLESTAR_CHANNELS.tool);
    const turns = record<TurnTraceContext>(POLESTAR_CHANNELS.turn);
    try {
      const server = await agentServer();
      const app = server.createContext();
      const inBody: unknown[] = [];
      const { agent } = await app.get(Agents).create({
        id: 'w',
        setup: (ctx) =>
          void ctx.get(Tools).register({
            ...echo,
            execute: async (args: { q: string }) => {
              await Promise.resolve();
              inBody.push(als.getStore());
              return args.q;
            },
          }),
      });
      const result = await agent.ctx.get(Tools).execute({ callId: 't1', name: 'echo', arguments: { q: 'v' } });
      expect(result.content).toBe('v');
      await openSession(agent).turn(async () => {
        await Promise.resolve();
        inBody.push(als.getStore());
      });
      const durable = await app.get(Sessions).create({ agentId: 'dur', sessionId: 'ds' });
      let seenTurn: unknown;
      await durable.turn(() => {
        inBody.push(als.getStore());
        seenTurn = (als.getStore() as TurnTraceContext).turn;
      });
      await server.dispose();
      const published = [tools.contexts()[0], ...turns.contexts()];
      expect(calls.map((c) => c.kind)).toEqual(['tool', 'turn', 'turn']);
      calls.forEach((c, i) => expect(c.context).toBe(published[i]));
      inBody.forEach((store, i) => expect(store).toBe(published[i]));
      expect(seenTurn).toBe(1); // a durable turn's function runs once begin resolved
    } finally {
      tools.off();
      turns.off();
      setBodyWrapper(undefined);
    }
  });

  test('setBodyWrapper returns the wrapper it replaced and refuses a non-function', () => {
    const a = (_k: 'turn' | 'tool', _c: object, body: () => unknown): unknown => body();
    expect(setBodyWrapper(a)).toBeUndefined();
    expect(setBodyWrapper(undefined)).toBe(a);
    expect(() => setBodyWrapper(42 as never)).toThrow(TypeError);
  });
});
