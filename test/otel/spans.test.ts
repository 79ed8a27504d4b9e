/**
 * One test per span kind of polestar-di/otel: a turn (`invoke_agent`), a tool call
 * (`execute_tool`) and a session-store call (`polestar.store.<method>`), each checked for
 * its name, attributes, parent, kind and status, on a real tracer provider with an
 * in-memory exporter and the AsyncLocalStorage context manager.
 */
import { SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  Agents,
  AgentsPlugin,
  Events,
  MemorySessionStore,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  Tools,
  ToolsPlugin,
  openSession,
  type SystemContext,
} from '../../src/index.js';
import { instrumentPolestar } from '../../src/otel.js';
import { faultyStore } from '../sessions/faulty-store.js';
import { childNames, nth, one, parentOf, startTracing, type Tracing } from './harness.js';

let tracing: Tracing;
let tracer: Tracer;
let stop: () => void;
beforeAll(() => {
  tracing = startTracing();
  tracer = tracing.provider.getTracer('test');
  stop = instrumentPolestar({ tracerProvider: tracing.provider });
});
afterAll(async () => {
  stop();
  await tracing.close();
});
beforeEach(() => tracing.exporter.reset());

async function agentServer(): Promise<{ server: Server; app: SystemContext }> {
  const server = new Server().addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  return { server, app: server.createContext() };
}

/** Runs `fn` inside an active span named `name` and ends it. */
function within<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}

describe('invoke_agent: one span per turn', () => {
  test('a turn is a child of the span active at session.turn(), and the parent of spans made in its function', async () => {
    const { server, app } = await agentServer();
    const { agent } = await app.get(Agents).create({ id: 'researcher' });
    const session = openSession(agent);
    let activeInside: unknown;
    const out = await within('request', () =>
      session.turn(async () => {
        activeInside = trace.getActiveSpan();
        await new Promise((r) => setTimeout(r, 1));
        tracer.startActiveSpan('model call', (span) => span.end());
        return 'answer';
      }),
    );
    expect(out).toBe('answer');
    const spans = tracing.exporter.getFinishedSpans();
    const turn = one(spans, 'invoke_agent researcher');
    expect(parentOf(spans, turn)?.name).toBe('request');
    expect(childNames(spans, turn)).toEqual(['model call']);
    expect((activeInside as { spanContext(): { spanId: string } }).spanContext().spanId).toBe(turn.spanContext().spanId);
    expect(turn.kind).toBe(SpanKind.INTERNAL);
    expect(turn.status.code).toBe(SpanStatusCode.UNSET);
    expect(turn.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': 'researcher',
      'gen_ai.agent.name': 'researcher',
      'polestar.turn.durable': false,
    });
    await session.dispose();
    await server.dispose();
  });

  test('the turn of an agent made from a kind is invoke_agent {kind}, with gen_ai.agent.name the kind and gen_ai.agent.id the id', async () => {
    const { server, app } = await agentServer();
    const agents = app.get(Agents);
    agents.define('researcher', { setup: () => undefined });
    const { agent } = await agents.create({ id: 'r-1', kind: 'researcher' });
    await openSession(agent).turn(() => 'answer');
    await agents.runTask({ id: 't-1', kind: 'researcher', fn: (sub) => openSession(sub).turn(() => 'sub answer') });
    const turns = tracing.exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent researcher');
    expect(turns.map((t) => t.attributes)).toEqual([
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'r-1', 'gen_ai.agent.name': 'researcher', 'polestar.turn.durable': false },
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 't-1', 'gen_ai.agent.name': 'researcher', 'polestar.turn.durable': false },
    ]);
    expect(tracing.exporter.getFinishedSpans().some((s) => s.name === 'invoke_agent r-1')).toBe(false);
    await server.dispose();
  });

  test("a turn that rejects has status ERROR and error.type the error's code, else its name", async () => {
    const { server, app } = await agentServer();
    const { agent } = await app.get(Agents).create({ id: 'a' });
    const session = openSession(agent);
    const coded = Object.assign(new Error('the model quota is used up'), { code: 'QUOTA_EXCEEDED' });
    await expect(session.turn(() => Promise.reject(coded))).rejects.toBe(coded);
    await expect(session.turn(() => { throw new RangeError('step 9 of at most 8'); })).rejects.toThrow(RangeError);
    const turns = tracing.exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent a');
    expect(turns).toHaveLength(2);
    const [first, second] = [nth(turns, 0), nth(turns, 1)];
    expect(first.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the model quota is used up' });
    expect(first.attributes['error.type']).toBe('QUOTA_EXCEEDED');
    expect(first.events.map((e) => e.name)).toEqual(['exception']);
    expect(second.status.code).toBe(SpanStatusCode.ERROR);
    expect(second.attributes['error.type']).toBe('RangeError');
    await session.dispose();
    await server.dispose();
  });

  test('a subagent turn run by a tool body nests under that execute_tool span', async () => {
    const { server, app } = await agentServer();
    const agents = app.get(Agents);
    const { agent: lead } = await agents.create({ id: 'lead' });
    const { agent: helper } = await agents.create({ id: 'helper', parent: lead });
    app.get(Tools).register({
      name: 'ask_helper',
      description: 'Asks the helper',
      parameters: { type: 'object' },
      execute: () => openSession(helper).turn(async () => 'helped'),
    });
    const session = openSession(lead);
    const result = await session.turn((turnCtx) => turnCtx.get(Tools).execute({ callId: 'c1', name: 'ask_helper', arguments: {} }));
    expect(result.content).toBe('helped');
    const spans = tracing.exporter.getFinishedSpans();
    const sub = one(spans, 'invoke_agent helper');
    const call = one(spans, 'execute_tool ask_helper');
    expect(parentOf(spans, sub)).toBe(call);
    expect(parentOf(spans, call)).toBe(one(spans, 'invoke_agent lead'));
    expect(call.attributes['gen_ai.agent.id']).toBe('lead');
    await session.dispose();
    await server.dispose();
  });
});

describe('execute_tool: one span per Tools.execute, refused calls included', () => {
  test('each failure is an ERROR span with error.type its code; a body gets its span active', async () => {
    const { server, app } = await agentServer();
    const tools = app.get(Tools);
    let activeInBody: string | undefined;
    tools.register({
      name: 'search',
      description: 'Searches',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
      execute: ({ q }: { q: string }) => {
        activeInBody = trace.getActiveSpan()?.spanContext().spanId;
        return `hits for ${q}`;
      },
    });
    tools.register({ name: 'explode', description: 'Fails', parameters: { type: 'object' }, execute: () => { throw new Error('boom'); } });
    tools.register({ name: 'wire_money', description: 'Moves money', parameters: { type: 'object' }, execute: () => 'sent' });
    app.get(Events).on('tools/pre-execute', (decision, execution) => (execution.name === 'wire_money' ? { kind: 'deny', reason: 'not on weekends' } : decision));

    const results = await within('caller', async () => [
      await tools.execute({ callId: 'ok', name: 'search', arguments: { q: 'tides' } }),
      await tools.execute({ callId: 'unknown', name: 'nope', arguments: {} }),
      await tools.execute({ callId: 'invalid', name: 'search', arguments: { q: 7 } }),
      await tools.execute({ callId: 'denied', name: 'wire_money', arguments: {} }),
      await tools.execute({ callId: 'threw', name: 'explode', arguments: {} }),
    ]);
    const spans = tracing.exporter.getFinishedSpans();
    const caller = one(spans, 'caller');
    const calls = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(calls.map((s) => s.attributes['gen_ai.tool.call.id'])).toEqual(['ok', 'unknown', 'invalid', 'denied', 'threw']);
    for (const [i, span] of calls.entries()) {
      const result = nth(results, i);
      expect(parentOf(spans, span)).toBe(caller);
      expect(span.kind).toBe(SpanKind.INTERNAL);
      expect(span.name).toBe(`execute_tool ${span.attributes['gen_ai.tool.name'] as string}`);
      if (result.isError) {
        expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: result.error?.message });
        expect(span.attributes['error.type']).toBe(result.error?.code);
      } else {
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.attributes['error.type']).toBeUndefined();
      }
    }
    expect(calls.map((s) => s.attributes['error.type'] ?? 'ok')).toEqual(['ok', 'UNKNOWN_TOOL', 'INVALID_ARGS', 'DENIED', 'EXECUTION_ERROR']);
    expect(activeInBody).toBe(nth(calls, 0).spanContext().spanId);
    await server.dispose();
  });
});

describe('polestar.store.<method>: store calls made in a trace', () => {
  test('a failing store call is an ERROR span with the SessionError code, under the turn in flight of its session', async () => {
    const store = faultyStore(new MemorySessionStore(), {
      begin: async () => {
        throw new SessionError('STORE_LOCKED', 'store.begin(): the session row is locked by another transaction (the test holds it)');
      },
    });
    const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store }));
    await server.finish();
    const sessions = server.createContext().get(Sessions);

    await sessions.create({ agentId: 'support', sessionId: 'outside' }); // no active span: no store span
    expect(tracing.exporter.getFinishedSpans().filter((s) => s.name.startsWith('polestar.store.'))).toEqual([]);

    const session = await within('request', () => sessions.create({ agentId: 'billing', sessionId: 'ticket-9' }));
    let ran = false;
    const failure: unknown = await within('request', () => session.turn(async () => void (ran = true))).catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(failure).toBeInstanceOf(SessionError);

    const spans = tracing.exporter.getFinishedSpans();
    const [opening, turning] = spans.filter((s) => s.name === 'request');
    const create = one(spans, 'polestar.store.create');
    expect(parentOf(spans, create)).toBe(opening);
    expect(create.attributes).toEqual({ 'polestar.store.operation': 'create', 'gen_ai.conversation.id': 'ticket-9' });
    expect(create.status.code).toBe(SpanStatusCode.UNSET);

    const turn = one(spans, 'invoke_agent billing');
    expect(parentOf(spans, turn)).toBe(turning);
    expect(turn.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn.attributes['error.type']).toBe((failure as SessionError).code);
    expect(turn.attributes['gen_ai.conversation.id']).toBe('ticket-9');

    const begin = one(spans, 'polestar.store.begin');
    expect(parentOf(spans, begin)).toBe(turn);
    expect(begin.kind).toBe(SpanKind.INTERNAL);
    expect(begin.status.code).toBe(SpanStatusCode.ERROR);
    expect(begin.attributes['error.type']).toBe('STORE_LOCKED');
    await server.dispose();
  });
});
