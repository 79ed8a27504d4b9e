/* global process, setTimeout, console, URL */
// A child process of the fault suite (test/faults/*.test.ts): runs durable turns against a
// store through polestar's public API only, over the compiled sources (.build, or the
// directory named by POLESTAR_FAULTS_BUILD), so the test can kill it, freeze it, race it or
// cut its store away.
//
// Argument: one JSON config (see faults/support/procs.ts, WorkerConfig). It writes one JSON
// line per thing it saw to its own log, each fsync'd before it goes on (so a kill -9 loses
// no line about a turn it saw settle), and echoes the line on stdout for the test:
//   {t:'start', id, pid}
//   {t:'attempt', sid, mid, try}                 before turn(): try 1, or 2 for the retry
//   {t:'ack', sid, mid, try, turn}               turn() resolved; turn = committedTurn after
//   {t:'reject', sid, mid, try, code, message}   turn() rejected
//   {t:'resolved', sid, mid, try, outcome, turn} after COMMIT_UNKNOWN: resolvePending()'s answer
//   {t:'refused', sid, code, ms, message}        resume refused (retried); ms = how long it took
//   {t:'held', sid, from, to, lastAck}           it held the session from..to (wall clock); lastAck: its last
//                                                turn seen committed in that hold (null if none); clean: closed
//                                                with no turn rejected meanwhile (it held the lease until `to`)
//   {t:'stopping', sid}                          the commit hook is about to SIGSTOP this process
//   {t:'gave-up', sid}                          an open kept failing: it stops
//   {t:'done', acked, failed}
// Every message id is unique (`${id}-m${n}`); a failed message is retried once with the
// same id (a user pressing "send" again), so a message stored twice is detectable.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2]);
const buildDir = process.env.POLESTAR_FAULTS_BUILD || new URL('../../../.build/', import.meta.url).pathname;
const built = (p) => pathToFileURL(`${buildDir.replace(/\/$/, '')}/${p}`).href;
const { AgentsPlugin, Server, Sessions, SessionsPlugin } = await import(built('src/index.js'));

const fd = openSync(config.log, 'a');
function log(o) {
  const line = JSON.stringify(o) + '\n';
  writeSync(fd, line);
  fsyncSync(fd);
  process.stdout.write(line);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const codeOf = (err) => (err && typeof err === 'object' && typeof err.code === 'string' ? err.code : (err?.name ?? 'Error'));
const messageOf = (err) => String(err?.message ?? err).slice(0, 400);
const t0 = Date.now();
const deadline = t0 + config.deadlineMs;

/** The persisted local: one more per committed turn, so the checker can see the locals agree with the history. */
class Counter {
  n = 0;
}
const counterSerializer = {
  key: 'faults.counter',
  version: 1,
  scope: 'agent',
  serialize: (c) => ({ n: c.n }),
  deserialize: (j) => Object.assign(new Counter(), { n: j.n }),
};

/**
 * A structural pool over a real pg.Pool whose clients SIGSTOP this process right before
 * the COMMIT of the `stopAtCommit`-th turn commit (a transaction that inserted a checkpoint
 * into an existing session), so the process freezes inside that transaction, its row lock held.
 */
function pausingPool(pool, stopAtCommit, sessionId) {
  let turnCommits = 0;
  return {
    async connect() {
      const client = await pool.connect();
      let sql = [];
      return {
        query(text, values) {
          const s = typeof text === 'string' ? text : String(text?.text ?? '');
          if (/^\s*BEGIN\b/i.test(s)) sql = [];
          sql.push(s);
          const isCommit = /^\s*COMMIT\b/i.test(s) || /;\s*COMMIT\s*;?\s*$/i.test(s);
          if (isCommit) {
            const all = sql.join('\n');
            const turnCommit = /INSERT INTO polestar_checkpoints/i.test(all) && !/INSERT INTO polestar_sessions/i.test(all);
            sql = [];
            if (turnCommit && ++turnCommits === stopAtCommit) {
              log({ t: 'stopping', sid: sessionId, at: Date.now() });
              process.kill(process.pid, 'SIGSTOP');
            }
          }
          return client.query(text, values);
        },
        release(err) {
          return client.release(err);
        },
        on(...args) {
          return typeof client.on === 'function' ? client.on(...args) : undefined;
        },
        off(...args) {
          return typeof client.off === 'function' ? client.off(...args) : undefined;
        },
        removeListener(...args) {
          return typeof client.removeListener === 'function' ? client.removeListener(...args) : undefined;
        },
      };
    },
    on(...args) {
      return pool.on(...args);
    },
    end() {
      return pool.end();
    },
  };
}

async function makeStore() {
  const s = config.store;
  if (s.kind === 'sqlite') {
    const { SqliteSessionStore } = await import(built('src/sessions/sqlite.js'));
    return { store: new SqliteSessionStore({ path: s.path, ...(s.busyTimeoutMs !== undefined ? { busyTimeoutMs: s.busyTimeoutMs } : {}) }), end: async () => undefined };
  }
  const { PostgresSessionStore } = await import(built('src/sessions/postgres.js'));
  if (s.pool === 'user' || config.stopAtCommit !== undefined) {
    // A pool of the user's: the user attaches the pool's error listener, as pg asks.
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({ connectionString: s.url, max: s.max ?? 2 });
    pool.on('error', () => undefined);
    const given = config.stopAtCommit !== undefined ? pausingPool(pool, config.stopAtCommit, config.sessions[0].sessionId) : pool;
    return { store: new PostgresSessionStore({ pool: given }), end: () => pool.end() };
  }
  return { store: new PostgresSessionStore({ connectionString: s.url, max: s.max ?? 2 }), end: async () => undefined };
}

const { store, end } = await makeStore();
const server = new Server();
server.registerLocal(Counter, { per: 'agent' });
server.addPlugins(
  new AgentsPlugin(),
  new SessionsPlugin({
    store,
    leaseTtlMs: config.ttlMs,
    serializers: [[Counter, counterSerializer]],
    ...(config.storeTimeoutMs !== undefined ? { storeTimeoutMs: config.storeTimeoutMs } : {}),
    ...(config.owner !== undefined ? { owner: config.owner } : {}),
  }),
);
await server.finish();
const sessions = server.createContext().get(Sessions);
log({ t: 'start', id: config.id, pid: process.pid, at: Date.now() });

/** Open sessions of this worker, by id: { durable, from }. */
const open = new Map();

/** Resumes a session, retrying refusals that pass (a live lease, a lock, a store outage) until the open bound. */
async function ensureOpen(target) {
  const have = open.get(target.sessionId);
  if (have !== undefined && !have.durable.isDisposed) return have.durable;
  if (have !== undefined) {
    log({ t: 'held', sid: target.sessionId, from: have.from, to: Date.now(), lastAck: have.lastAck ?? null, end: 'disposed' });
    open.delete(target.sessionId);
  }
  const until = Math.min(deadline + (config.graceMs ?? 0), Date.now() + (config.openTimeoutMs ?? 30_000));
  for (;;) {
    const started = Date.now();
    try {
      const durable = await sessions.resume({ agentId: target.agentId, sessionId: target.sessionId });
      open.set(target.sessionId, { durable, from: Date.now() });
      return durable;
    } catch (err) {
      const code = codeOf(err);
      log({ t: 'refused', sid: target.sessionId, code, ms: Date.now() - started, message: messageOf(err) });
      if (!['SESSION_BUSY', 'STORE_LOCKED', 'STORE_ERROR', 'LEASE_LOST', 'COMMIT_UNKNOWN'].includes(code) || Date.now() > until) return undefined;
      await sleep(20 + Math.floor(Math.random() * 60));
    }
  }
}

async function closeOne(sessionId) {
  const have = open.get(sessionId);
  if (have === undefined) return;
  open.delete(sessionId);
  const to = Date.now();
  try {
    await have.durable.close();
    log({ t: 'held', sid: sessionId, from: have.from, to, lastAck: have.lastAck ?? null, clean: have.clean !== false, end: 'closed' });
  } catch (err) {
    log({ t: 'held', sid: sessionId, from: have.from, to, lastAck: have.lastAck ?? null, end: 'close-rejected', code: codeOf(err), message: messageOf(err) });
  }
}

/** Notes when the holder last saw a turn of the session commit (its last proof of holding the lease). */
function acknowledged(sessionId) {
  const have = open.get(sessionId);
  if (have !== undefined) have.lastAck = Date.now();
}

/** One try of one message: resolves to 'ack', 'failed' (known not committed) or 'unknown'. */
async function tryTurn(durable, target, mid, attempt, appFailure) {
  log({ t: 'attempt', sid: target.sessionId, mid, try: attempt, at: Date.now() });
  try {
    await durable.turn((turnCtx, session) => {
      session.history.append({ role: 'user', content: mid });
      turnCtx.get(Counter).n++;
      // An application failure (so the turn is aborted): the user's retry then goes through.
      if (appFailure) throw new Error(`the application failed on ${mid}`);
      session.history.append({ role: 'assistant', content: `ok ${mid}` });
    });
    log({ t: 'ack', sid: target.sessionId, mid, try: attempt, turn: durable.committedTurn, at: Date.now() });
    acknowledged(target.sessionId);
    return 'ack';
  } catch (err) {
    const code = codeOf(err);
    log({ t: 'reject', sid: target.sessionId, mid, try: attempt, code, message: messageOf(err), at: Date.now() });
    const have = open.get(target.sessionId);
    if (have !== undefined) have.clean = false;
    if (code !== 'COMMIT_UNKNOWN') return 'failed';
    if (typeof durable.resolvePending !== 'function') {
      log({ t: 'resolved', sid: target.sessionId, mid, try: attempt, outcome: 'no-resolvePending' });
      return 'unknown';
    }
    const until = Date.now() + (config.resolveTimeoutMs ?? 15_000);
    for (;;) {
      try {
        const outcome = await durable.resolvePending();
        log({ t: 'resolved', sid: target.sessionId, mid, try: attempt, outcome, turn: durable.committedTurn, at: Date.now() });
        if (outcome === 'committed') acknowledged(target.sessionId);
        return outcome === 'committed' ? 'ack' : outcome === 'not-committed' ? 'failed' : 'unknown';
      } catch (e) {
        const c = codeOf(e);
        if (c !== 'COMMIT_UNKNOWN' || Date.now() > until) {
          log({ t: 'resolved', sid: target.sessionId, mid, try: attempt, outcome: `rejected:${c}`, message: messageOf(e) });
          return 'unknown';
        }
        await sleep(200);
      }
    }
  }
}

// Racing workers start turning together.
if (config.startAt !== undefined) await sleep(Math.max(0, config.startAt - Date.now()));
let acked = 0;
let failed = 0;
const targets = config.sessions;
for (let i = 0; i < config.turns && Date.now() < deadline; i++) {
  const target = config.pick === 'random' ? targets[Math.floor(Math.random() * targets.length)] : targets[i % targets.length];
  const mid = `${config.id}-m${i + 1}`;
  let outcome = 'failed';
  let gaveUp = false;
  for (let attempt = 1; attempt <= 2 && outcome === 'failed'; attempt++) {
    const durable = await ensureOpen(target);
    if (durable === undefined) {
      gaveUp = true;
      break;
    }
    outcome = await tryTurn(durable, target, mid, attempt, attempt === 1 && config.failEvery > 0 && (i + 1) % config.failEvery === 0);
    if (outcome === 'failed' && durable.isDisposed) await closeOne(target.sessionId);
    // A user waits a moment before pressing "send" again (and before the next message).
    if (outcome !== 'ack') await sleep(config.retryDelayMs ?? 150);
  }
  if (outcome === 'ack') acked++;
  else failed++;
  if (gaveUp) {
    log({ t: 'gave-up', sid: target.sessionId, at: Date.now() });
    break;
  }
  if (config.mode === 'cycle') {
    if (config.holdMs) await sleep(config.holdMs);
    await closeOne(target.sessionId);
  }
  if (config.pauseMs) await sleep(config.pauseMs);
}
for (const sessionId of [...open.keys()]) await closeOne(sessionId);
log({ t: 'done', acked, failed, at: Date.now() });
try {
  await server.dispose();
  await store.close();
  await end();
} catch (err) {
  console.error(`worker ${config.id}: shutdown failed: ${messageOf(err)}`);
}
closeSync(fd);
process.exit(0);
