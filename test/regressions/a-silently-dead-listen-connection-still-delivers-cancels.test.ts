/**
 * Found by a fault hunt of the PostgreSQL wake-ups. A holder hears the cancels and handoff
 * requests addressed to it only through its LISTEN connection while that connection is "up":
 * in 'notify' mode the router never polls the request rows. Bug: a LISTEN connection that
 * dies silently (no FIN, no RST: a NAT or firewall idle timeout, a partition, a frozen proxy)
 * still looks up, since it is idle by design and nothing checks it (TCP keep-alive at the
 * system default probes after two hours), so a cancel from another process is recorded,
 * `cancel()` answers `true`, and the turn is never aborted (SPEC 13.2: on PostgreSQL within
 * about a second). The waits are not hurt (they retry every second), only requests.
 */
import { createServer, Socket, type Server as NetServer } from 'node:net';
import { SessionError, Sessions } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { serverOn, untilAborted, type Harness } from '../sessions/harness.js';
import { createTestDatabase, describePg, pgTarget } from '../sessions/pg-target.js';

const target = await pgTarget();

/**
 * A TCP forwarder to PostgreSQL whose connections can go silent: `freeze()` stops the bytes of
 * the connections open at that moment (no socket is closed, as when a NAT forgets them); new
 * connections work.
 */
async function freezableProxy(to: URL): Promise<{ port: number; freeze(): void; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const frozen = new WeakSet<Socket>();
  const server: NetServer = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(to.port || 5432), to.hostname);
    sockets.push(client, upstream);
    client.on('data', (b) => void (frozen.has(client) || upstream.write(b)));
    upstream.on('data', (b) => void (frozen.has(client) || client.write(b)));
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    freeze: () => {
      for (const s of sockets) frozen.add(s);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describePg(target)('a LISTEN connection that died silently', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await db?.drop();
  });

  test('a cancel from another process still reaches the turn within a few seconds', async () => {
    if (!target.ok) return;
    db = await createTestDatabase(target.adminUrl, 'deadlisten');
    const url = new URL(db.url);
    const proxy = await freezableProxy(url);
    cleanups.push(() => proxy.close());
    const listenUrl = new URL(db.url);
    listenUrl.hostname = '127.0.0.1';
    listenUrl.port = String(proxy.port);
    // The holder's LISTEN connection goes through the proxy; its pool does not.
    const sa = new PostgresSessionStore({ connectionString: db.url, listen: listenUrl.href, max: 2 });
    const sb = new PostgresSessionStore({ connectionString: db.url, max: 2 });
    cleanups.push(() => sa.close(), () => sb.close());
    const a: Harness = await serverOn(sa, { owner: 'a', leaseTtlMs: 30_000 });
    const b: Harness = await serverOn(sb, { owner: 'b', leaseTtlMs: 30_000 });
    cleanups.push(() => a.server.dispose(), () => b.server.dispose());
    const d = await a.ctx.get(Sessions).open({ agentId: 'ag', sessionId: 's' });
    // The holder's LISTEN connection is up ('notify'): a cancel arrives at once.
    const hang = () =>
      d
        .turn(async (turnCtx) => {
          await untilAborted(turnCtx.signal, 15_000);
        })
        .catch((e: unknown) => e);
    const until = async (ok: () => Promise<boolean>): Promise<void> => {
      const end = Date.now() + 5_000;
      while (!(await ok()) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    };
    const first = hang();
    await until(async () => (await sb.load('s')).open !== undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect(await b.ctx.get(Sessions).cancel('s', 'one')).toBe(true);
    expect(await first).toMatchObject({ code: 'TURN_CANCELLED' });

    // The LISTEN connection goes silent; nothing tells the holder.
    proxy.freeze();
    const second = hang();
    await until(async () => (await sb.load('s')).open !== undefined);
    const t0 = performance.now();
    expect(await b.ctx.get(Sessions).cancel('s', 'two')).toBe(true);
    const err = await second;
    expect(err).toBeInstanceOf(SessionError);
    expect(err).toMatchObject({ code: 'TURN_CANCELLED', reason: 'two' });
    expect(performance.now() - t0).toBeLessThan(5_000);
  }, 40_000);
});
