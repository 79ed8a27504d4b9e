/**
 * Found by a fault hunt of the PostgreSQL wake-ups. `PostgresSessionStore` opens its LISTEN
 * connection at the first `watch()` (the first session a `SessionsPlugin` publishes, or its
 * first wait). Bug: `store.close()` while that connection is still in its startup handshake
 * (a server that accepted the TCP connection and does not answer: overloaded, failing over,
 * or behind a stuck proxy) calls `pg.Client.end()`, which waits for the connect timeout of
 * the LISTEN connection (10 s), so a shutdown that awaits `store.close()` hangs that long.
 * Destroying the socket is not enough either: pg's `connect()` then never settles, so
 * `close()` must not await it.
 */
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';

let hole: NetServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((r) => (hole === undefined ? r() : hole.close(() => r())));
  hole = undefined;
});

test('store.close() while the LISTEN connection is in its startup handshake resolves at once', async () => {
  // Accepts connections and never answers: the handshake hangs.
  hole = createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => (hole as NetServer).listen(0, '127.0.0.1', r));
  const port = (hole.address() as { port: number }).port;
  const store = new PostgresSessionStore({ connectionString: `postgres://postgres@127.0.0.1:${port}/polestar`, max: 1 });
  const watch = store.watch(
    () => undefined,
    () => undefined,
  );
  // The LISTEN connection is connecting (not up yet: polled meanwhile).
  const deadline = Date.now() + 2_000;
  while (sockets.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(sockets.length).toBe(1);
  expect(watch.mode).toBe('poll');

  const t0 = performance.now();
  await store.close();
  expect(performance.now() - t0).toBeLessThan(1_000);
}, 20_000);
