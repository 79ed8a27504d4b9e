/* global process, URL, setTimeout, clearTimeout, setImmediate */
// A script for a-finished-routing-script-exits-promptly.test.ts, over the compiled sources
// (.build): it uses the routing API the way a short program does, disposes everything, prints
// "done" and must then exit by itself. Argument: a JSON config
// { store: { kind: 'memory' } | { kind: 'sqlite', path } | { kind: 'pg', url }, scenario }.
const config = JSON.parse(process.argv[2]);
const build = new URL('../../.build/src/', import.meta.url).href;
const { AgentsPlugin, MemorySessionStore, Server, Sessions, SessionsPlugin } = await import(build + 'index.js');

async function makeStore() {
  if (config.store.kind === 'memory') return new MemorySessionStore();
  if (config.store.kind === 'sqlite') return new (await import(build + 'sessions/sqlite.js')).SqliteSessionStore({ path: config.store.path, pollMs: 20 });
  return new (await import(build + 'sessions/postgres.js')).PostgresSessionStore({ connectionString: config.store.url, max: 2 });
}

async function serverOn(store, options) {
  const server = new Server();
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, leaseTtlMs: 10_000, ...options }));
  await server.finish();
  return { server, sessions: server.createContext().get(Sessions) };
}

const store = await makeStore();
const stores = [store];
const a = await serverOn(store, { owner: 'a', handoffGraceMs: 0, idleCloseMs: 60_000 });
const say = (d, text) => d.turn((_t, s) => void s.history.append({ role: 'user', content: text }));

if (config.scenario === 'open-turn-close') {
  const d = await a.sessions.open({ agentId: 'ag', sessionId: 's', waitMs: 1_000 });
  await say(d, 'hello');
  await d.close();
} else if (config.scenario === 'open-turn-no-close') {
  const d = await a.sessions.open({ agentId: 'ag', sessionId: 's' });
  await say(d, 'hello');
} else if (config.scenario === 'reopen-while-closing') {
  // A request for the session arrives while its close (not awaited) still gives the lease up.
  const d = await a.sessions.open({ agentId: 'ag', sessionId: 's' });
  await say(d, 'hello');
  const closing = d.close();
  let again;
  for (let i = 0; i < 50 && again === undefined; i++) {
    await new Promise((r) => setImmediate(r));
    // Once the close's disposal started, open waits for it.
    if (d.isDisposed) again = await a.sessions.open({ agentId: 'ag', sessionId: 's', waitMs: 1_000 });
  }
  if (again === undefined) throw new Error('the close never started its disposal');
  await closing;
  await say(again, 'again');
  await again.close();
} else if (config.scenario === 'handoff') {
  // A second "process" on the store takes the session over by waiting for it.
  const other = config.store.kind === 'memory' ? store : await makeStore();
  if (other !== store) stores.push(other);
  const b = await serverOn(other, { owner: 'b' });
  const d = await a.sessions.open({ agentId: 'ag', sessionId: 's' });
  await say(d, 'hello');
  const taken = await b.sessions.open({ agentId: 'ag', sessionId: 's', waitMs: 5_000 });
  await say(taken, 'again');
  await taken.close();
  await b.server.dispose();
} else if (config.scenario === 'cancel') {
  const other = config.store.kind === 'memory' ? store : await makeStore();
  if (other !== store) stores.push(other);
  const b = await serverOn(other, { owner: 'b' });
  const d = await a.sessions.open({ agentId: 'ag', sessionId: 's' });
  let started;
  const ready = new Promise((r) => (started = r));
  const turn = d
    .turn(async (turnCtx) => {
      started();
      // Like a model call: something of its own keeps the process alive until it is aborted.
      await new Promise((r) => {
        const timer = setTimeout(r, 10_000);
        turnCtx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          r();
        });
      });
    })
    .catch((e) => e);
  await ready;
  if ((await b.sessions.cancel('s', 'stop')) !== true) throw new Error('cancel answered false');
  const err = await turn;
  if (err?.code !== 'TURN_CANCELLED') throw new Error(`expected TURN_CANCELLED, got ${String(err)}`);
  await b.server.dispose();
} else if (config.scenario === 'wait-times-out') {
  const other = config.store.kind === 'memory' ? store : await makeStore();
  if (other !== store) stores.push(other);
  const b = await serverOn(other, { owner: 'b', handoff: 'never' });
  await a.sessions.open({ agentId: 'ag', sessionId: 's', handoff: 'never' });
  const err = await b.sessions.open({ agentId: 'ag', sessionId: 's', waitMs: 300 }).catch((e) => e);
  if (err?.code !== 'SESSION_BUSY') throw new Error(`expected SESSION_BUSY, got ${String(err)}`);
  await b.server.dispose();
} else {
  throw new Error(`unknown scenario ${config.scenario}`);
}
await a.server.dispose();
for (const s of stores) await s.close();
process.stdout.write('done\n');
