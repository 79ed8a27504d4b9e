/**
 * The span tree of a two-turn AI SDK tool loop in a durable session, with the AI SDK's own
 * telemetry on: polestar's `invoke_agent` / `execute_tool` / store spans, checked span by
 * span (names, attributes, parents, kind, status), nested where the SDK's spans put them.
 * Real parts only: the AI SDK's `generateText` with its `MockLanguageModelV3` and the tools
 * of `toAiSdkTools`, OpenTelemetry's SDK with an in-memory exporter and the
 * AsyncLocalStorage context manager, and a memory store whose `append` rejects.
 */
import { SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import {
  AgentsPlugin,
  MemorySessionStore,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  Tools,
  ToolsPlugin,
  TurnLog,
} from '../../src/index.js';
import { toAiSdkTools } from '../../src/adapters/ai-sdk.js';
import { instrumentPolestar } from '../../src/otel.js';
import { faultyStore } from '../sessions/faulty-store.js';
import { childNames, one, parentOf, pathOf, startTracing, type Tracing } from './harness.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
type Call = { id: string; name: string; input: unknown };

/** A model that makes `calls` in its first step and then answers with what the tools said. */
function scriptedModel(calls: readonly Call[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const results = options.prompt.filter((m) => m.role === 'tool');
      if (results.length === 0) {
        return {
          content: calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })),
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        };
      }
      const said = results.flatMap((m) => (m.role === 'tool' ? m.content : [])).flatMap((p) =>
        p.type === 'tool-result' && (p.output.type === 'text' || p.output.type === 'error-text') ? [`${p.toolName}: ${p.output.value}`] : [],
      );
      return { content: [{ type: 'text', text: said.join(' | ') }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
}

let tracing: Tracing;
beforeAll(() => (tracing = startTracing()));
afterAll(() => tracing.close());

describe('polestar-di/otel with the AI SDK', () => {
  test('two turns: every turn, tool call and store call is a span, under the right parent, with the GenAI attributes', async () => {
    const store = faultyStore(new MemorySessionStore(), {
      append: async () => {
        throw new SessionError('STORE_LOCKED', 'store.append(): the session row is locked by another transaction (the test holds it)');
      },
    });
    const server = new Server().addPlugins(new ToolsPlugin(), new AgentsPlugin(), new SessionsPlugin({ store }));
    await server.finish();
    const app = server.createContext();
    const tools = app.get(Tools);
    tools.register({
      name: 'lookup_order',
      description: 'Looks an order up',
      parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
      execute: ({ order }: { order: string }) => `${order}: shipped`,
    });
    tools.register({
      name: 'refund',
      description: 'Refunds an order',
      parameters: { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number' } }, required: ['order', 'amount'] },
      execute: ({ amount }: { order: string; amount: number }) => `refunded $${amount}`,
    });
    tools.register({
      name: 'save_note',
      description: 'Saves a note to the ticket at once',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: async ({ text }: { text: string }, _execution, ctx) => {
        ctx.get(TurnLog).record('note', { text });
        await ctx.get(TurnLog).flush(); // the store rejects this append
        return 'saved';
      },
    });
    const retire = tools.register({ name: 'cancel_order', description: 'Cancels an order', parameters: { type: 'object' }, execute: () => 'cancelled' });
    const session = await app.get(Sessions).create({ agentId: 'support', sessionId: 'ticket-7' });

    const aiTracer: Tracer = tracing.provider.getTracer('ai');
    const request: Tracer = tracing.provider.getTracer('http');
    const stop = instrumentPolestar({ tracerProvider: tracing.provider });
    const turn = (calls: readonly Call[], whileShown?: () => void) =>
      request.startActiveSpan('POST /tickets/ticket-7/messages', async (span) => {
        try {
          return await session.turn(async (turnCtx) => {
            const shown = toAiSdkTools(turnCtx.get(Tools), { ctx: turnCtx });
            whileShown?.();
            const out = await generateText({
              model: scriptedModel(calls),
              prompt: 'help',
              tools: shown,
              stopWhen: stepCountIs(3),
              experimental_telemetry: { isEnabled: true, tracer: aiTracer },
            });
            return out.text;
          });
        } finally {
          span.end();
        }
      });

    const first = await turn([
      { id: 'call_1', name: 'lookup_order', input: { order: 'A-1' } },
      { id: 'call_2', name: 'refund', input: { order: 'A-1' } }, // no amount: INVALID_ARGS
    ]);
    expect(first).toMatch(/^lookup_order: A-1: shipped \| refund: Error: invalid arguments for tool "refund"/);
    const second = await turn(
      [
        { id: 'call_3', name: 'save_note', input: { text: 'customer called' } },
        { id: 'call_4', name: 'cancel_order', input: {} },
      ],
      retire, // unregistered after the model was shown it: polestar answers UNKNOWN_TOOL
    );
    expect(second).toMatch(/^save_note: Error: .*locked by another transaction.* \| cancel_order: Error: unknown tool "cancel_order"$/);
    expect(session.committedTurn).toBe(2);

    const spans = tracing.exporter.getFinishedSpans();
    const requests = spans.filter((s) => s.name === 'POST /tickets/ticket-7/messages');
    const turns = spans.filter((s) => s.name === 'invoke_agent support');
    expect(requests).toHaveLength(2);
    expect(turns).toHaveLength(2);

    // ---- the turns: children of the request span active at session.turn(), parents of the SDK's spans
    for (const [i, t] of turns.entries()) {
      expect(parentOf(spans, t)).toBe(requests[i]);
      expect(t.kind).toBe(SpanKind.INTERNAL);
      expect(t.status.code).toBe(SpanStatusCode.UNSET);
      expect(t.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.id': 'support',
        'gen_ai.agent.name': 'support',
        'gen_ai.conversation.id': 'ticket-7',
        'polestar.turn.durable': true,
        'polestar.turn.number': i + 1,
        'polestar.turn.attempt': 1,
      });
      expect(t.attributes['error.type']).toBeUndefined();
      // the turn's function runs with the turn span active; polestar's own store calls of the turn are its children too
      expect(childNames(spans, t)).toEqual(['ai.generateText', 'polestar.store.begin', 'polestar.store.commit']);
    }

    // ---- the tool calls: each a child of the AI SDK's ai.toolCall span of that call
    const toolSpan = (name: string): ReadableSpan => one(spans, `execute_tool ${name}`);
    const expectUnder = (span: ReadableSpan, callId: string, turnIndex: number) => {
      const sdkCall = parentOf(spans, span) as ReadableSpan;
      expect(sdkCall.name).toBe('ai.toolCall');
      expect(sdkCall.attributes['ai.toolCall.id']).toBe(callId);
      expect(pathOf(spans, span)).toEqual(['POST /tickets/ticket-7/messages', 'invoke_agent support', 'ai.generateText', 'ai.toolCall', span.name]);
      expect(parentOf(spans, parentOf(spans, sdkCall) as ReadableSpan)).toBe(turns[turnIndex]);
    };

    const lookup = toolSpan('lookup_order');
    expectUnder(lookup, 'call_1', 0);
    expect(lookup.kind).toBe(SpanKind.INTERNAL);
    expect(lookup.status.code).toBe(SpanStatusCode.UNSET);
    expect(lookup.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup_order',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'gen_ai.agent.id': 'support',
    });

    const refund = toolSpan('refund'); // refused before any listener or body ran: still a span
    expectUnder(refund, 'call_2', 0);
    expect(refund.status.code).toBe(SpanStatusCode.ERROR);
    expect(refund.status.message).toMatch(/invalid arguments for tool "refund"/);
    expect(refund.attributes).toMatchObject({ 'gen_ai.tool.call.id': 'call_2', 'error.type': 'INVALID_ARGS' });

    const unknown = toolSpan('cancel_order');
    expectUnder(unknown, 'call_4', 1);
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);
    expect(unknown.attributes).toMatchObject({ 'gen_ai.tool.name': 'cancel_order', 'error.type': 'UNKNOWN_TOOL' });

    const note = toolSpan('save_note');
    expectUnder(note, 'call_3', 1);
    expect(note.status.code).toBe(SpanStatusCode.ERROR);
    expect(note.attributes['error.type']).toBe('EXECUTION_ERROR');

    // ---- the failing store call: made in the tool's body, so a child of its execute_tool span
    const append = one(spans, 'polestar.store.append');
    expect(parentOf(spans, append)).toBe(note);
    expect(append.kind).toBe(SpanKind.INTERNAL);
    expect(append.status.code).toBe(SpanStatusCode.ERROR);
    expect(append.attributes).toMatchObject({ 'polestar.store.operation': 'append', 'gen_ai.conversation.id': 'ticket-7', 'error.type': 'STORE_LOCKED' });
    expect(append.events.map((e) => e.name)).toContain('exception');

    // ---- every polestar span is in one of the two request traces; none is a root
    const polestar = spans.filter((s) => s.instrumentationScope.name === 'polestar-di');
    expect(polestar.length).toBeGreaterThanOrEqual(2 + 4 + 5);
    for (const s of polestar) expect(pathOf(spans, s)[0]).toBe('POST /tickets/ticket-7/messages');

    // ---- the disposer stops all spans: a third turn makes only the request's and the SDK's
    stop();
    tracing.exporter.reset();
    let activeInTurn: unknown;
    await request.startActiveSpan('POST /tickets/ticket-7/messages', async (span) => {
      await session.turn(async (turnCtx) => {
        activeInTurn = trace.getActiveSpan();
        await turnCtx.get(Tools).execute({ callId: 'call_5', name: 'lookup_order', arguments: { order: 'A-2' } });
      });
      span.end();
      expect(activeInTurn).toBe(span); // the wrapper is gone: the turn runs in the caller's context
    });
    expect(tracing.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['POST /tickets/ticket-7/messages']);
    stop(); // twice is harmless

    await server.dispose();
  });
});
