/**
 * Bug (found while adding `registerLocal` factories that receive their context): a
 * context stored as a local (`ctx.insert(SELF, ctx)`, or a turn holding its session) was
 * treated as a disposable the holder owns. Disposing the holder then called the held
 * context's `dispose()`, which for the holder itself or one of its ancestors is the very
 * disposal in progress: it waited for itself forever.
 * Fixed: a `SystemContext` held as a local is never owned; its parent (or the server)
 * disposes it. Likewise a local whose disposal returns the disposal in progress of the
 * holder or an ancestor (an `AgentHandle` held in its own agent's subtree) is not awaited.
 */
import { Server, token, type SystemContext } from '../../src/index.js';

const CTX = token<SystemContext>('CTX');

test('a context holding itself, or an ancestor, as a local is disposed normally', async () => {
  const server = new Server();
  server.registerLocal(CTX, (ctx) => ctx);
  await server.finish();
  const root = server.createContext();
  const session = root.child();
  const turn = session.child();
  turn.insert(CTX, session);
  const sibling = root.child();
  sibling.insert(token<SystemContext>('peer'), session);
  const done = Promise.all([turn.dispose(), root.dispose()]);
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('disposal waited for itself')), 5_000).unref());
  await Promise.race([done, timeout]);
  expect([root, session, turn, sibling].every((c) => c.isDisposed)).toBe(true);
  expect(server.liveContexts).toBe(0);
  await server.dispose();
}, 20_000);

test('an agent handle held as a local in its own agent’s subtree: the agent’s disposal does not wait for itself', async () => {
  const { Agents, AgentsPlugin } = await import('../../src/index.js');
  const server = new Server();
  server.addPlugins(new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const h = await app.get(Agents).create({ id: 'a' });
  h.agent.ctx.child().insert(h);
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('disposal waited for itself')), 5_000).unref());
  await Promise.race([h.dispose(), timeout]);
  expect(h.agent.isDisposed).toBe(true);
  await server.dispose();
}, 20_000);
