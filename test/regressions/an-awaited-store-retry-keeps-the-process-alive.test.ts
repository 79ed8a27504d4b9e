/**
 * A process whose only pending work was a durable session finding out how a commit ended
 * used to exit with code 13 ("unsettled top-level await") instead of getting its answer:
 * the retry pause between two status reads, and the bound of every store call, were
 * unref'd timers, so with the store's connections gone (a PostgreSQL restart) nothing
 * kept the event loop alive while `turn()` or `resolvePending()` was awaited. The fault
 * suite's restart scenario hit it under CI load. A timer the caller is waiting on now
 * keeps the process alive; background timers (the lease renewal) still do not.
 *
 * The child runs over the compiled sources (.build; npm test builds it in pretest) with a
 * store whose commit and first status reads fail at once, with no I/O left in flight.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR, assertBuilt } from '../faults/support/procs.js';

const CHILD = `
const [build, mode] = JSON.parse(process.argv[1]);
const { AgentsPlugin, MemorySessionStore, Server, SessionError, Sessions, SessionsPlugin } = await import(build + 'src/index.js');
/** Commits, then answers "unknown" (a lost reply) for the commit and for the first status reads. */
class LossyStore extends MemorySessionStore {
  lose = 0;
  async commit(lease, input) {
    const done = await super.commit(lease, input);
    if (this.lose > 0) { this.lose--; throw new SessionError('STORE_ERROR', 'the reply to COMMIT was lost'); }
    return done;
  }
  async attemptStatus(sessionId, attempt) {
    if (this.lose > 0) { this.lose--; throw new SessionError('STORE_ERROR', 'the connection is down'); }
    return super.attemptStatus(sessionId, attempt);
  }
}
const store = new LossyStore();
const server = new Server();
server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, storeTimeoutMs: 2000 }));
await server.finish();
const sessions = server.createContext().get(Sessions);
const s = await sessions.create({ agentId: 'a', sessionId: 's' });
// The commit's reply and the next status reads are lost; every failure is immediate.
store.lose = mode === 'turn' ? 3 : 1 + 3;
let outcome;
try {
  await s.turn((_ctx, session) => session.history.append({ role: 'user', content: 'hi' }));
  outcome = 'committed';
} catch (err) {
  if (err.code !== 'COMMIT_UNKNOWN') throw err;
  outcome = await s.resolvePending();
}
if (mode === 'turn' && outcome !== 'committed') throw new Error('expected the turn to commit, got ' + outcome);
console.log(JSON.stringify({ outcome, turn: s.committedTurn }));
await server.dispose();
`;

function runChild(mode: 'turn' | 'resolve'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const build = pathToFileURL(BUILD_DIR.endsWith('/') ? BUILD_DIR : `${BUILD_DIR}/`).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify([build, mode])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

beforeAll(() => assertBuilt());

test.each(['turn', 'resolve'] as const)('a commit whose outcome is found out after retries settles instead of exiting the process (%s)', async (mode) => {
  const { code, stdout, stderr } = await runChild(mode);
  expect({ code, stderr: stderr.trim() }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(stdout.trim())).toEqual({ outcome: 'committed', turn: 1 });
}, 30_000);
