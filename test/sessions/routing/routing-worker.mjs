/* global process, setTimeout, clearTimeout, URL, performance */
// A service process for test/sessions/routing/two-processes.test.ts: serves conversation
// requests read from stdin (one JSON object per line) the way a service behind a load
// balancer does, with `sessions.open({ …, waitMs })` and one turn per request, leaving the
// session open. Over the compiled sources (.build). Argument: a JSON config
// { owner, store: { kind: 'sqlite', path } | { kind: 'pg', url } }. Replies one JSON line per
// request: { id, ok, ms, opened?, turn?, code?, message? }.
import { createInterface } from 'node:readline';

const config = JSON.parse(process.argv[2]);
const build = new URL('../../../.build/src/', import.meta.url).href;
const { AgentsPlugin, Server, Sessions, SessionsPlugin } = await import(build + 'index.js');
const store =
  config.store.kind === 'sqlite'
    ? new (await import(build + 'sessions/sqlite.js')).SqliteSessionStore({ path: config.store.path, pollMs: 25 })
    : new (await import(build + 'sessions/postgres.js')).PostgresSessionStore({ connectionString: config.store.url, max: 4 });
const server = new Server();
server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, owner: config.owner, leaseTtlMs: 30_000, handoffGraceMs: 0 }));
await server.finish();
const sessions = server.createContext().get(Sessions);
const reply = (o) => process.stdout.write(JSON.stringify(o) + '\n');

async function handle(req) {
  const t0 = performance.now();
  try {
    if (req.op === 'cancel') {
      reply({ id: req.id, ok: true, cancelled: await sessions.cancel(req.sessionId, req.reason), ms: performance.now() - t0 });
      return;
    }
    const durable = sessions.get(req.sessionId) ?? (await sessions.open({ agentId: `agent-${req.sessionId}`, sessionId: req.sessionId, waitMs: 10_000 }));
    const opened = performance.now() - t0;
    await durable.turn(
      async (turnCtx, session) => {
        session.history.append({ role: 'user', content: req.text });
        if (req.hangMs) {
          reply({ id: req.id, running: true });
          await new Promise((resolve) => {
            const timer = setTimeout(resolve, req.hangMs);
            turnCtx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
          });
        }
        session.history.append({ role: 'assistant', content: `re: ${req.text}` });
      },
      { key: req.text },
    );
    reply({ id: req.id, ok: true, ms: performance.now() - t0, openMs: opened, opened: durable.opened, turn: durable.committedTurn });
  } catch (err) {
    reply({ id: req.id, ok: false, ms: performance.now() - t0, code: err?.code ?? err?.name, message: String(err?.message ?? err), reason: err?.reason });
  }
}

reply({ ready: true, pid: process.pid });
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  if (req.op === 'exit') {
    void server.dispose().then(() => store.close()).then(() => process.exit(0));
    return;
  }
  void handle(req);
});
