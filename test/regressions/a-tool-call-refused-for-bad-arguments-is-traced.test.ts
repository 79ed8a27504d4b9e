/**
 * Tracing tool calls through `Events` missed every call refused for bad arguments: they
 * are answered `INVALID_ARGS` before `tools/pre-execute` fires. Fixed: every
 * `Tools.execute` is one `polestar:tool` trace, refused calls included.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { Events, POLESTAR_CHANNELS, Server, Tools, ToolsPlugin, type ToolTraceContext } from '../../src/index.js';

test('a call refused for bad arguments is traced, though tools/pre-execute never hears it', async () => {
  const server = new Server().addPlugins(new ToolsPlugin());
  await server.finish();
  const app = server.createContext();
  app.get(Tools).register({
    name: 'lookup',
    description: 'looks an order up',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
    execute: () => 'found',
  });
  const preExecute: string[] = [];
  app.get(Events).on('tools/pre-execute', (d, e) => {
    preExecute.push(e.callId);
    return d;
  });
  const traced: ToolTraceContext[] = [];
  const channel = diagnosticsChannel.tracingChannel<unknown, ToolTraceContext>(POLESTAR_CHANNELS.tool);
  const handlers = { start: () => {}, end: () => {}, asyncStart: () => {}, asyncEnd: (c: ToolTraceContext) => void traced.push(c), error: () => {} };
  channel.subscribe(handlers);
  try {
    await app.get(Tools).execute({ callId: 'bad', name: 'lookup', arguments: { id: 7 } });
    await app.get(Tools).execute({ callId: 'good', name: 'lookup', arguments: { id: '7' } });
  } finally {
    channel.unsubscribe(handlers);
  }
  expect(preExecute).toEqual(['good']);
  expect(traced.map((c) => [c.call.callId, c.result?.isError, c.result?.error?.code])).toEqual([
    ['bad', true, 'INVALID_ARGS'],
    ['good', false, undefined],
  ]);
  await server.dispose();
});
