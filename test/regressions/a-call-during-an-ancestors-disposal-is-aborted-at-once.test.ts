/**
 * Bug (before SPEC 10.2): a tool call started from an `agent/disposed` listener, through
 * a turn of the agent being disposed, ran to completion. `execution.signal` aborts "when
 * the calling context's disposal starts": a call made after that point (here through a
 * turn made after the disposal's abort pass) is aborted at once and its body never runs.
 */
import { jest } from '@jest/globals';
import { Agents, AgentsPlugin, Events, Server, Tools, ToolsPlugin, type ToolResult } from '../../src/index.js';

test('a call made through a turn made after its agent’s disposal started is aborted at once', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const body = jest.fn(() => 'ran');
  app.get(Tools).register({ name: 'log', description: 'log', parameters: { type: 'object' }, execute: body });
  const h = await app.get(Agents).create({ id: 'a' });
  let late: Promise<ToolResult> | undefined;
  app.get(Events).on('agent/disposed', () => {
    // a turn made now: the disposal's abort pass is already over
    const turn = h.agent.ctx.child();
    late = turn.get(Tools).execute({ callId: '1', name: 'log', arguments: {} });
  });
  await h.dispose();
  const r = await (late as Promise<ToolResult>);
  expect(r.error?.code).toBe('EXECUTION_ERROR');
  expect(r.error?.message).toMatch(/^tool "log" was aborted: /);
  expect(body).not.toHaveBeenCalled();
  await server.dispose();
});
