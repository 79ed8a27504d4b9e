/**
 * Tracing tool calls by hand through `Events` missed every call refused for bad arguments
 * or an unknown name: they are answered before `tools/pre-execute` fires. polestar-di/otel
 * reads the `polestar:tool` channel, which traces every `Tools.execute`, so each refused
 * call is an `execute_tool` span with status ERROR and its code as `error.type`.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { Events, Server, Tools, ToolsPlugin } from '../../src/index.js';
import { instrumentPolestar } from '../../src/otel.js';
import { startTracing } from '../otel/harness.js';

test('a call refused for bad arguments, or for an unknown tool, is still an execute_tool span', async () => {
  const tracing = startTracing();
  const stop = instrumentPolestar({ tracerProvider: tracing.provider });
  const server = new Server().addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({
    name: 'refund',
    description: 'Refunds an order',
    parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    execute: () => 'refunded',
  });
  const preExecute: string[] = [];
  app.get(Events).on('tools/pre-execute', (decision, execution) => (preExecute.push(execution.callId), decision));

  const invalid = await app.get(Tools).execute({ callId: 'bad-args', name: 'refund', arguments: { amount: 'all of it' } });
  const unknown = await app.get(Tools).execute({ callId: 'no-such-tool', name: 'refnud', arguments: {} });
  stop();

  expect([invalid.error?.code, unknown.error?.code]).toEqual(['INVALID_ARGS', 'UNKNOWN_TOOL']);
  expect(preExecute).toEqual([]); // what the hand-written wiring listened to never fired
  const spans = tracing.exporter.getFinishedSpans();
  expect(spans.map((s) => [s.name, s.attributes['gen_ai.tool.call.id'], s.status.code, s.attributes['error.type']])).toEqual([
    ['execute_tool refund', 'bad-args', SpanStatusCode.ERROR, 'INVALID_ARGS'],
    ['execute_tool refnud', 'no-such-tool', SpanStatusCode.ERROR, 'UNKNOWN_TOOL'],
  ]);
  await server.dispose();
  await tracing.close();
});
