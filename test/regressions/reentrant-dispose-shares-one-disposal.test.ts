/**
 * Issue 8 #4. Bug: `dispose()` called synchronously while the first disposal of the same
 * context was already running its first synchronous step (a cleanup of the context, a
 * cleanup of a descendant, an `agent/disposed` listener) started a second disposal: the
 * caller got a different promise, and cleanups and locals ran twice. The memoized promise
 * was stored only after that first step had returned.
 * Fixed: the promise is memoized before anything runs; every re-entrant call gets it.
 */
import { Agents, AgentsPlugin, Events, Server, token, type Agent } from '../../src/index.js';

class Conn {
  closed = 0;
  [Symbol.dispose](): void {
    this.closed++;
  }
}
const CONN = token<Conn>('CONN');

async function finished(plugins = false): Promise<Server> {
  const server = new Server();
  if (plugins) server.addPlugins(new AgentsPlugin());
  await server.finish();
  return server;
}

test('dispose() called from the context’s own synchronous cleanup returns the same promise; everything runs once', async () => {
  const server = await finished();
  const ctx = server.createContext();
  const conn = new Conn();
  ctx.insert(CONN, conn);
  let cleanups = 0;
  let inner: Promise<void> | undefined;
  ctx.onDispose(() => {
    cleanups++;
    inner = ctx.dispose();
  });
  const outer = ctx.dispose();
  await outer;
  expect(inner).toBe(outer);
  expect(cleanups).toBe(1);
  expect(conn.closed).toBe(1);
  await server.dispose();
});

test('the parent’s dispose() called from a descendant’s cleanup (reached by the parent’s disposal) returns the parent’s promise', async () => {
  const server = await finished();
  const parent = server.createContext();
  const child = parent.child();
  const grandchild = child.child();
  const conns = [new Conn(), new Conn(), new Conn()];
  parent.insert(CONN, conns[0]);
  child.insert(CONN, conns[1]);
  grandchild.insert(CONN, conns[2]);
  const seen: Promise<void>[] = [];
  let childCleanups = 0;
  let parentCleanups = 0;
  grandchild.onDispose(() => {
    seen.push(parent.dispose(), child.dispose(), grandchild.dispose());
  });
  child.onDispose(() => void childCleanups++);
  parent.onDispose(() => void parentCleanups++);
  const outer = parent.dispose();
  await outer;
  expect(seen[0]).toBe(outer);
  // the descendants' own memoized promises: the same on every call
  expect(child.dispose()).toBe(seen[1]);
  expect(grandchild.dispose()).toBe(seen[2]);
  expect([childCleanups, parentCleanups]).toEqual([1, 1]);
  expect(conns.map((c) => c.closed)).toEqual([1, 1, 1]);
  await server.dispose();
});

test('agent.ctx.dispose() called from its own agent/disposed listener returns the same promise; the agent is torn down once', async () => {
  const server = await finished(true);
  const app = server.createContext();
  const conn = new Conn();
  let announced = 0;
  let inner: Promise<void> | undefined;
  app.get(Events).on('agent/disposed', (a: Agent) => {
    announced++;
    inner = a.ctx.dispose();
  });
  const h = await app.get(Agents).create({ id: 'a', setup: (c) => void c.insert(CONN, conn) });
  const outer = h.agent.ctx.dispose();
  await outer;
  expect(inner).toBe(outer);
  expect(announced).toBe(1);
  expect(conn.closed).toBe(1);
  await server.dispose();
});
