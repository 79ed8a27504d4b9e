/**
 * Bug: a Tools view (or an in-flight call) of a disposed agent context fell back to the
 * bare global layer. Disposing the agent removes its restrictions and guards, so
 * - a stale view kept by a zombie task of the agent ran global tools its
 *   `restrict({ allow: [] })` had hidden, and
 * - a call whose agent was disposed while `tools/pre-execute` (or a `tools/execute`
 *   wrapper) awaited skipped the agent's guard and ran the tool.
 * Fixed: a call made through a disposed context resolves no tool (UNKNOWN_TOOL), checked
 * at the start and again at dispatch; since SPEC 10.2 an in-flight call is aborted the
 * moment its calling context's disposal starts (EXECUTION_ERROR `tool "x" was aborted`).
 */
import { jest } from '@jest/globals';
import { Agents, AgentsPlugin, Events, Server, Tools, ToolsPlugin, type ToolExecution } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

const unknown = (callId: string, name: string) => ({
  callId,
  content: `Error: unknown tool "${name}"`,
  isError: true,
  error: { code: 'UNKNOWN_TOOL', message: `unknown tool "${name}"` },
});

async function world() {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const body = jest.fn(() => 'ran');
  app.get(Tools).register({ name: 'shell', description: 'runs a command', parameters: { type: 'object' }, execute: body });
  return { server, app, body };
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('a disposed context can not reach global tools its scope hid or guarded', () => {
  test('a stale view of a disposed agent does not run a global tool its restriction hid', async () => {
    const { server, app, body } = await world();
    const h = await app.get(Agents).create({ id: 'a', setup: (c) => void c.get(Tools).restrict({ allow: [] }) });
    const view = h.agent.ctx.get(Tools);
    const turnView = h.agent.ctx.child().get(Tools);
    expect(await view.execute({ callId: '1', name: 'shell', arguments: {} })).toEqual(unknown('1', 'shell'));
    await h.dispose();
    expect(await view.execute({ callId: '2', name: 'shell', arguments: {} })).toEqual(unknown('2', 'shell'));
    expect(await turnView.execute({ callId: '3', name: 'shell', arguments: {} })).toEqual(unknown('3', 'shell'));
    expect(body).not.toHaveBeenCalled();
    // a live context still runs it
    expect((await app.get(Tools).execute({ callId: '4', name: 'shell', arguments: {} })).content).toBe('ran');
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('an in-flight call does not skip the agent guard when the agent is disposed while pre-execute awaits', async () => {
    const { server, app, body } = await world();
    const g = gate();
    app.get(Events).on('tools/pre-execute' as string, async (d: unknown) => {
      await g.wait;
      return d;
    });
    const h = await app.get(Agents).create({ id: 'a', setup: (c) => void c.get(Tools).guard(() => 'no shell for agent a') });
    const turn = h.agent.ctx.child();
    const p = turn.get(Tools).execute({ callId: '1', name: 'shell', arguments: {} });
    await new Promise((r) => setImmediate(r));
    await h.dispose();
    g.open();
    expect((await p).error?.message).toMatch(/^tool "shell" was aborted: the disposal of the context at depth 1 \(agent "a"\) started/);
    expect(body).not.toHaveBeenCalled();
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('an in-flight call is not run when its context is disposed while a tools/execute wrapper awaits', async () => {
    const { server, app, body } = await world();
    const g = gate();
    app.get(Events).on('tools/execute', (next: (e: ToolExecution) => Promise<unknown>) => async (e: ToolExecution) => {
      await g.wait;
      return next(e);
    });
    const h = await app.get(Agents).create({ id: 'a' });
    const p = h.agent.ctx.get(Tools).execute({ callId: '1', name: 'shell', arguments: {} });
    await new Promise((r) => setImmediate(r));
    // the disposal aborts the call and awaits the wrapper (part of the call function)
    const disposed = h.dispose();
    g.open();
    await disposed;
    expect((await p).error?.message).toMatch(/^tool "shell" was aborted: /);
    expect(body).not.toHaveBeenCalled();
    await server.dispose();
  });
});
