// The OpenTelemetry bridge parents polestar's own store calls of a durable turn (`begin`,
// `commit`) under that turn's span, found by session id. A second turn() on the same
// session while the first runs is refused (SESSION_BUSY), but its trace (and span) starts
// at the call: it replaced the first turn as "the turn in flight of the session" and, when
// it was refused, removed that entry, so the first turn's commit lost its parent.
import { trace, type Tracer } from '@opentelemetry/api';
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin } from '../../src/index.js';
import { instrumentPolestar } from '../../src/otel.js';
import { parentOf, startTracing, type Tracing } from '../otel/harness.js';

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

test('a turn refused while another runs leaves the running turn the parent of its commit', async () => {
  const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: new MemorySessionStore() }));
  await server.finish();
  const session = await server.createContext().get(Sessions).create({ agentId: 'support', sessionId: 'ticket-1' });
  let turnId = '';
  let refused: unknown;
  await tracer.startActiveSpan('request', async (request) => {
    await session.turn(async () => {
      turnId = trace.getActiveSpan()?.spanContext().spanId ?? '';
      refused = await session.turn(async () => undefined).catch((e: unknown) => e);
    });
    request.end();
  });
  expect(refused).toMatchObject({ code: 'SESSION_BUSY' });
  const spans = tracing.exporter.getFinishedSpans();
  const turns = spans.filter((s) => s.name === 'invoke_agent support');
  expect(turns).toHaveLength(2);
  for (const op of ['begin', 'commit']) {
    const calls = spans.filter((s) => s.name === `polestar.store.${op}`);
    expect(calls.map((c) => parentOf(spans, c)?.spanContext().spanId)).toEqual([turnId]);
  }
  await server.dispose();
});
