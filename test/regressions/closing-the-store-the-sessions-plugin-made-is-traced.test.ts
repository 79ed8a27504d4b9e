/**
 * Every promise-returning store call the sessions plugin makes is one `polestar:store`
 * trace; the close of the store it made itself (at server disposal) bypassed the bounded
 * store the views use, so an APM never saw it. Fixed: that close is traced too.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { AgentsPlugin, POLESTAR_CHANNELS, Server, Sessions, SessionsPlugin, type StoreTraceContext } from '../../src/index.js';

test('the close of the store the plugin made is traced like its other store calls', async () => {
  const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin());
  await server.finish();
  const ops: string[] = [];
  const channel = diagnosticsChannel.tracingChannel<unknown, StoreTraceContext>(POLESTAR_CHANNELS.store);
  const handlers = { start: (c: StoreTraceContext) => void ops.push(c.op), end: () => {}, asyncStart: () => {}, asyncEnd: () => {}, error: () => {} };
  channel.subscribe(handlers);
  try {
    await server.createContext().get(Sessions).create({ agentId: 'a', sessionId: 's' });
    await server.dispose();
  } finally {
    channel.unsubscribe(handlers);
  }
  expect(ops).toContain('create');
  expect(ops).toContain('release');
  expect(ops.at(-1)).toBe('close');
});
