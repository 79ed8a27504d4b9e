/* global process, setTimeout */
// A child process for test/sessions/process.test.ts: drives one durable session from its
// own process (compiled polestar from .build/src), so the parent can kill it, race it or
// freeze it. Argument: a JSON config. Output: one JSON object per line.
import { AgentsPlugin, Events, Server, Sessions, SessionsPlugin, TurnLog, inspect } from '../../.build/src/index.js';

const config = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
/** The owner of the lease a durable session's agent holds (throws when it holds none). */
const leaseOwner = (s) => inspect(s.agent.ctx).agent.lease.owner;

class Memory {
  count = 0;
}
const memorySerializer = {
  key: 'test.memory',
  version: 1,
  scope: 'agent',
  serialize: (m) => ({ count: m.count, notes: [] }),
  deserialize: (d) => Object.assign(new Memory(), { count: d.count }),
};

async function makeStore() {
  if (config.store.kind === 'sqlite') {
    const { SqliteSessionStore } = await import('../../.build/src/sessions/sqlite.js');
    return new SqliteSessionStore({ path: config.store.path });
  }
  const { PostgresSessionStore } = await import('../../.build/src/sessions/postgres.js');
  return new PostgresSessionStore({ connectionString: config.store.url, max: 2 });
}

const store = await makeStore();
const server = new Server();
server.registerLocal(Memory, { per: 'agent' });
server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, leaseTtlMs: config.ttlMs, serializers: [[Memory, memorySerializer]], unknownLocals: 'drop' }));
await server.finish();
const ctx = server.createContext();
const sessions = ctx.get(Sessions);
const { sessionId, agentId } = config;

const turn = (s, i) =>
  s.turn((turnCtx, session) => {
    session.history.append({ role: 'user', content: `turn ${i}` });
    turnCtx.get(Memory).count++;
  });

try {
  if (config.scenario === 'crash') {
    const s = await sessions.create({ agentId, sessionId });
    for (let i = 1; i <= config.turns; i++) await turn(s, i);
    say({ event: 'committed', turn: s.committedTurn });
    await s.turn(async (turnCtx, session) => {
      session.history.append({ role: 'user', content: 'never committed' });
      turnCtx.get(Memory).count = 1000;
      turnCtx.get(TurnLog).record('tool/call', { name: 'charge-card' });
      await turnCtx.get(TurnLog).flush();
      say({ event: 'mid-turn' });
      await new Promise(() => undefined);
    });
  } else if (config.scenario === 'hold') {
    let s;
    try {
      s = await sessions.resume({ agentId, sessionId });
    } catch (err) {
      say({ event: 'refused', code: err.code, holder: err.holder ?? null, message: err.message });
      await server.dispose();
      await store.close();
      process.exit(0);
    }
    say({ event: 'resumed', owner: leaseOwner(s) });
    process.stdin.resume();
    await new Promise((r) => process.stdin.on('end', r));
    await s.close();
    say({ event: 'closed' });
  } else if (config.scenario === 'stall') {
    const s = await sessions.resume({ agentId, sessionId });
    let leaseLost = null;
    ctx.get(Events).on('session/lease-lost', (p) => (leaseLost = p.error.code));
    const result = await s
      .turn(async (_turnCtx, session) => {
        say({ event: 'in-turn', owner: leaseOwner(s) });
        await new Promise((r) => setTimeout(r, config.stallMs));
        session.history.append({ role: 'user', content: 'from the stale owner' });
        return 'committed';
      })
      .catch((err) => err.code);
    await new Promise((r) => setTimeout(r, 50));
    say({ event: 'turn-result', result, leaseLost, disposed: s.isDisposed });
  }
} catch (err) {
  say({ event: 'error', code: err?.code ?? null, message: String(err?.message ?? err) });
}
await server.dispose().catch(() => undefined);
await store.close().catch(() => undefined);
process.exit(0);
