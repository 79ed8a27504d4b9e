/**
 * One service process of the routing benchmark (bench/routing.bench.ts): a server with
 * durable sessions on a PostgreSQL store, serving the requests it reads from stdin (one JSON
 * object per line) the way a service behind a load balancer serves them: every message is
 * `sessions.open({ …, waitMs })`, then one turn, and the session stays open for the next
 * request (which may land on the other process).
 *
 * Argument: a JSON config `{ owner, url }`. Requests (`id` echoed in the reply):
 *
 * - `{ op: 'turn', sessionId, text, waitMs?, handoff?, hangMs? }`: open, then one turn that
 *   appends `text` and a reply (and, with `hangMs`, waits that long on `turnCtx.signal`,
 *   first replying `{ id, running: true }`);
 * - `{ op: 'open', sessionId, waitMs?, handoff? }`: open only;
 * - `{ op: 'close', sessionId }`: close the live session;
 * - `{ op: 'cancel', sessionId, reason? }`: `sessions.cancel`;
 * - `{ op: 'exit' }`: dispose the server, close the store, exit 0.
 *
 * Replies `{ id, ok, at, … }` where `at` holds wall-clock timestamps in ms with sub-ms
 * precision (`performance.timeOrigin + performance.now()`): comparable across the processes
 * of one machine, so the parent can time what happens between two of them.
 */
import { createInterface } from 'node:readline';
import { AgentsPlugin, Server, Sessions, SessionsPlugin, type DurableSession } from '../src/index.js';
import { PostgresSessionStore } from '../src/sessions/postgres.js';

/** What the parent passes as the first argument. */
interface WorkerConfig {
  readonly owner: string;
  readonly url: string;
}

/** One request read from stdin. */
interface Request {
  readonly id: number;
  readonly op: 'turn' | 'open' | 'close' | 'cancel' | 'exit';
  readonly sessionId: string;
  readonly text?: string;
  readonly waitMs?: number;
  readonly handoff?: 'idle' | 'never';
  readonly hangMs?: number;
  readonly reason?: string;
}

/** Wall-clock ms with sub-ms precision, comparable across processes of one machine. */
const wall = (): number => performance.timeOrigin + performance.now();

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const store = new PostgresSessionStore({ connectionString: config.url, max: 8 });
const server = new Server();
server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, owner: config.owner, handoff: 'idle', handoffGraceMs: 0 }));
await server.finish();
const sessions = server.createContext().get(Sessions);
const reply = (o: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(o) + '\n');

/** How many times a turn is retried on a session a handoff closed between its open and its turn. */
const CLOSED_RETRIES = 3;

function open(req: Request): Promise<DurableSession> {
  return sessions.open({
    agentId: `agent-${req.sessionId}`,
    sessionId: req.sessionId,
    waitMs: req.waitMs ?? 10_000,
    ...(req.handoff === undefined ? {} : { handoff: req.handoff }),
  });
}

async function turn(req: Request, recv: number): Promise<Record<string, unknown>> {
  const text = req.text ?? '';
  for (let retries = 0; ; retries++) {
    const durable = await open(req);
    const opened = wall();
    try {
      await durable.turn(
        async (turnCtx, session) => {
          session.history.append({ role: 'user', content: text });
          if (req.hangMs !== undefined) {
            reply({ id: req.id, running: true });
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, req.hangMs);
              turnCtx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
            });
          }
          session.history.append({ role: 'assistant', content: `re: ${text}` });
        },
        { key: text },
      );
    } catch (err) {
      // A turn on a session closed (by a handoff) right after this process opened it: open it again.
      if ((err as { code?: unknown }).code === 'SESSION_CLOSED' && retries < CLOSED_RETRIES) continue;
      throw err;
    }
    return { ok: true, at: { recv, opened, done: wall() }, opened: durable.opened, turn: durable.committedTurn, retries };
  }
}

async function handle(req: Request): Promise<void> {
  const recv = wall();
  try {
    switch (req.op) {
      case 'turn':
        reply({ id: req.id, ...(await turn(req, recv)) });
        return;
      case 'open': {
        const durable = await open(req);
        reply({ id: req.id, ok: true, at: { recv, opened: wall() }, opened: durable.opened });
        return;
      }
      case 'close': {
        const durable = sessions.get(req.sessionId);
        if (durable === undefined) throw new Error(`routing worker ${config.owner}: close: session "${req.sessionId}" is not open here`);
        await durable.close();
        reply({ id: req.id, ok: true, at: { recv, closed: wall() } });
        return;
      }
      case 'cancel': {
        const cancelled = await sessions.cancel(req.sessionId, req.reason);
        reply({ id: req.id, ok: true, at: { recv, cancelled: wall() }, cancelled });
        return;
      }
      default:
        throw new Error(`routing worker ${config.owner}: unknown op ${JSON.stringify(req.op)}`);
    }
  } catch (err) {
    const e = err as { code?: unknown; name?: unknown; message?: unknown; reason?: unknown };
    reply({ id: req.id, ok: false, at: { recv, failed: wall() }, code: e?.code ?? e?.name, message: String(e?.message ?? err), reason: e?.reason });
  }
}

reply({ ready: true, pid: process.pid });
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line) as Request;
  if (req.op === 'exit') {
    void server
      .dispose()
      .then(() => store.close())
      .then(() => process.exit(0));
    return;
  }
  void handle(req);
});
