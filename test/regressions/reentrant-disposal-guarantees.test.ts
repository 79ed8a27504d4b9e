/**
 * Guarantees at area boundaries that had no test: disposal reached from inside a
 * running pipeline or from inside an agent's own event listeners leaves nothing alive.
 */
import {
  Agents, AgentsPlugin, Events, Server, SystemContext, Tools, ToolsPlugin, createScope, parallel, system, token, type Agent,
} from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';
import { probe } from '../../src/testing/probe.js';

async function world(): Promise<{ server: Server; app: SystemContext }> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  return { server, app: server.createContext() };
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const tool = (name: string) => ({ name, description: name, parameters: { type: 'object' }, execute: () => 'ok' });

test('parallel: the parent disposed while branches run: execute rejects, branch contexts are disposed, nothing leaks', async () => {
  const { server, app } = await world();
  const ctx = app.child();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen: SystemContext[] = [];
  const N = token<number>('N');
  const slow = system([], async () => {
    await gate;
    return 1;
  }, { name: 'slow', output: N });
  const grab = system([], () => void 0, { name: 'grab' });
  const p = ctx.execute([parallel([grab, slow], [slow])]);
  p.catch(() => undefined);
  await tick();
  expect(probe.liveChildren(ctx).length).toBe(2);
  for (const c of probe.liveChildren(ctx)) seen.push(c);
  // the disposal awaits the running systems (SPEC 10.2/10.5: runs are tracked in-flight work)
  const disposing = ctx.dispose();
  expect(seen.every((c) => c.isDisposed)).toBe(true);
  release();
  await expect(p).rejects.toThrow(/disposed/);
  await disposing;
  await app.dispose();
  assertNoLeaks(server);
  await server.dispose();
});

test('an agent/created listener that disposes the new agent: create rejects, disposed is paired, id free, nothing leaks', async () => {
  const { server, app } = await world();
  const log: string[] = [];
  const events = app.get(Events);
  events.on('agent/disposed', (a: Agent) => void log.push(`disposed:${a.id}`));
  const off = events.on('agent/created', (a: Agent) => {
    log.push(`created:${a.id}`);
    void a.ctx.dispose();
  });
  const agents = app.get(Agents);
  await expect(agents.create({ id: 'a', setup: (c) => void c.get(Tools).register(tool('t')) })).rejects.toThrow(/agent "a"/);
  expect(log).toEqual(['created:a', 'disposed:a']);
  expect(agents.get('a')).toBeUndefined();
  off();
  const again = await agents.create({ id: 'a' });
  await again.dispose();
  await app.dispose();
  assertNoLeaks(server);
  await server.dispose();
});

test('registrations, children and scopes made through agent.ctx by its own agent/disposed listener are undone', async () => {
  const { server, app } = await world();
  let made: string[] = [];
  const h = await app.get(Agents).create({
    id: 'a',
    setup: (c) => {
      c.get(Events).on('agent/disposed', () => {
        c.get(Tools).register(tool('late'));
        c.child().get(Tools).register(tool('late-child'));
        createScope(c, { id: 'inner' }).ctx.get(Tools).register(tool('late-inner'));
        made = probe.registrationLeaks(server).filter((l) => l.startsWith('tool "late'));
      });
    },
  });
  await h.dispose();
  // the listener did register all three (they were alive while it ran)...
  expect(made.sort()).toEqual(['tool "late" of scope a', 'tool "late-child" of scope a', 'tool "late-inner" of scope inner']);
  // ...and the disposal undid them
  expect(probe.registrationLeaks(server)).toEqual([]);
  // the agent's key stopped being live when its disposal started: reading by it is refused (SPEC 10.7)
  expect(() => app.get(Tools).get('late', h.agent)).toThrow(TypeError);
  await app.dispose();
  assertNoLeaks(server);
  await server.dispose();
});

test('a tools/result observer that disposes its own agent: the call still resolves, the agent is gone, nothing leaks', async () => {
  const { server, app } = await world();
  const h = await app.get(Agents).create({
    id: 'a',
    setup: (c) => {
      c.get(Tools).register(tool('t'));
      c.get(Events).on('tools/result', () => c.dispose());
    },
  });
  const r = await h.agent.ctx.get(Tools).execute({ callId: '1', name: 't', arguments: {} });
  expect(r).toEqual({ callId: '1', content: 'ok', isError: false, output: 'ok' });
  expect(h.agent.isDisposed).toBe(true);
  expect(app.get(Agents).get('a')).toBeUndefined();
  await app.dispose();
  assertNoLeaks(server);
  await server.dispose();
});
