/**
 * An agent service: a small JSON-over-HTTP server (node:http, bound to 127.0.0.1) that
 * creates agents and subagents, sends them messages and deletes them. Every agent is a
 * polestar agent: its persona is a scoped prompt section, its allowed tools a scoped
 * restriction, its `note` tool a scoped registration, and it talks to a deterministic
 * fake model (a global, no network) that picks tool calls from the message text.
 *
 * Conversations persist: each agent's conversation is a durable session (SPEC §12, id = the
 * agent id, its spec kept as the session's meta) in an SQLite file (`--db <file>` or
 * `AGENT_SERVICE_DB`, default `./agent-service.db`), or in PostgreSQL when a URL is given
 * (`--pg <url>` or `POLESTAR_PG_URL`). A message to an agent this process does not hold
 * resumes its stored conversation (parent first), so a restarted or second process continues
 * it; a conversation still leased by another process answers 409 `SESSION_BUSY`. Notes made
 * with the `note` tool stay in memory and do not survive a restart.
 *
 * Run: `npm run service` or `npx tsc -p tsconfig.run.json && node .build/examples/agent-service.js`
 * (port from `AGENT_SERVICE_PORT`, 0 = any free port by default; it prints its URL;
 * `--lease-ttl-ms <ms>` sets the lease time to live, 30 s by default).
 * `--self-test` starts it on an SQLite file in a temporary directory, drives a short scenario
 * against itself over HTTP, then starts this file as a child process, holds a conversation,
 * kills it (SIGKILL) mid-conversation, starts a second child on the same file and checks the
 * conversation continues with its history; it prints what happened, removes the directory and
 * exits (0 when every check passed).
 *
 * Endpoints (JSON in, JSON out; errors are `{ "error": { "code", "message" } }` with a 4xx status:
 * 405 with an `Allow` header, 413 for a body over 64 KiB, 409 for a request about an agent
 * deleted while it was in flight):
 *
 * - `GET    /agents`                      list agents
 * - `POST   /agents`                      `{ id, persona?, tools? }` create an agent (201)
 * - `GET    /agents/:id`                  one agent: tools, system prompt, history length
 * - `POST   /agents/:id/subagents`        `{ id, persona?, tools? }` create a subagent (201)
 * - `POST   /agents/:id/messages`         `{ text }` run one turn
 * - `POST   /agents/:id/tool-calls`       `{ name, arguments }` call one tool directly as the agent
 * - `DELETE /agents/:id`                  dispose the agent and its subagents
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentError,
  Agents,
  AgentsPlugin,
  Events,
  MemorySessionStore,
  PromptError,
  Prompts,
  PromptsPlugin,
  RegistrationError,
  Scratchpad,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  Tools,
  ToolsPlugin,
  token,
  type Agent,
  type AgentSetup,
  type ChatMessage,
  type DurableSession,
  type SessionStore,
  type SystemContext,
  type ToolExecution,
  type ToolResult,
  type ToolSchema,
} from 'polestar-di';
import { PostgresSessionStore } from 'polestar-di/sessions/postgres';
import { SqliteSessionStore } from 'polestar-di/sessions/sqlite';

// ------------------------------------------------------------------ the fake model

/** A tool call the model wants to make. */
export interface ModelToolCall {
  readonly name: string;
  readonly arguments: Record<string, string>;
}

/** What the model is asked. */
export interface ModelRequest {
  readonly systemPrompt: string;
  readonly tools: readonly ToolSchema[];
  readonly history: readonly ChatMessage[];
  readonly message: string;
}

/** The model's answer: tool calls to make (possibly none) and text. */
export interface ModelReply {
  readonly toolCalls: readonly ModelToolCall[];
  readonly text: string;
}

/** A model client (a global). */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** The token of the model client global. */
export const ModelClient = token<ModelClient>('ModelClient');

/**
 * A deterministic model: reads intents from the message text and calls the matching
 * tool only when the tool is among the schemas it was given (a hidden tool is never
 * called; the model says it can not do that instead).
 */
export class FakeModelClient implements ModelClient {
  /** Number of requests served. */
  calls = 0;

  async complete(request: ModelRequest): Promise<ModelReply> {
    this.calls++;
    const text = request.message;
    const wanted: ModelToolCall[] = [];
    let m: RegExpMatchArray | null;
    if ((m = text.match(/weather in ([A-Za-z ]+?)(?:[.,?!]|$| and )/i))) wanted.push({ name: 'get_weather', arguments: { city: m[1].trim() } });
    if ((m = text.match(/calculate ([0-9+*/(). -]+)/i))) wanted.push({ name: 'calculator', arguments: { expression: m[1].trim() } });
    if ((m = text.match(/search (?:for )?"([^"]+)"/i))) wanted.push({ name: 'web_search', arguments: { q: m[1] } });
    if ((m = text.match(/run `([^`]+)`/i))) wanted.push({ name: 'shell', arguments: { cmd: m[1] } });
    if ((m = text.match(/remember "([^"]+)"/i))) wanted.push({ name: 'note', arguments: { text: m[1] } });
    const visible = new Set(request.tools.map((t) => t.name));
    const toolCalls = wanted.filter((c) => visible.has(c.name));
    const refused = wanted.filter((c) => !visible.has(c.name)).map((c) => c.name);
    const persona = request.systemPrompt.split('\n')[0];
    const parts = [`(${persona})`];
    if (toolCalls.length > 0) parts.push(`Calling ${toolCalls.map((c) => c.name).join(', ')}.`);
    if (refused.length > 0) parts.push(`I have no ${refused.join(', ')} tool, so I can not do that.`);
    if (wanted.length === 0) parts.push(`You said: ${text}`);
    return { toolCalls, text: parts.join(' ') };
  }
}

// ------------------------------------------------------------------ deployment tools

const stringArg = (name: string) => ({
  type: 'object',
  properties: { [name]: { type: 'string', minLength: 1 } },
  required: [name],
  additionalProperties: false,
});

function installDeployment(app: SystemContext): void {
  const tools = app.get(Tools);
  tools.register({
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: stringArg('city'),
    execute: ({ city }: { city: string }) => `${city}: ${12 + (city.length % 10)}°C, light wind`,
  });
  tools.register({
    name: 'calculator',
    description: 'Evaluates + - * / on integers',
    parameters: stringArg('expression'),
    execute: ({ expression }: { expression: string }) => String(evaluate(expression)),
  });
  tools.register({
    name: 'web_search',
    description: 'Searches the (fake) web',
    parameters: stringArg('q'),
    execute: ({ q }: { q: string }) => ({ hits: [`${q} - Wikipedia`, `${q} explained`] }),
  });
  tools.register({
    name: 'shell',
    description: 'Runs a (pretend) shell command',
    parameters: stringArg('cmd'),
    execute: ({ cmd }: { cmd: string }) => `$ ${cmd}\nok`,
  });
  // A deny-only guard for every agent: it can refuse a call, never allow one.
  tools.guard((execution) =>
    execution.name === 'shell' && /\brm\b/.test(JSON.stringify(execution.arguments)) ? 'destructive shell commands are not allowed' : undefined,
  );
  const prompts = app.get(Prompts);
  prompts.section({ name: 'deployment:persona', order: 0, text: 'You are a helpful assistant.' });
  prompts.section({ name: 'deployment:identity', order: 10, text: 'You are agent {{agent_id}}.' });
  prompts.protect({ sections: ['deployment:identity'] });
}

/** Integer arithmetic without eval: + - * / and parentheses. */
function evaluate(expression: string): number {
  const tokens = expression.match(/\d+|[-+*/()]/g) ?? [];
  let i = 0;
  const primary = (): number => {
    const t = tokens[i++];
    if (t === '(') {
      const v = sum();
      i++;
      return v;
    }
    if (t === '-') return -primary();
    if (t === undefined || !/^\d+$/.test(t)) throw new Error(`bad expression "${expression}"`);
    return Number(t);
  };
  const product = (): number => {
    let v = primary();
    while (tokens[i] === '*' || tokens[i] === '/') v = tokens[i++] === '*' ? v * primary() : Math.trunc(v / primary());
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (tokens[i] === '+' || tokens[i] === '-') v = tokens[i++] === '+' ? v + product() : v - product();
    return v;
  };
  const v = sum();
  if (i !== tokens.length) throw new Error(`bad expression "${expression}"`);
  return v;
}

// ------------------------------------------------------------------ the service

/** Options of {@link startService}. */
export interface ServiceOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** Where request log lines go; silent by default. */
  readonly log?: (line: string) => void;
  /** Where conversations are stored; an in-memory store (lost with the process) by default. */
  readonly store?: SessionStore;
  /** Lease time to live of each conversation, in milliseconds (the `SessionsPlugin` default, 30 s, when omitted). */
  readonly leaseTtlMs?: number;
}

/** A running service. */
export interface RunningService {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The polestar server behind it. */
  readonly server: Server;
  /** The application context that owns every top-level agent. */
  readonly app: SystemContext;
  /** Stops accepting requests and disposes the polestar server (and so every agent). */
  close(): Promise<void>;
}

/** A live conversation: one durable session (id = agent id) whose agent is the service's agent. */
interface Live {
  durable: DurableSession;
}

/** What is stored as a conversation's `meta`, so that any process can set the agent up again on resume. */
interface StoredSpec {
  persona: string | null;
  tools: string[] | null;
  parent: string | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A 405 with the `Allow` header RFC 9110 requires. */
function notAllowed(method: string, route: string, allow: readonly string[]): HttpError {
  return new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} ${route} is not supported; use ${allow.join(' or ')}`, { allow: allow.join(', ') });
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BODY = 64 * 1024;

/** Starts the service; resolves once it listens. */
export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const log = options.log ?? (() => undefined);
  const server = new Server();
  server.insertGlobal(ModelClient, new FakeModelClient());
  const store = options.store ?? new MemorySessionStore();
  server.addPlugins(
    new ToolsPlugin(),
    new PromptsPlugin(),
    new AgentsPlugin(),
    new SessionsPlugin({ store, ...(options.leaseTtlMs !== undefined ? { leaseTtlMs: options.leaseTtlMs } : {}) }),
  );
  await server.finish();
  const app = server.createContext();
  installDeployment(app);
  const agents = app.get(Agents);
  const sessions = app.get(Sessions);
  const live = new Map<string, Live>();
  const resuming = new Map<string, Promise<Live>>();
  // Subagents are disposed with their parent: one listener keeps the table honest for every path.
  // The id is free as soon as the agent leaves the registry, before this listener runs, so a
  // new agent may already hold the id: only the entry of this very agent is removed.
  app.get(Events).on('agent/disposed', (agent: Agent) => {
    if (live.get(agent.id)?.durable.agent === agent) live.delete(agent.id);
  });
  app.get(Events).on('tools/result', (e: ToolExecution, r: ToolResult) =>
    log(`  [tools/result] ${(e.scope as Agent | undefined)?.id ?? 'global'} ${e.name} -> ${r.isError ? r.error?.code : 'ok'}`),
  );

  /** The agent's setup, from its spec: the same function on create and on resume in any process. */
  const setupOf = (id: string, spec: StoredSpec): AgentSetup => async (ctx) => {
    const prompts = ctx.get(Prompts);
    prompts.variable('agent_id', id);
    if (spec.persona !== null) prompts.section({ name: 'deployment:persona', order: 0, text: spec.persona });
    const tools = ctx.get(Tools);
    if (spec.tools !== null) tools.restrict({ allow: spec.tools });
    const notes: string[] = [];
    tools.register({
      name: 'note',
      description: 'Remembers a note for this agent (in memory: notes do not survive a restart)',
      parameters: stringArg('text'),
      execute: ({ text }: { text: string }) => `noted (${notes.push(text)} note(s): ${notes.join('; ')})`,
    });
    // The persona is user text: a {{name}} in it with no variable would make every later
    // render throw, so the prompt must render now (or the create rolls back with a 400).
    prompts.render(await prompts.assemble());
  };

  /** A live agent, or a stored conversation resumed in this process (its parent first), or 404. */
  const need = async (id: string): Promise<Live> => {
    const entry = live.get(id);
    if (entry !== undefined && !entry.durable.agent.isDisposed) return entry;
    let pending = resuming.get(id);
    if (pending === undefined) {
      pending = resume(id).finally(() => resuming.delete(id));
      resuming.set(id, pending);
    }
    return pending;
  };

  const resume = async (id: string): Promise<Live> => {
    const stored = (await sessions.list({ agentId: id, limit: 1 })).items.find((s) => s.sessionId === id);
    if (stored === undefined) throw new HttpError(404, 'NOT_FOUND', `no agent "${id}"; create it with POST /agents`);
    const spec = stored.meta as unknown as StoredSpec;
    const parent = spec.parent === null ? undefined : (await need(spec.parent)).durable.agent;
    const durable = await sessions.resume({ agentId: id, sessionId: id, parent, setup: setupOf(id, spec) }).catch((err: unknown) => {
      throw busy(err);
    });
    const entry = { durable };
    live.set(id, entry);
    return entry;
  };

  /** A conversation another process (or a crashed one whose lease has not expired yet) still holds: 409. */
  const busy = (err: unknown): unknown => (err instanceof SessionError && err.code === 'SESSION_BUSY' ? new HttpError(409, err.code, err.message) : err);

  const describe = async (agent: Agent): Promise<Record<string, unknown>> => {
    const prompts = agent.ctx.get(Prompts);
    return {
      id: agent.id,
      parent: agent.parent?.id ?? null,
      tools: agent.ctx.get(Tools).visible().map((t) => t.name),
      systemPrompt: prompts.render(await prompts.assemble()),
      historyLength: live.get(agent.id)?.durable.session.history.length ?? 0,
    };
  };

  const create = async (body: unknown, parent: Agent | undefined): Promise<Record<string, unknown>> => {
    const spec = readAgentSpec(body);
    const stored: StoredSpec = { persona: spec.persona ?? null, tools: spec.tools ?? null, parent: parent?.id ?? null };
    let durable: DurableSession;
    try {
      durable = await sessions.create({ agentId: spec.id, sessionId: spec.id, parent, meta: { ...stored }, setup: setupOf(spec.id, stored) });
    } catch (err) {
      if (err instanceof AgentError && /already registered/.test(err.message)) throw new HttpError(409, 'CONFLICT', err.message);
      if (err instanceof AgentError && (err.cause instanceof RegistrationError || err.cause instanceof PromptError)) throw new HttpError(400, 'BAD_REQUEST', err.message);
      if (parent?.isDisposed === true) throw gone(parent);
      // The id's conversation is live here, or stored (by this or another process, or still being deleted).
      if (err instanceof SessionError && (err.code === 'SESSION_BUSY' || err.code === 'SESSION_ALREADY_EXISTS')) {
        throw new HttpError(409, 'CONFLICT', `agent "${spec.id}" is already registered (its conversation is live or stored: ${err.code}); delete it first or pick another id`);
      }
      throw err;
    }
    live.set(spec.id, { durable });
    return describe(durable.agent).catch((err: unknown) => {
      throw durable.agent.isDisposed ? gone(durable.agent) : err;
    });
  };

  const message = async (entry: Live, body: unknown): Promise<Record<string, unknown>> => {
    const text = field(body, 'text');
    if (typeof text !== 'string' || text.length === 0 || text.length > 4000) {
      throw new HttpError(400, 'BAD_REQUEST', 'body must be { "text": "<1 to 4000 characters>" }');
    }
    return entry.durable.turn(async (turnCtx, session) => {
      const model = turnCtx.get(ModelClient);
      const prompts = turnCtx.get(Prompts);
      const assembly = await prompts.assemble();
      const reply = await model.complete({ systemPrompt: prompts.render(assembly), tools: assembly.tools, history: session.history.messages, message: text });
      const scratch = turnCtx.getMut(Scratchpad);
      session.history.append({ role: 'user', content: text });
      const calls = reply.toolCalls.map((call, i) => ({ callId: `call-${session.turnCount}-${i}`, name: call.name, arguments: call.arguments }));
      session.history.append(calls.length > 0 ? { role: 'assistant', content: reply.text, toolCalls: calls } : { role: 'assistant', content: reply.text });
      const toolCalls: Record<string, unknown>[] = [];
      for (const call of calls) {
        const result = await turnCtx.get(Tools).execute(call);
        scratch.notes.push(`${call.name}: ${result.isError ? result.error?.code : 'ok'}`);
        session.history.append({ role: 'tool', callId: result.callId, content: result.content, isError: result.isError });
        toolCalls.push({ name: call.name, arguments: call.arguments, isError: result.isError, code: result.error?.code ?? null, content: result.content });
      }
      return { agent: entry.durable.agent.id, reply: reply.text, toolCalls, scratchpad: [...scratch.notes], historyLength: session.history.length };
    });
  };

  const toolCall = async (entry: Live, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const name = field(body, 'name');
    const args = field(body, 'arguments') ?? {};
    if (typeof name !== 'string' || name.length === 0) throw new HttpError(400, 'BAD_REQUEST', 'body must be { "name": "<tool>", "arguments": { ... } }');
    const result = await entry.durable.agent.ctx.get(Tools).execute({ callId: `direct-${Date.now()}`, name, arguments: args });
    if (!result.isError) return { status: 200, body: { name, content: result.content } };
    const code = result.error?.code ?? 'EXECUTION_ERROR';
    const status = code === 'UNKNOWN_TOOL' ? 404 : code === 'DENIED' ? 403 : code === 'INVALID_ARGS' ? 400 : 502;
    throw new HttpError(status, code, result.error?.message ?? result.content);
  };

  /** A request about an agent that was deleted while it was being handled. */
  const gone = (agent: Agent): HttpError =>
    new HttpError(409, 'CONFLICT', `agent "${agent.id}" was deleted while this request was in flight`);

  const route = async (method: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> => {
    let parts: string[];
    try {
      parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new HttpError(400, 'BAD_REQUEST', `the path ${path} is not valid percent-encoding`);
    }
    if (parts[0] !== 'agents' || parts.length > 3) throw new HttpError(404, 'NOT_FOUND', `no route ${method} ${path}`);
    if (parts.length === 1) {
      if (method === 'GET') return { status: 200, body: { agents: agents.list().map((a) => ({ id: a.id, parent: a.parent?.id ?? null })) } };
      if (method === 'POST') return { status: 201, body: await create(body, undefined) };
      throw notAllowed(method, '/agents', ['GET', 'POST']);
    }
    const entry = await need(parts[1]);
    try {
      return await routeAgent(method, path, parts, entry, body);
    } catch (err) {
      // e.g. DELETE of its parent while a message to this agent awaited the model
      if (!(err instanceof HttpError) && entry.durable.agent.isDisposed) throw gone(entry.durable.agent);
      throw err;
    }
  };

  const routeAgent = async (method: string, path: string, parts: readonly string[], entry: Live, body: unknown): Promise<{ status: number; body: unknown }> => {
    if (parts.length === 2) {
      if (method === 'GET') return { status: 200, body: await describe(entry.durable.agent) };
      if (method === 'DELETE') {
        const gone = [entry.durable.agent, ...descendants(agents.list(), entry.durable.agent)].map((a) => a.id);
        // Deepest first: each stored conversation is disposed, then its rows are deleted.
        for (const id of [...gone].reverse()) await sessions.delete(id);
        return { status: 200, body: { deleted: gone } };
      }
      throw notAllowed(method, '/agents/:id', ['GET', 'DELETE']);
    }
    if (method !== 'POST') throw notAllowed(method, path, ['POST']);
    if (parts[2] === 'subagents') return { status: 201, body: await create(body, entry.durable.agent) };
    if (parts[2] === 'messages') return { status: 200, body: await message(entry, body) };
    if (parts[2] === 'tool-calls') return toolCall(entry, body);
    throw new HttpError(404, 'NOT_FOUND', `no route ${method} ${path}`);
  };

  const httpServer = http.createServer((req, res) => {
    const send = (status: number, payload: unknown, headers: Readonly<Record<string, string>> = {}): void => {
      const text = JSON.stringify(payload);
      res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      log(`${req.method} ${req.url} -> ${status}`);
    };
    readBody(req)
      .then((raw) => {
        const method = req.method ?? 'GET';
        let body: unknown;
        if (method === 'POST') {
          try {
            body = raw.length === 0 ? undefined : JSON.parse(raw);
          } catch (err) {
            throw new HttpError(400, 'BAD_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
          }
        }
        return route(method, new URL(req.url ?? '/', 'http://localhost').pathname, body);
      })
      .then(
        (r) => send(r.status, r.body),
        (err: unknown) => {
          if (err instanceof HttpError) send(err.status, { error: { code: err.code, message: err.message } }, err.headers);
          else send(500, { error: { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) } });
        },
      );
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    app,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          httpServer.closeAllConnections();
        });
        await server.dispose();
        if (options.store === undefined) await store.close();
      })()),
  };
}

interface AgentSpec {
  id: string;
  persona?: string;
  tools?: string[];
}

function field(body: unknown, name: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'BAD_REQUEST', 'the request body must be a JSON object');
  }
  return (body as Record<string, unknown>)[name];
}

function readAgentSpec(body: unknown): AgentSpec {
  const id = field(body, 'id');
  const persona = field(body, 'persona');
  const tools = field(body, 'tools');
  if (typeof id !== 'string' || !ID.test(id)) throw new HttpError(400, 'BAD_REQUEST', '"id" must be 1-64 letters, digits, "_" or "-"');
  if (persona !== undefined && (typeof persona !== 'string' || persona.length === 0 || persona.length > 2000)) {
    throw new HttpError(400, 'BAD_REQUEST', '"persona" must be a string of 1 to 2000 characters');
  }
  if (tools !== undefined && (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string'))) {
    throw new HttpError(400, 'BAD_REQUEST', '"tools" must be an array of tool names');
  }
  return { id, persona: persona as string | undefined, tools: tools as string[] | undefined };
}

function descendants(all: readonly Agent[], root: Agent): Agent[] {
  const out: Agent[] = [];
  const below = (a: Agent): boolean => a.parent !== undefined && (a.parent === root || below(a.parent));
  for (const a of all) if (below(a)) out.push(a);
  return out;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    // Too large: answer 413 and close the connection once the answer is out. The rest of the
    // body is read and dropped meanwhile (destroying the socket at once would reset the
    // connection before the client could read the 413).
    const tooLarge = (): void => {
      req.removeAllListeners('data');
      req.resume();
      reject(new HttpError(413, 'TOO_LARGE', `the request body exceeds ${MAX_BODY} bytes`, { connection: 'close' }));
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_BODY) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) return tooLarge();
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// ------------------------------------------------------------------ self-test and main

/** Drives a short scenario against a running service over HTTP; returns the failed checks. */
export async function selfTest(url: string, print: (line: string) => void = console.log): Promise<string[]> {
  const failures: string[] = [];
  const call = async (method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; json: any }> => {
    const res = await fetch(url + path, {
      method,
      headers: body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : undefined,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const json = await res.json();
    print(`${method} ${path}${raw !== undefined ? ' ' + raw : body === undefined ? '' : ' ' + JSON.stringify(body)}\n  -> ${res.status} ${JSON.stringify(json)}`);
    return { status: res.status, json };
  };
  const check = (what: string, ok: boolean): void => {
    if (!ok) failures.push(what);
  };

  let r = await call('POST', '/agents', { id: 'researcher', persona: 'You research carefully.', tools: ['web_search', 'get_weather', 'calculator'] });
  check('create researcher', r.status === 201 && r.json.tools.join() === 'get_weather,calculator,web_search,note');
  r = await call('POST', '/agents/researcher/messages', { text: 'What is the weather in Paris and calculate 6*7?' });
  check('tools ran', r.status === 200 && r.json.toolCalls.map((c: any) => c.content).join('|') === 'Paris: 17°C, light wind|42');
  r = await call('POST', '/agents/researcher/messages', { text: 'Please run `ls` and remember "Paris is mild"' });
  check('hidden shell not called, note works', r.status === 200 && r.json.toolCalls.length === 1 && /no shell tool/.test(r.json.reply));
  r = await call('POST', '/agents/researcher/tool-calls', { name: 'shell', arguments: { cmd: 'ls' } });
  check('restricted tool is unknown', r.status === 404 && r.json.error.code === 'UNKNOWN_TOOL');
  r = await call('POST', '/agents', { id: 'ops', persona: 'You operate servers.' });
  r = await call('POST', '/agents/ops/tool-calls', { name: 'shell', arguments: { cmd: 'rm -rf /' } });
  check('guard denies', r.status === 403 && r.json.error.code === 'DENIED');
  r = await call('POST', '/agents/researcher/subagents', { id: 'summarizer', tools: [] });
  check('subagent is flat', r.status === 201 && r.json.tools.join() === 'note' && r.json.parent === 'researcher');
  r = await call('POST', '/agents', { id: 'researcher' });
  check('duplicate id', r.status === 409);
  r = await call('POST', '/agents', undefined, '{"id": "broken"');
  check('malformed JSON', r.status === 400 && r.json.error.code === 'BAD_JSON');
  r = await call('POST', '/agents', { id: 'typo', tools: ['web_serch'] });
  check('unknown tool in allow list', r.status === 400 && /unknown tool "web_serch"/.test(r.json.error.message));
  r = await call('POST', '/agents/nobody/messages', { text: 'hi' });
  check('unknown agent', r.status === 404);
  r = await call('DELETE', '/agents/researcher');
  check('delete parent takes subagent', r.status === 200 && r.json.deleted.join() === 'researcher,summarizer');
  r = await call('GET', '/agents');
  check('only ops is left', r.status === 200 && r.json.agents.map((a: any) => a.id).join() === 'ops');
  return failures;
}

/** A service process (this file, compiled) on `db`; resolves with its URL once it listens. */
function startChild(db: string): Promise<{ url: string; child: ReturnType<typeof spawn> }> {
  const child = spawn(process.execPath, [process.argv[1], '--db', db, '--lease-ttl-ms', '1000'], {
    env: { ...process.env, AGENT_SERVICE_PORT: '0', POLESTAR_PG_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve({ url: m[1], child });
    });
    child.once('exit', (code) => reject(new Error(`the service process exited early (${code}): ${out}`)));
  });
}

/**
 * The restart check: a service process on the SQLite file `db` holds a conversation, is
 * killed (SIGKILL) mid-conversation, and a second process on the same file continues it.
 * Returns the failed checks.
 */
export async function restartSelfTest(db: string, print: (line: string) => void = console.log): Promise<string[]> {
  const failures: string[] = [];
  const check = (what: string, ok: boolean): void => {
    if (!ok) failures.push(what);
  };
  const post = async (url: string, path: string, body: unknown): Promise<{ status: number; json: any }> => {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    print(`POST ${path} ${JSON.stringify(body)}\n  -> ${res.status} ${JSON.stringify(json)}`);
    return { status: res.status, json };
  };
  const first = await startChild(db);
  print(`process 1 (pid ${first.child.pid}) on ${first.url}`);
  try {
    let r = await post(first.url, '/agents', { id: 'traveller', persona: 'You plan trips.', tools: ['get_weather', 'calculator'] });
    check('process 1 creates the conversation', r.status === 201);
    r = await post(first.url, '/agents/traveller/messages', { text: 'What is the weather in Oslo?' });
    check('process 1 runs turn 1', r.status === 200 && r.json.historyLength === 3);
    r = await post(first.url, '/agents/traveller/messages', { text: 'calculate 3*4' });
    check('process 1 runs turn 2', r.status === 200 && r.json.historyLength === 6);
  } finally {
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
  }
  print('process 1 killed (SIGKILL) mid-conversation');
  const second = await startChild(db);
  print(`process 2 (pid ${second.child.pid}) on ${second.url}, same file`);
  try {
    // The killed process still holds the conversation's lease until it expires (1 s here): 409 until then.
    let r = await post(second.url, '/agents/traveller/messages', { text: 'And the weather in Bergen?' });
    for (let i = 0; i < 50 && r.status === 409 && r.json.error.code === 'SESSION_BUSY'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      r = await post(second.url, '/agents/traveller/messages', { text: 'And the weather in Bergen?' });
    }
    check('process 2 continues the conversation (turns 1 and 2 are in its history)', r.status === 200 && r.json.historyLength === 9);
    const got = await fetch(`${second.url}/agents/traveller`);
    const agent = (await got.json()) as any;
    print(`GET /agents/traveller\n  -> ${got.status} ${JSON.stringify(agent)}`);
    check('process 2 set the agent up again from the stored spec', got.status === 200 && agent.tools.join() === 'get_weather,calculator,note' && /^You plan trips\./.test(agent.systemPrompt));
  } finally {
    const exited = new Promise((resolve) => second.child.once('exit', resolve));
    second.child.kill('SIGTERM');
    await exited;
  }
  return failures;
}

/** `--name value` from the command line, else the environment variable, else `fallback`. */
function option(name: string, env: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  const fromEnv = process.env[env];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : fallback;
}

async function main(): Promise<void> {
  const isSelfTest = process.argv.includes('--self-test');
  const port = Number(process.env.AGENT_SERVICE_PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`AGENT_SERVICE_PORT must be a port number, got ${process.env.AGENT_SERVICE_PORT}`);
  const leaseTtlMs = Number(option('lease-ttl-ms', 'AGENT_SERVICE_LEASE_TTL_MS', '30000'));
  const dir = isSelfTest ? mkdtempSync(join(tmpdir(), 'polestar-agent-service-')) : undefined;
  try {
    const pg = option('pg', 'POLESTAR_PG_URL', '');
    const db = dir !== undefined ? join(dir, 'self-test.db') : option('db', 'AGENT_SERVICE_DB', 'agent-service.db');
    const store: SessionStore = pg !== '' && !isSelfTest ? new PostgresSessionStore({ connectionString: pg }) : new SqliteSessionStore({ path: db });
    const service = await startService({ port: isSelfTest ? 0 : port, store, leaseTtlMs, log: isSelfTest ? undefined : (l) => console.log(l) });
    console.log(`agent service listening on ${service.url} (conversations in ${pg !== '' && !isSelfTest ? 'PostgreSQL' : `SQLite file ${db}`})`);
    if (!isSelfTest) {
      const stop = (): void => {
        console.log('stopping');
        void service
          .close()
          .then(() => store.close())
          .then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return;
    }
    let failures: string[];
    try {
      failures = await selfTest(service.url);
    } finally {
      await service.close();
      await store.close();
    }
    if (dir !== undefined) failures.push(...(await restartSelfTest(join(dir, 'restart.db'))));
    if (failures.length > 0) {
      console.error(`self-test FAILED: ${failures.join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log(
        'self-test passed: agents, subagents, tools, guards, restrictions, prompts and disposal behaved as expected, and a conversation survived a killed process',
      );
    }
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('agent-service.js')) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
