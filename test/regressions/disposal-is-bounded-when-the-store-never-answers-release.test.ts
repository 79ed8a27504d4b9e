/**
 * Bug: `dispose()`, `close()` and `server.dispose()` never settled when the store never
 * answered `release()`.
 * Fixed: the release is bounded by the server's `disposeTimeoutMs` (and the plugin's
 * `storeTimeoutMs`); past it the disposal goes on and rejects naming the session and the
 * store call.
 */
import { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin } from '../../src/index.js';
import { faultyStore, never, settlesWithin } from '../sessions/faulty-store.js';

async function serverWithStuckRelease(store: MemorySessionStore, released: string[]): Promise<Server> {
  const stuck = faultyStore(store, {
    release: (_real, lease) => {
      released.push((lease as { sessionId: string }).sessionId);
      return never();
    },
  });
  const server = new Server({ disposeTimeoutMs: 80 });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: stuck }));
  await server.finish();
  return server;
}

const reason = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** The error itself, or the one of an AggregateError that names `sessionId`. */
function naming(err: unknown, sessionId: string): Error | undefined {
  const all = err instanceof AggregateError ? [err, ...(err.errors as unknown[])] : [err];
  return all.find((e): e is Error => e instanceof Error && e.message.includes(`"${sessionId}"`) && /store\.release\(\)/.test(e.message));
}

test('dispose(), close() and server.dispose() settle after disposeTimeoutMs when release() never answers, naming the session', async () => {
  const store = new MemorySessionStore();
  const released: string[] = [];
  const server = await serverWithStuckRelease(store, released);
  const sessions = server.createContext().get(Sessions);
  const a = await sessions.create({ agentId: 'a', sessionId: 'disposed' });
  const b = await sessions.create({ agentId: 'b', sessionId: 'closed' });
  await sessions.create({ agentId: 'c', sessionId: 'by-server' });

  const disposing = a.dispose();
  expect(await settlesWithin(disposing, 2_000)).toBe('settled');
  const err = await reason(disposing);
  expect(naming(err, 'disposed')?.message).toMatch(/disposeTimeoutMs/);

  const closing = b.close();
  expect(await settlesWithin(closing, 2_000)).toBe('settled');
  expect(naming(await reason(closing), 'closed')).toBeDefined();

  const serverDisposal = server.dispose();
  expect(await settlesWithin(serverDisposal, 2_000)).toBe('settled');
  expect(naming(await reason(serverDisposal), 'by-server')).toBeDefined();
  expect(released.sort()).toEqual(['by-server', 'closed', 'disposed']);
  await store.close();
});

test('the plugin storeTimeoutMs bounds release() too, when it is the smaller bound', async () => {
  const store = new MemorySessionStore();
  const stuck = faultyStore(store, { release: () => never() });
  const server = new Server({ disposeTimeoutMs: 5_000 });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: stuck, storeTimeoutMs: 60 }));
  await server.finish();
  const s = await server.createContext().get(Sessions).create({ agentId: 'a', sessionId: 's' });
  const started = Date.now();
  const err = await reason(s.dispose());
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(naming(err, 's')?.message).toMatch(/raise storeTimeoutMs or check the store/i);
  await server.dispose().catch(() => undefined);
  await store.close();
});
