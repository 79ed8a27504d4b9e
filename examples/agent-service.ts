/**
 * An agent service that runs as several processes behind a load balancer with no sticky
 * routing: a small JSON-over-HTTP server (node:http, bound to 127.0.0.1) whose conversations
 * are durable sessions in one shared store.
 *
 * Every request for a conversation calls `sessions.open({ agentId, sessionId, waitMs })`,
 * runs one `turn` and leaves the session open. So the next request that reaches the same
 * process is served live (no store read), and a request that reaches another process waits
 * up to `waitMs` while the holder hands the conversation over (it closes its idle session,
 * the waiter is woken and resumes it from the store). Each message carries an id, used as the
 * turn's `key`: a retried message is answered as a duplicate, never stored twice.
 * `POST /conversations/:id/cancel` aborts the conversation's turn in flight wherever it runs.
 * The agent (a scripted model, its tools, a persisted `Notes` local) is in
 * `support/agent-service-agent.ts`; the HTTP plumbing in `support/agent-service-http.ts`.
 *
 * Run: `npm run service`, or `npx tsc -p tsconfig.run.json && node .build/examples/agent-service.js`.
 * Options (or environment variables):
 * - `--db <file>` (`AGENT_SERVICE_DB`, default `./agent-service.db`): the SQLite file, shared by
 *   every process on this host; `--pg <url>` (`POLESTAR_PG_URL`): PostgreSQL instead, for
 *   processes on many machines.
 * - `--owner <id>` (`AGENT_SERVICE_OWNER`): this process's stable lease-owner id, e.g. the pod
 *   name. A process restarted with its old id takes its conversations back at once; two live
 *   processes must never share one. Without it, each start is a new owner.
 * - `--port <n>` (`AGENT_SERVICE_PORT`, default 0 = any free port; the URL is printed),
 *   `--wait-ms <ms>` (default 10,000), `--idle-close-ms <ms>` (default 300,000: an idle
 *   conversation closes and frees its memory), `--lease-ttl-ms <ms>` (default 30,000),
 *   `--poll-ms <ms>` (how often the store looks for handoff requests, releases and cancels),
 *   `--quiet` (no request log).
 *
 * `--self-test` (`npm run demo`) starts two service processes on one temporary store (an
 * SQLite file, or with `--pg <url>` a temporary database it creates and drops), drives
 * several conversations through both with no sticky routing, cancels a turn through the
 * other process, kills one process (SIGKILL) and restarts it with its owner id, checks every
 * stored history and prints what each request cost; see `support/agent-service-self-test.ts`.
 *
 * Endpoints (JSON in, JSON out; errors are `{ "error": { "code", "message" } }`):
 *
 * - `POST   /conversations/:id/messages` `{ text, messageId? }`: one turn (the conversation is
 *   created by its first message). 200 `{ reply, toolCalls, served, owner, timing, ... }`, or
 *   200 `{ duplicate: true }` for a `messageId` already answered; 409 `TURN_CANCELLED` when
 *   the turn was cancelled, 409 `SESSION_BUSY` when another process kept it past `waitMs`.
 * - `POST   /conversations/:id/cancel` `{ reason? }`: `{ cancelled }`, true when a turn was in flight.
 * - `GET    /conversations/:id`: the stored history (read from the store; it does not move the conversation).
 * - `DELETE /conversations/:id`: deletes the conversation (409 while another process holds it).
 * - `GET    /conversations`: the stored conversations.
 */
import { randomUUID } from 'node:crypto';
import {
  AgentsPlugin,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  ToolsPlugin,
  type ChatMessage,
  type DurableSession,
  type SessionStore,
} from 'polestar-di';
import { PostgresSessionStore } from 'polestar-di/sessions/postgres';
import { SqliteSessionStore } from 'polestar-di/sessions/sqlite';
import { ModelClient, Notes, ScriptedModel, agentSetup, answer, installAgent, notesSerializer } from './support/agent-service-agent.js';
import { HttpError, field, listen, notAllowed, type Reply } from './support/agent-service-http.js';
import { runSelfTest } from './support/agent-service-self-test.js';

/** Options of {@link startService}. */
export interface ServiceOptions {
  /** Where conversations are stored; this process and every other one serving them share it. */
  readonly store: SessionStore;
  /** This process's stable lease-owner id (`SessionsPlugin({ owner })`); a fresh one per start when omitted. */
  readonly owner?: string;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** How long a request waits for another process to hand its conversation over (default 10,000 ms). */
  readonly waitMs?: number;
  /** An idle conversation closes after this long (default 300,000 ms). */
  readonly idleCloseMs?: number;
  /** Lease time to live (the `SessionsPlugin` default, 30 s, when omitted). */
  readonly leaseTtlMs?: number;
  /** Where request log lines go; silent by default. */
  readonly log?: (line: string) => void;
}

/** A running service process. */
export interface RunningService {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The polestar server behind it. */
  readonly server: Server;
  /** Stops accepting requests and disposes the polestar server: every open conversation is closed and its lease released. */
  close(): Promise<void>;
}

/** How a request found its conversation: open here already, created, or resumed from the store (after a handoff or a restart). */
export type Served = 'live' | 'created' | 'resumed';

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Starts one service process; resolves once it listens. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const waitMs = options.waitMs ?? 10_000;
  const log = options.log ?? (() => undefined);
  const server = new Server();
  server.insertGlobal(ModelClient, new ScriptedModel());
  server.registerLocal(Notes, { per: 'agent' });
  server.addPlugins(
    new ToolsPlugin(),
    new AgentsPlugin(),
    new SessionsPlugin({
      store: options.store,
      serializers: [[Notes, notesSerializer]],
      idleCloseMs: options.idleCloseMs ?? 300_000,
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
      ...(options.leaseTtlMs !== undefined ? { leaseTtlMs: options.leaseTtlMs } : {}),
    }),
  );
  await server.finish();
  // One long-lived context owns every conversation (never a per-request one).
  const app = server.createContext();
  installAgent(app);
  const sessions = app.get(Sessions);
  const owner = options.owner ?? '(random)';

  /** One user message: open the conversation (live here, or from the store), run one turn, leave it open. */
  const message = async (id: string, body: unknown): Promise<Reply> => {
    const text = field(body, 'text');
    const messageId = field(body, 'messageId') ?? randomUUID();
    if (typeof text !== 'string' || text.length === 0 || text.length > 4000) {
      throw new HttpError(400, 'BAD_REQUEST', 'body must be { "text": "<1 to 4000 characters>", "messageId"?: "<id>" }');
    }
    if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 200) throw new HttpError(400, 'BAD_REQUEST', '"messageId" must be a string of 1 to 200 characters');
    const started = performance.now();
    // A session closed by a handoff or by idleCloseMs between open and turn: open it again.
    for (let attempt = 1; ; attempt++) {
      const before = sessions.get(id);
      let durable: DurableSession;
      try {
        durable = await sessions.open({ agentId: id, sessionId: id, setup: agentSetup, waitMs });
      } catch (err) {
        throw httpError(err, id);
      }
      const openMs = performance.now() - started;
      const served: Served = durable === before ? 'live' : durable.opened;
      try {
        const result = await durable.turn((turnCtx, session) => answer(turnCtx, session, text), { key: messageId, waitMs });
        const handledMs = performance.now() - started;
        return {
          status: 200,
          body: {
            conversation: id,
            messageId,
            turn: durable.committedTurn,
            ...result,
            served,
            owner,
            timing: { openMs: round(openMs), modelMs: round(result.modelMs), handledMs: round(handledMs), overheadMs: round(handledMs - result.modelMs) },
          },
        };
      } catch (err) {
        if (err instanceof SessionError && err.code === 'SESSION_CLOSED' && attempt < 3) continue;
        if (err instanceof SessionError && err.code === 'TURN_ALREADY_COMMITTED') {
          return { status: 200, body: { conversation: id, messageId, duplicate: true, turn: err.turn, owner } };
        }
        throw httpError(err, id);
      }
    }
  };

  /** Aborts the conversation's turn in flight, in this process or in the one holding it. */
  const cancel = async (id: string, body: unknown): Promise<Reply> => {
    const reason = field(body, 'reason') ?? 'cancelled by the client';
    if (typeof reason !== 'string' || reason.length === 0) throw new HttpError(400, 'BAD_REQUEST', '"reason" must be a non-empty string');
    return { status: 200, body: { conversation: id, cancelled: await sessions.cancel(id, reason).catch((err: unknown) => Promise.reject(httpError(err, id))) } };
  };

  /** The committed history, read from the store: reading never takes the conversation from its holder. */
  const history = async (id: string): Promise<Reply> => {
    const messages: ChatMessage[] = [];
    try {
      for await (const e of sessions.events(id)) {
        if (e.kind === 'history/append' && e.status === 'committed') messages.push(e.body as unknown as ChatMessage);
      }
    } catch (err) {
      throw httpError(err, id);
    }
    return { status: 200, body: { conversation: id, messages } };
  };

  const route = async (method: string, parts: readonly string[], body: unknown): Promise<Reply> => {
    if (parts[0] !== 'conversations' || parts.length > 3) throw new HttpError(404, 'NOT_FOUND', `no route ${method} /${parts.join('/')}`);
    if (parts.length === 1) {
      if (method !== 'GET') throw notAllowed(method, '/conversations', ['GET']);
      const page = await sessions.list({ limit: 100 });
      return { status: 200, body: { conversations: page.items.map((s) => ({ id: s.sessionId, committedTurn: s.committedTurn, updatedAt: s.updatedAt })) } };
    }
    const id = parts[1];
    if (!ID.test(id)) throw new HttpError(400, 'BAD_REQUEST', 'a conversation id is 1-64 letters, digits, "_" or "-"');
    if (parts.length === 2) {
      if (method === 'GET') return history(id);
      if (method === 'DELETE') {
        const deleted = await sessions.delete(id).catch((err: unknown) => Promise.reject(httpError(err, id)));
        if (!deleted) throw new HttpError(404, 'NOT_FOUND', `no conversation "${id}"`);
        return { status: 200, body: { conversation: id, deleted } };
      }
      throw notAllowed(method, '/conversations/:id', ['GET', 'DELETE']);
    }
    if (method !== 'POST') throw notAllowed(method, `/conversations/:id/${parts[2]}`, ['POST']);
    if (parts[2] === 'messages') return message(id, body);
    if (parts[2] === 'cancel') return cancel(id, body);
    throw new HttpError(404, 'NOT_FOUND', `no route ${method} /${parts.join('/')}`);
  };

  const http = await listen(options.port ?? 0, route, log);
  let closing: Promise<void> | undefined;
  return {
    url: http.url,
    server,
    close: () =>
      (closing ??= (async () => {
        await http.close();
        await server.dispose();
      })()),
  };
}

/** A `SessionError` as the HTTP answer a client can act on. */
function httpError(err: unknown, id: string): unknown {
  if (!(err instanceof SessionError)) return err;
  switch (err.code) {
    case 'SESSION_NOT_FOUND':
      return new HttpError(404, 'NOT_FOUND', `no conversation "${id}"`);
    case 'TURN_CANCELLED':
      return new HttpError(409, err.code, err.message, { reason: err.reason });
    case 'SESSION_BUSY':
      return new HttpError(409, err.code, err.message, {}, { 'retry-after': '1' });
    case 'SESSION_CLOSED':
    case 'STORE_LOCKED':
    case 'STORE_ERROR':
    case 'COMMIT_UNKNOWN':
      return new HttpError(503, err.code, err.message, {}, { 'retry-after': '1' });
    default:
      return err;
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

/** `--name value` from the command line, else the environment variable, else `fallback`. */
function option(name: string, env: string | undefined, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  const fromEnv = env === undefined ? undefined : process.env[env];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : fallback;
}

/** A numeric option; `undefined` when neither given nor defaulted. */
function msOption(name: string, env: string | undefined, fallback: string): number | undefined {
  const raw = option(name, env, fallback);
  if (raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number of milliseconds, got "${raw}"`);
  return n;
}

async function main(): Promise<void> {
  const pg = option('pg', 'POLESTAR_PG_URL', '');
  if (process.argv.includes('--self-test')) {
    process.exitCode = (await runSelfTest({ entry: process.argv[1], pg: pg === '' ? undefined : pg })) ? 0 : 1;
    return;
  }
  const port = msOption('port', 'AGENT_SERVICE_PORT', '0') ?? 0;
  if (port > 65535) throw new Error(`--port must be a port number, got ${port}`);
  const db = option('db', 'AGENT_SERVICE_DB', 'agent-service.db');
  const pollMs = msOption('poll-ms', undefined, '');
  const store: SessionStore =
    pg !== ''
      ? new PostgresSessionStore({ connectionString: pg, ...(pollMs !== undefined ? { pollMs } : {}) })
      : new SqliteSessionStore({ path: db, ...(pollMs !== undefined ? { pollMs } : {}) });
  const owner = option('owner', 'AGENT_SERVICE_OWNER', '');
  const service = await startService({
    store,
    owner: owner === '' ? undefined : owner,
    port,
    waitMs: msOption('wait-ms', undefined, '10000'),
    idleCloseMs: msOption('idle-close-ms', undefined, '300000'),
    leaseTtlMs: msOption('lease-ttl-ms', 'AGENT_SERVICE_LEASE_TTL_MS', ''),
    log: process.argv.includes('--quiet') ? undefined : (line) => console.log(line),
  });
  console.log(`agent service listening on ${service.url} (owner ${owner === '' ? '(random)' : owner}, conversations in ${pg !== '' ? 'PostgreSQL' : `SQLite file ${db}`})`);
  const stop = (): void => {
    void service
      .close()
      .then(() => store.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1]?.endsWith('agent-service.js')) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
