/**
 * The life of the OpenTelemetry bridge: `PolestarInstrumentation` as OpenTelemetry's
 * `Instrumentation` (enable, disable, setTracerProvider, config), several at once, bad
 * options, and its own failures, which go to a logger and never into a turn or a tool call.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { trace, type MeterProvider, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  Agents,
  AgentsPlugin,
  MemorySessionStore,
  Server,
  Sessions,
  SessionsPlugin,
  Tools,
  ToolsPlugin,
  openSession,
  type Logger,
  type SystemContext,
} from '../../src/index.js';
import { INSTRUMENTATION_NAME, PolestarInstrumentation, SEMCONV_SCHEMA_URL, instrumentPolestar, type PolestarInstrumentationConfig } from '../../src/otel.js';
import { nth, startTracing, type Tracing } from './harness.js';

let tracing: Tracing;
beforeAll(() => (tracing = startTracing()));
afterAll(() => tracing.close());
beforeEach(() => tracing.exporter.reset());

function memoryProvider(): { provider: BasicTracerProvider; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) };
}

async function toolServer(options?: ConstructorParameters<typeof Server>[0]): Promise<{ server: Server; app: SystemContext }> {
  const server = new Server(options).addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({ name: 'echo', description: 'Echoes', parameters: { type: 'object' }, execute: (args) => args as never });
  return { server, app };
}

const call = (app: SystemContext, callId = 'c1') => app.get(Tools).execute({ callId, name: 'echo', arguments: { said: callId } });
const names = (exporter: InMemorySpanExporter) => exporter.getFinishedSpans().map((s) => s.name);

/** OpenTelemetry's `Instrumentation` interface (@opentelemetry/instrumentation 0.2xx), as published. */
interface OtelInstrumentation<ConfigType extends { enabled?: boolean } = { enabled?: boolean }> {
  instrumentationName: string;
  instrumentationVersion: string;
  disable(): void;
  enable(): void;
  setTracerProvider(tracerProvider: TracerProvider): void;
  setMeterProvider(meterProvider: MeterProvider): void;
  setConfig(config: ConfigType): void;
  getConfig(): ConfigType;
}

describe('PolestarInstrumentation, as an OpenTelemetry Instrumentation', () => {
  test('it type-checks as one (registerInstrumentations and the Node SDK take it)', () => {
    const instrumentation: OtelInstrumentation<PolestarInstrumentationConfig> = new PolestarInstrumentation({ enabled: false });
    const plain: OtelInstrumentation = instrumentation;
    expect(plain.getConfig()).toEqual({ enabled: false });
  });

  test('it names itself, starts enabled on the global provider, and disable/enable/setTracerProvider do what they say', async () => {
    const { server, app } = await toolServer();
    const global = memoryProvider();
    expect(trace.setGlobalTracerProvider(global.provider)).toBe(true);
    try {
      const instrumentation = new PolestarInstrumentation();
      expect(instrumentation.instrumentationName).toBe(INSTRUMENTATION_NAME);
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      expect(instrumentation.instrumentationVersion).toBe(pkg.version); // keep INSTRUMENTATION_VERSION in step with a release
      expect(instrumentation.isEnabled).toBe(true);
      await call(app, 'one');
      expect(names(global.exporter)).toEqual(['execute_tool echo']);
      expect(nth(global.exporter.getFinishedSpans(), 0).instrumentationScope).toEqual({ name: 'polestar-di', version: instrumentation.instrumentationVersion, schemaUrl: SEMCONV_SCHEMA_URL });

      instrumentation.disable();
      instrumentation.disable();
      await call(app, 'two');
      expect(names(global.exporter)).toEqual(['execute_tool echo']);

      const other = memoryProvider();
      instrumentation.setTracerProvider(other.provider); // registerInstrumentations does this, then enable()
      instrumentation.enable();
      instrumentation.enable();
      await call(app, 'three');
      expect(names(global.exporter)).toHaveLength(1);
      expect(other.exporter.getFinishedSpans().map((s) => s.attributes['gen_ai.tool.call.id'])).toEqual(['three']);
      instrumentation.disable();
    } finally {
      trace.disable();
    }
    await server.dispose();
  });

  test('config: enabled: false waits for enable(); getConfig returns a copy; setMeterProvider is accepted', async () => {
    const { server, app } = await toolServer();
    const instrumentation = new PolestarInstrumentation({ enabled: false, storeSpans: false });
    instrumentation.setTracerProvider(tracing.provider);
    instrumentation.setMeterProvider({ getMeter: () => undefined as never });
    expect(instrumentation.isEnabled).toBe(false);
    await call(app);
    expect(names(tracing.exporter)).toEqual([]);
    const config = instrumentation.getConfig();
    expect(config).toEqual({ enabled: false, storeSpans: false });
    config.storeSpans = true;
    expect(instrumentation.getConfig().storeSpans).toBe(false);
    instrumentation.setConfig({ enabled: true });
    expect(instrumentation.getConfig()).toEqual({ enabled: true });
    instrumentation.enable();
    await call(app);
    expect(names(tracing.exporter)).toEqual(['execute_tool echo']);
    instrumentation.disable();
    await server.dispose();
  });

  test('storeSpans: false makes no store span, and the turn spans are unchanged', async () => {
    const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: new MemorySessionStore() }));
    await server.finish();
    const stop = instrumentPolestar({ tracerProvider: tracing.provider, storeSpans: false });
    const request = tracing.provider.getTracer('test');
    await request.startActiveSpan('request', async (span) => {
      const session = await server.createContext().get(Sessions).create({ agentId: 'a', sessionId: 's' });
      await session.turn(async () => 'done');
      span.end();
    });
    stop();
    expect(names(tracing.exporter).sort()).toEqual(['invoke_agent a', 'request']);
    await server.dispose();
  });

  test('two instrumentations at once each get every span; the body sees the innermost; removing one leaves the other whole', async () => {
    const { server, app } = await toolServer();
    const a = memoryProvider();
    const b = memoryProvider();
    const stopA = instrumentPolestar({ tracerProvider: a.provider });
    const stopB = instrumentPolestar({ tracerProvider: b.provider });
    const { agent } = await app.get(Agents).create({ id: 'x' });
    const session = openSession(agent);
    let seen: string | undefined;
    await session.turn(async () => void (seen = trace.getActiveSpan()?.spanContext().spanId));
    expect(names(a.exporter)).toEqual(['invoke_agent x']);
    expect(names(b.exporter)).toEqual(['invoke_agent x']);
    expect(seen).toBe(nth(b.exporter.getFinishedSpans(), 0).spanContext().spanId);

    stopB();
    await session.turn(async () => void (seen = trace.getActiveSpan()?.spanContext().spanId));
    expect(names(a.exporter)).toEqual(['invoke_agent x', 'invoke_agent x']);
    expect(names(b.exporter)).toEqual(['invoke_agent x']);
    expect(seen).toBe(nth(a.exporter.getFinishedSpans(), 1).spanContext().spanId);

    stopA();
    stopA();
    await session.turn(async () => void (seen = trace.getActiveSpan()?.spanContext().spanId));
    expect(names(a.exporter)).toHaveLength(2);
    expect(seen).toBeUndefined();
    await session.dispose();
    await server.dispose();
  });
});

describe('agent kinds', () => {
  test('an agent made from a kind before the instrumentation was enabled still gets invoke_agent {kind}', async () => {
    const { server, app } = await toolServer();
    const agents = app.get(Agents);
    agents.define('researcher', { setup: () => undefined });
    const { agent } = await agents.create({ id: 'r-1', kind: 'researcher' }); // nothing subscribed yet
    const stop = instrumentPolestar({ tracerProvider: tracing.provider });
    try {
      await openSession(agent).turn(() => 'answer');
    } finally {
      stop();
    }
    const [turn] = tracing.exporter.getFinishedSpans();
    expect(turn?.name).toBe('invoke_agent researcher');
    expect(turn?.attributes).toMatchObject({ 'gen_ai.agent.name': 'researcher', 'gen_ai.agent.id': 'r-1' });
    await server.dispose();
  });
});

describe('the disposer', () => {
  test('a turn in flight at dispose still ends its span when it settles; then no channel has a subscriber left', async () => {
    const { server, app } = await toolServer();
    const { agent } = await app.get(Agents).create({ id: 'slow' });
    const session = openSession(agent);
    const channels = ['polestar:agent', 'polestar:turn', 'polestar:tool', 'polestar:store'].map((name) => diagnosticsChannel.tracingChannel(name));
    const subscribed = () => channels.map((c) => c.hasSubscribers);
    expect(subscribed()).toEqual([false, false, false, false]);
    const stop = instrumentPolestar({ tracerProvider: tracing.provider });
    expect(subscribed()).toEqual([true, true, true, true]);
    let release!: () => void;
    const pending = session.turn(() => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setImmediate(r));
    stop();
    await call(app, 'during'); // made after the disposer: no span
    expect(names(tracing.exporter)).toEqual([]);
    expect(subscribed()).toEqual([true, true, true, true]); // the handlers that end spans wait for the turn's
    release();
    await pending;
    expect(names(tracing.exporter)).toEqual(['invoke_agent slow']);
    expect(subscribed()).toEqual([false, false, false, false]);
    await session.dispose();
    await server.dispose();
  });
});

describe('bad options', () => {
  test('a logger without warn or error, or a tracer provider without getTracer, is a TypeError naming it', () => {
    expect(() => instrumentPolestar({ logger: { warn: () => undefined } as unknown as Logger })).toThrow(/instrumentPolestar\(options\): logger has no error\(message, data\?\) method/);
    expect(() => instrumentPolestar({ logger: { error: () => undefined } as unknown as Logger })).toThrow(/logger has no warn/);
    expect(() => instrumentPolestar({ logger: 'console' as unknown as Logger })).toThrow(TypeError);
    expect(() => instrumentPolestar({ tracerProvider: {} as TracerProvider })).toThrow(/tracerProvider has no getTracer/);
    expect(() => new PolestarInstrumentation({ logger: {} as Logger })).toThrow(/new PolestarInstrumentation\(config\): logger has no warn/);
    const instrumentation = new PolestarInstrumentation({ enabled: false });
    expect(() => instrumentation.setTracerProvider(null as unknown as TracerProvider)).toThrow(TypeError);
    expect(() => instrumentation.setConfig({ logger: { warn: 1 } as unknown as Logger })).toThrow(/setConfig\(config\): logger has no warn/);
  });
});

describe('its own failures', () => {
  /** A tracer provider whose tracer fails to start a span, as a broken exporter setup would. */
  const brokenProvider: TracerProvider = {
    getTracer: () => ({ startSpan: () => { throw new Error('the span processor is shut down'); } }) as unknown as Tracer,
  };

  test('never reach a turn or a tool call: they go to the logger given, else to the server logger', async () => {
    const serverLog: string[] = [];
    const serverLogger: Logger = { warn: (m) => serverLog.push(`warn ${m}`), error: (m) => serverLog.push(`error ${m}`) };
    const { server, app } = await toolServer({ logger: serverLogger });
    const { agent } = await app.get(Agents).create({ id: 'x' });
    const session = openSession(agent);

    const given: unknown[] = [];
    let stop = instrumentPolestar({ tracerProvider: brokenProvider, logger: { warn: () => undefined, error: (m, data) => given.push({ m, data }) } });
    expect(await session.turn(async (turnCtx) => (await call(turnCtx)).content)).toBe('{"said":"c1"}');
    stop();
    expect(given).toHaveLength(2); // the turn's span and the tool call's
    expect((given[0] as { m: string }).m).toMatch(/^polestar-di\/otel: could not trace a polestar call \(the span processor is shut down\); the call itself is unaffected/);
    expect(serverLog).toEqual([]);

    stop = instrumentPolestar({ tracerProvider: brokenProvider });
    expect((await call(app, 'c2')).isError).toBe(false);
    stop();
    expect(serverLog).toHaveLength(1);
    expect(serverLog[0]).toMatch(/^error polestar-di\/otel: could not trace/);

    const throwing = instrumentPolestar({ tracerProvider: brokenProvider, logger: { warn: () => undefined, error: () => { throw new Error('logger down'); } } });
    expect((await call(app, 'c3')).isError).toBe(false); // a logger that throws changes nothing either
    throwing();
    await session.dispose();
    await server.dispose();
  });
});
