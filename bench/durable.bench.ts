/**
 * Durable turns: polestar next to its floors and its anchors, interleaved in one process
 * (issue 24's rows).
 *
 * A turn is four messages of about 500 bytes each (user, assistant with a tool call, the
 * tool result, the assistant's answer) plus one changed persisted local. Every contender
 * stores the same payload:
 *
 * - `polestar`: `DurableSession.turn` appending the four messages and bumping a persisted
 *   local, on `SqliteSessionStore` (WAL, `synchronous=FULL`, a temporary directory) and on
 *   `PostgresSessionStore` (loopback);
 * - `floor`: the rows polestar writes for that turn (the fenced session UPDATE, the four
 *   events, the attempt record, the checkpoint, the retention DELETE) by hand in ONE
 *   transaction, with the same driver (the `libsql` binding on the main thread, statements
 *   prepared once; `pg`), in tables of the same shape;
 * - `floor-messages`: the four message rows alone, in one transaction;
 * - `langgraph`: `@langchain/langgraph-checkpoint-sqlite` / `-postgres`, `putWrites` (the
 *   node's writes) then `put` (the checkpoint, which holds the whole conversation) per turn;
 * - `mastra`: `@mastra/libsql` / `@mastra/pg` `saveMessages` of the four messages (its
 *   SQLite client set back to `synchronous=FULL` after Mastra's init set it to NORMAL).
 *
 * Every conversation starts empty and is replaced by a fresh one after {@link ROLL} turns
 * (untimed), the same for every contender, so every contender works at 0–100 messages.
 * Rows: turns/s at 1 session, at 16 concurrent sessions on SQLite and 100 on PostgreSQL
 * (the sessions of a round commit together: one op is one turn of every session), ratios
 * taken within a round (min / median / max over rounds), and resuming 1,000 messages
 * against one SELECT of the same rows plus `JSON.parse`. PostgreSQL is skipped (one
 * `durable.pg.skipped` row) when unreachable: `POLESTAR_TEST_PG_URL` or
 * postgres://postgres@127.0.0.1:5432/postgres; the bench creates and drops its own database.
 * An anchor that can not load (better-sqlite3 not built, say) is left out with a
 * `<row>.skipped` row saying why.
 *
 * Run alone: `npm run build:run && node --expose-gc .build/bench/durable.bench.js [--quick]`.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient, type Client } from '@libsql/client';
import pg from 'pg';
import type { BaseCheckpointSaver, Checkpoint } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { MastraMessageV2 } from '@mastra/core/agent';
import { AgentsPlugin, Server, Sessions, SessionsPlugin, type ChatMessage, type DurableSession, type LocalSerializer, type SessionStore } from '../src/index.js';
import { SqliteSessionStore } from '../src/sessions/sqlite.js';
import { PostgresSessionStore } from '../src/sessions/postgres.js';
import { budget as harnessBudget, compare, stats, now, type Budget, type Comparison, type Contender, type Stats } from './harness.js';
import { row, runIfMain, single, withLoad, type BenchReport, type BenchRow } from './report.js';

/** Turns per conversation before it is replaced by a fresh one (untimed): 100 messages at most. */
const ROLL = 25;
/** Concurrent sessions of the concurrency rows. */
const SQLITE_SESSIONS = 16;
const PG_SESSIONS = 100;
/** Messages of the resumed session. */
const RESUME_MESSAGES = 1_000;
/** polestar's default `keepCheckpoints`: the floor's retention DELETE keeps as many. */
const KEEP = 20;
/** Connections of every PostgreSQL pool (polestar's default). */
const PG_MAX = 10;
const PG_URL = process.env.POLESTAR_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The harness's rules with a budget of its own. A durable turn takes a millisecond or more,
 * and what it costs swings with the disk's fsync latency, which the other processes of a
 * shared machine move from one second to the next: so a batch of about 40 ms (a 5 ms batch
 * would hold three turns), one batch per contender per round, so that the contenders of a
 * round run close together, and 31 rounds. The quick budget (the CI smoke run, which sets
 * no limit on these rows) is three rounds.
 */
function durableBudget(): Budget {
  const b = harnessBudget();
  return b.name === 'quick'
    ? { name: 'quick', rounds: 3, batchesPerRound: 1, batchMs: 5, warmupMs: 40 }
    : { name: 'full', rounds: 31, batchesPerRound: 1, batchMs: 40, warmupMs: 250 };
}

// ---- the payload -------------------------------------------------------------------------

const WORDS = 'the agent called a tool with the query and the store committed its turn after the lease was renewed so every message of this conversation stays durable'.split(' ');

/** `bytes` characters of prose, different for each seed. */
function prose(seed: number, bytes: number): string {
  let s = '';
  for (let i = seed; s.length < bytes; i = (i * 31 + 7) % 997) s += `${WORDS[i % WORDS.length]} `;
  return s.slice(0, bytes);
}

/** One turn: user, assistant with a tool call, the tool result, the answer (about 500 bytes of JSON each). */
function turnMessages(k: number): ChatMessage[] {
  const callId = `call_${k.toString(36)}_${prose(k, 8).replace(/\W/g, '')}`;
  return [
    { role: 'user', content: prose(k, 470) },
    { role: 'assistant', content: prose(k + 1, 250), toolCalls: [{ callId, name: 'search_documents', arguments: { query: prose(k + 2, 150), limit: 5 } }] },
    { role: 'tool', callId, content: prose(k + 3, 450) },
    { role: 'assistant', content: prose(k + 4, 470) },
  ];
}

const PAYLOADS: readonly ChatMessage[][] = Array.from({ length: 32 }, (_, k) => turnMessages(k));

// ---- how a contender stores turns --------------------------------------------------------

/** One way of storing turns, over numbered session slots. */
interface TurnSystem {
  /** Starts a fresh conversation in `slot` (untimed). */
  open(slot: number): Promise<void>;
  /** Stores one turn of `slot` (timed). */
  turn(slot: number, messages: readonly ChatMessage[]): Promise<void>;
}

/**
 * A contender running `sessions` slots of `sys` together: one op is one turn of every slot
 * (awaited together). Replacing the conversations every {@link ROLL} turns is off the clock.
 */
function turns(name: string, sys: TurnSystem, sessions: number): Contender {
  const slots = Array.from({ length: sessions }, (_, i) => i);
  let done = ROLL;
  let k = 0;
  return {
    name,
    selfTimed: true,
    run: async (n) => {
      let ns = 0;
      for (let i = 0; i < n; i++) {
        if (done >= ROLL) {
          await Promise.all(slots.map((s) => sys.open(s)));
          done = 0;
        }
        const t0 = now();
        if (sessions === 1) await sys.turn(0, PAYLOADS[k % PAYLOADS.length]);
        else await Promise.all(slots.map((s) => sys.turn(s, PAYLOADS[(k + s) % PAYLOADS.length])));
        ns += now() - t0;
        done++;
        k++;
      }
      return ns;
    },
  };
}

// ---- polestar ----------------------------------------------------------------------------

class Counter {
  n = 0;
}
const counterSerializer: LocalSerializer<Counter> = {
  key: 'bench.counter',
  version: 1,
  scope: 'agent',
  serialize: (c) => c.n,
  deserialize: (d) => Object.assign(new Counter(), { n: d as number }),
};

async function serverOn(store: SessionStore): Promise<Server> {
  const server = new Server();
  server.registerLocal(Counter, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Counter, counterSerializer]] }));
  await server.finish();
  return server;
}

class PolestarTurns implements TurnSystem {
  readonly #sessions: Sessions;
  readonly #open: (DurableSession | undefined)[] = [];
  readonly #tag: string;
  #gen = 0;

  constructor(sessions: Sessions, tag: string) {
    this.#sessions = sessions;
    this.#tag = tag;
  }

  async open(slot: number): Promise<void> {
    await this.#open[slot]?.close();
    const id = `${this.#tag}-${slot}-${this.#gen++}`;
    this.#open[slot] = await this.#sessions.create({ agentId: id, sessionId: id });
  }

  async turn(slot: number, messages: readonly ChatMessage[]): Promise<void> {
    const s = this.#open[slot];
    if (s === undefined) throw new Error('durable bench: slot not open');
    await s.turn((ctx, session) => {
      for (const m of messages) session.history.append(m);
      ctx.get(Counter).n++;
    });
  }

  async close(): Promise<void> {
    for (const s of this.#open) await s?.close();
  }
}

// ---- the floors: the same rows by hand, the same driver ----------------------------------

type Param = string | number | null;
type Row = Record<string, unknown>;
type Run = (sql: string, params?: readonly Param[]) => Promise<Row[]>;

/** A database the floors write to by hand: one transaction per call of `tx`. */
interface FloorDb {
  readonly dialect: 'sqlite' | 'postgres';
  tx<T>(fn: (run: Run) => Promise<T>): Promise<T>;
  query(sql: string, params?: readonly Param[]): Promise<Row[]>;
  close(): Promise<void>;
}

const NOW = {
  sqlite: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  postgres: '(extract(epoch from now()) * 1000)::bigint',
} as const;

/** What the floor uses of the `libsql` binding (the better-sqlite3-style API `@libsql/client` is built on). */
interface LibsqlStatement {
  readonly reader: boolean;
  run(params: readonly Param[]): unknown;
  all(params: readonly Param[]): Row[];
}
interface LibsqlDatabase {
  prepare(sql: string): LibsqlStatement;
  exec(sql: string): void;
  close(): void;
}

/** The `libsql` binding, resolved next to `@libsql/client` (as polestar's SQLite store loads it). */
function libsqlDatabase(): new (path: string) => LibsqlDatabase {
  const client = createRequire(import.meta.url).resolve('@libsql/client');
  return createRequire(client)('libsql') as new (path: string) => LibsqlDatabase;
}

/**
 * The `libsql` binding on a file, on the main thread: one connection, statements prepared
 * once, transactions one at a time (BEGIN IMMEDIATE … COMMIT). The same binding polestar's
 * SQLite store uses, with none of its work: the tightest hand-written floor.
 */
class SqliteFloor implements FloorDb {
  readonly dialect = 'sqlite';
  readonly #db: LibsqlDatabase;
  readonly #statements = new Map<string, LibsqlStatement>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    const Database = libsqlDatabase();
    this.#db = new Database(path);
    this.#db.exec('PRAGMA journal_mode = WAL');
    this.#db.exec('PRAGMA synchronous = FULL');
  }

  /** `synchronous/journal_mode` of the connection (`2/wal` is FULL in WAL mode). */
  settings(): string {
    const one = (name: string): string => String(Object.values(this.#db.prepare(`PRAGMA ${name}`).all([])[0] ?? {})[0]);
    return `${one('synchronous')}/${one('journal_mode')}`;
  }

  #run(sql: string, params: readonly Param[] = []): Row[] {
    const text = sql.replaceAll('{now}', NOW.sqlite);
    let st = this.#statements.get(text);
    if (st === undefined) {
      st = this.#db.prepare(text);
      this.#statements.set(text, st);
    }
    if (st.reader) return st.all(params);
    st.run(params);
    return [];
  }

  tx<T>(fn: (run: Run) => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(async (sql, params) => this.#run(sql, params));
        this.#db.exec('COMMIT');
        return out;
      } catch (err) {
        this.#db.exec('ROLLBACK');
        throw err;
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async query(sql: string, params: readonly Param[] = []): Promise<Row[]> {
    await this.#queue;
    if (/^\s*CREATE/i.test(sql)) {
      this.#db.exec(sql);
      return [];
    }
    return this.#run(sql, params);
  }

  async close(): Promise<void> {
    await this.#queue;
    this.#db.close();
  }
}

/** `pg` on a pool: BEGIN … COMMIT on one pooled connection per transaction. */
class PgFloor implements FloorDb {
  readonly dialect = 'postgres';
  readonly #pool: pg.Pool;
  readonly #text = new Map<string, string>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  #sql(text: string): string {
    let out = this.#text.get(text);
    if (out === undefined) {
      let i = 0;
      out = text.replaceAll('{now}', NOW.postgres).replace(/\?/g, () => `$${++i}`);
      this.#text.set(text, out);
    }
    return out;
  }

  async tx<T>(fn: (run: Run) => Promise<T>): Promise<T> {
    const c = await this.#pool.connect();
    try {
      await c.query('BEGIN');
      const out = await fn(async (sql, params) => (await c.query(this.#sql(sql), params as Param[] | undefined)).rows as Row[]);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  async query(sql: string, params: readonly Param[] = []): Promise<Row[]> {
    return (await this.#pool.query(this.#sql(sql), params as Param[])).rows as Row[];
  }

  close(): Promise<void> {
    return this.#pool.end();
  }
}

/** The floor's tables: polestar's session, event, attempt and checkpoint tables (same columns, keys and indexes), plus a bare message table. */
function floorSchema(dialect: FloorDb['dialect']): string[] {
  const id = dialect === 'postgres' ? 'text COLLATE "C" NOT NULL' : 'text NOT NULL';
  return [
    `CREATE TABLE floor_sessions (session_id ${id} PRIMARY KEY, agent_id text NOT NULL, format integer NOT NULL, meta text NOT NULL,
      created_at bigint NOT NULL, updated_at bigint NOT NULL, committed_turn integer NOT NULL, last_seq bigint NOT NULL, rev bigint NOT NULL,
      lease_owner text, lease_epoch bigint NOT NULL, lease_expires_at bigint, lease_ttl_ms bigint, open_turn integer, open_attempt integer,
      open_epoch bigint, lease_incarnation text)`,
    'CREATE INDEX floor_sessions_by_agent ON floor_sessions (agent_id, session_id)',
    `CREATE TABLE floor_events (session_id ${id}, seq bigint NOT NULL, turn integer NOT NULL, attempt integer NOT NULL, kind text NOT NULL,
      format integer NOT NULL, body text NOT NULL, at bigint NOT NULL, PRIMARY KEY (session_id, seq))`,
    'CREATE INDEX floor_events_by_attempt ON floor_events (session_id, turn, attempt, seq)',
    `CREATE TABLE floor_attempts (session_id ${id}, turn integer NOT NULL, attempt integer NOT NULL, status text NOT NULL, epoch bigint NOT NULL,
      started_at bigint NOT NULL, ended_at bigint, end_rev bigint, end_seq bigint, reason text, turn_key text, PRIMARY KEY (session_id, turn, attempt))`,
    `CREATE TABLE floor_checkpoints (session_id ${id}, turn integer NOT NULL, format integer NOT NULL, locals text NOT NULL, label text,
      pinned integer NOT NULL, created_at bigint NOT NULL, PRIMARY KEY (session_id, turn))`,
    `CREATE TABLE floor_messages (session_id ${id}, seq bigint NOT NULL, body text NOT NULL, PRIMARY KEY (session_id, seq))`,
  ];
}

const OWNER = 'floor-owner';
const locals = (n: number): string => JSON.stringify([{ key: 'bench.counter', scope: 'agent', version: 1, data: n }]);
const values = (rows: number, cols: number): string => Array.from({ length: rows }, () => `(${Array.from({ length: cols }, () => '?').join(', ')})`).join(', ');

const FENCED_UPDATE = `UPDATE floor_sessions SET rev = rev + 1, updated_at = {now}, last_seq = last_seq + ?, committed_turn = committed_turn + 1
  WHERE session_id = ? AND lease_owner = ? AND lease_epoch = 1 AND lease_expires_at > {now} RETURNING last_seq, updated_at, rev`;
const EVENTS = (n: number): string => `INSERT INTO floor_events (session_id, seq, turn, attempt, kind, format, body, at) VALUES ${values(n, 8)}`;
const ATTEMPT = "INSERT INTO floor_attempts (session_id, turn, attempt, status, epoch, started_at, ended_at, end_rev, end_seq) VALUES (?, ?, 1, 'committed', 1, ?, ?, ?, ?)";
const CHECKPOINT = 'INSERT INTO floor_checkpoints (session_id, turn, format, locals, label, pinned, created_at) VALUES (?, ?, 1, ?, NULL, 0, ?)';
const RETENTION = 'DELETE FROM floor_checkpoints WHERE session_id = ? AND turn > 0 AND turn <= ? AND pinned = 0';

/** polestar's rows of a committed turn, by hand in one transaction. */
class FloorTurns implements TurnSystem {
  readonly #db: FloorDb;
  readonly #tag: string;
  readonly #slots: { id: string; turn: number; counter: number }[] = [];
  #gen = 0;

  constructor(db: FloorDb, tag: string) {
    this.#db = db;
    this.#tag = tag;
  }

  async open(slot: number): Promise<void> {
    const id = `${this.#tag}-${slot}-${this.#gen++}`;
    await this.#db.tx(async (run) => {
      await run(
        `INSERT INTO floor_sessions (session_id, agent_id, format, meta, created_at, updated_at, committed_turn, last_seq, rev, lease_owner, lease_epoch, lease_expires_at, lease_ttl_ms)
         VALUES (?, ?, 1, 'null', {now}, {now}, 0, 0, 1, ?, 1, {now} + 3600000, 3600000)`,
        [id, id, OWNER],
      );
      await run(CHECKPOINT.replace("VALUES (?, ?, 1, ?, NULL, 0, ?)", "VALUES (?, 0, 1, ?, NULL, 0, {now})"), [id, locals(0)]);
    });
    this.#slots[slot] = { id, turn: 0, counter: 0 };
  }

  async turn(slot: number, messages: readonly ChatMessage[]): Promise<void> {
    const s = this.#slots[slot];
    const turn = s.turn + 1;
    const counter = s.counter + 1;
    const postgres = this.#db.dialect === 'postgres';
    await this.#db.tx(async (run) => {
      const rows = await run(FENCED_UPDATE, [messages.length, s.id, OWNER]);
      if (rows.length === 0) throw new Error(`durable bench: the floor's lease of ${s.id} is lost`);
      const last = Number(rows[0].last_seq);
      const at = Number(rows[0].updated_at);
      const rev = Number(rows[0].rev);
      const events: Param[] = [];
      messages.forEach((m, j) => events.push(s.id, last - messages.length + 1 + j, turn, 1, 'history/append', 1, JSON.stringify(m), at));
      if (postgres) {
        // One statement after the fenced UPDATE, as polestar's own commit does on PostgreSQL.
        await run(`WITH e AS (${EVENTS(messages.length)}), a AS (${ATTEMPT}), d AS (${RETENTION}) ${CHECKPOINT}`, [
          ...events,
          ...[s.id, turn, at, at, rev, last],
          ...[s.id, turn - KEEP],
          ...[s.id, turn, locals(counter), at],
        ]);
      } else {
        await run(EVENTS(messages.length), events);
        await run(ATTEMPT, [s.id, turn, at, at, rev, last]);
        await run(CHECKPOINT, [s.id, turn, locals(counter), at]);
        await run(RETENTION, [s.id, turn - KEEP]);
      }
    });
    s.turn = turn;
    s.counter = counter;
  }
}

/** The four message rows alone, in one transaction. */
class MessageFloorTurns implements TurnSystem {
  readonly #db: FloorDb;
  readonly #tag: string;
  readonly #slots: { id: string; seq: number }[] = [];
  #gen = 0;

  constructor(db: FloorDb, tag: string) {
    this.#db = db;
    this.#tag = tag;
  }

  async open(slot: number): Promise<void> {
    this.#slots[slot] = { id: `${this.#tag}-${slot}-${this.#gen++}`, seq: 0 };
  }

  async turn(slot: number, messages: readonly ChatMessage[]): Promise<void> {
    const s = this.#slots[slot];
    const params: Param[] = [];
    messages.forEach((m, j) => params.push(s.id, s.seq + 1 + j, JSON.stringify(m)));
    await this.#db.tx((run) => run(`INSERT INTO floor_messages (session_id, seq, body) VALUES ${values(messages.length, 3)}`, params));
    s.seq += messages.length;
  }
}

// ---- the anchors ---------------------------------------------------------------------------

/** A LangGraph checkpointer as a graph uses it for one node step: `putWrites`, then `put` of the new checkpoint. */
class LangGraphTurns implements TurnSystem {
  readonly #saver: BaseCheckpointSaver;
  readonly #uuid6: (clockseq: number) => string;
  readonly #slots: { config: RunnableConfig; messages: readonly unknown[]; counter: number; step: number; version: string | number | undefined }[] = [];

  constructor(saver: BaseCheckpointSaver, uuid6: (clockseq: number) => string) {
    this.#saver = saver;
    this.#uuid6 = uuid6;
  }

  async open(slot: number): Promise<void> {
    // A new thread starts with its input checkpoint (step -1), as a graph's first invoke writes it.
    const config: RunnableConfig = { configurable: { thread_id: randomUUID(), checkpoint_ns: '' } };
    const version = this.#saver.getNextVersion(undefined);
    const input: Checkpoint = { v: 4, id: this.#uuid6(-1), ts: new Date().toISOString(), channel_values: { messages: [], counter: 0 }, channel_versions: { messages: version, counter: version }, versions_seen: {} };
    const next = await this.#saver.put(config, input, { source: 'input', step: -1, parents: {} }, { messages: version, counter: version });
    this.#slots[slot] = { config: next, messages: [], counter: 0, step: -1, version };
  }

  async turn(slot: number, messages: readonly ChatMessage[]): Promise<void> {
    const s = this.#slots[slot];
    const counter = s.counter + 1;
    await this.#saver.putWrites(s.config, [['messages', messages], ['counter', counter]], randomUUID());
    const all = s.messages.concat(messages);
    // (the PostgreSQL saver's versions are strings, the base class types them as numbers)
    const version = this.#saver.getNextVersion(s.version as number | undefined);
    const checkpoint: Checkpoint = {
      v: 4,
      id: this.#uuid6(-1),
      ts: new Date().toISOString(),
      channel_values: { messages: all, counter },
      channel_versions: { messages: version, counter: version },
      versions_seen: { agent: { messages: s.version ?? 0, counter: s.version ?? 0 } },
    };
    const step = s.step + 1;
    s.config = await this.#saver.put(s.config, checkpoint, { source: 'loop', step, parents: {} }, { messages: version, counter: version });
    s.messages = all;
    s.counter = counter;
    s.step = step;
    s.version = version;
  }
}

/** What the Mastra stores share: threads and `saveMessages`. */
interface MastraStoreLike {
  saveThread(args: { thread: { id: string; resourceId: string; title: string; createdAt: Date; updatedAt: Date; metadata: Record<string, unknown> } }): Promise<unknown>;
  saveMessages(args: { messages: MastraMessageV2[]; format: 'v2' }): Promise<unknown>;
}

/** The same four messages as Mastra's v2 messages (a tool result is the assistant's tool invocation in state `result`). */
function mastraMessages(messages: readonly ChatMessage[], threadId: string): MastraMessageV2[] {
  const base = { threadId, resourceId: 'bench-resource', type: 'v2' };
  return messages.map((m): MastraMessageV2 => {
    const createdAt = new Date();
    const id = randomUUID();
    if (m.role === 'user') return { ...base, id, createdAt, role: 'user', content: { format: 2, parts: [{ type: 'text', text: m.content }] } };
    if (m.role === 'tool') {
      return {
        ...base,
        id,
        createdAt,
        role: 'assistant',
        content: { format: 2, parts: [{ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: m.callId, toolName: 'search_documents', args: {}, result: m.content } }] },
      };
    }
    const calls = m.role === 'assistant' ? (m.toolCalls ?? []) : [];
    return {
      ...base,
      id,
      createdAt,
      role: 'assistant',
      content: {
        format: 2,
        parts: [
          { type: 'text', text: m.content },
          ...calls.map((c) => ({ type: 'tool-invocation' as const, toolInvocation: { state: 'call' as const, toolCallId: c.callId, toolName: c.name, args: c.arguments } })),
        ],
      },
    };
  });
}

class MastraTurns implements TurnSystem {
  readonly #store: MastraStoreLike;
  readonly #threads: string[] = [];

  constructor(store: MastraStoreLike) {
    this.#store = store;
  }

  async open(slot: number): Promise<void> {
    const id = randomUUID();
    const at = new Date();
    await this.#store.saveThread({ thread: { id, resourceId: 'bench-resource', title: 'bench', createdAt: at, updatedAt: at, metadata: {} } });
    this.#threads[slot] = id;
  }

  async turn(slot: number, messages: readonly ChatMessage[]): Promise<void> {
    await this.#store.saveMessages({ messages: mastraMessages(messages, this.#threads[slot]), format: 'v2' });
  }
}

// ---- rows ----------------------------------------------------------------------------------

/** A row with the slowest round too (the table shows it in the metric). */
interface RangeRow extends BenchRow {
  readonly max: number;
}

function fmt(v: number): string {
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : String(Number(v.toPrecision(3)));
}

function ranged(id: string, metric: string, unit: string, s: Stats, target?: { text: string; ok: (median: number) => boolean }): RangeRow {
  const max = Math.max(...s.samples);
  const r = row(id, `${metric} [max ${fmt(max)}]`, unit, s);
  return { ...r, max, ...(target === undefined ? {} : { target: target.text, ok: target.ok(s.median) }) };
}

const atMost = (x: number): { text: string; ok: (m: number) => boolean } => ({ text: `≤ ${x}×`, ok: (m) => m <= x });
const atLeast = (x: number, text = `≥ ${x}×`): { text: string; ok: (m: number) => boolean } => ({ text, ok: (m) => m >= x });

/** Samples of `name` (ns per op) turned into turns/s, `sessions` turns per op. */
function tps(c: Comparison, name: string, sessions: number): Stats {
  return stats(c.ns(name).samples.map((ns) => (1e9 * sessions) / ns));
}

/** Per-round ratio of two contenders' time per turn. */
function perTurnRatio(c: Comparison, a: string, aSessions: number, b: string, bSessions: number): Stats {
  const sa = c.ns(a).samples;
  const sb = c.ns(b).samples;
  return stats(sa.map((x, i) => x / aSessions / (sb[i] / bSessions)));
}

const LABEL: Record<string, string> = {
  polestar: 'polestar DurableSession.turn',
  floor: "floor: polestar's rows by hand, one transaction",
  'floor-messages': 'floor: the 4 message rows, one transaction',
  langgraph: 'LangGraph checkpointer putWrites + put',
  mastra: 'Mastra storage saveMessages',
};

interface Anchors {
  readonly langgraph: TurnSystem | string;
  readonly mastra: TurnSystem | string;
}

/** The turn rows of one database: 1 session (polestar, floors, anchors) and `many` sessions (polestar, floor), one comparison. */
async function turnRows(db: 'sqlite' | 'pg', dbLabel: string, polestar: PolestarTurns, polestarMany: PolestarTurns, floorDb: FloorDb, anchors: Anchors, many: number): Promise<BenchRow[]> {
  const contenders: Contender[] = [
    turns('polestar', polestar, 1),
    turns('floor', new FloorTurns(floorDb, `floor-${db}-1`), 1),
    turns('floor-messages', new MessageFloorTurns(floorDb, `msgs-${db}-1`), 1),
  ];
  const rows: BenchRow[] = [];
  for (const [name, a] of Object.entries(anchors) as [string, TurnSystem | string][]) {
    if (typeof a === 'string') {
      console.error(`durable bench: ${name} on ${dbLabel} left out: ${a}`);
      rows.push(single(`durable.${db}.${name}.skipped`, `${LABEL[name]} on ${dbLabel} left out: ${a}`, '', 0));
    } else {
      contenders.push(turns(name, a, 1));
    }
  }
  contenders.push(turns(`polestar-${many}`, polestarMany, many), turns(`floor-${many}`, new FloorTurns(floorDb, `floor-${db}-${many}`), many));
  const c = await compare(contenders, { budget: durableBudget() });
  const names = contenders.map((x) => x.name).filter((n) => !n.endsWith(`-${many}`));
  for (const n of names) rows.push(ranged(`durable.${db}.${n}.tps`, `${LABEL[n]}, ${dbLabel}, 1 session`, 'turns/s', tps(c, n, 1)));
  rows.push(ranged(`durable.${db}.polestar/floor`, `polestar / floor (time per turn), ${dbLabel}, 1 session`, '×', c.ratio('polestar', 'floor'), atMost(1.3)));
  rows.push(ranged(`durable.${db}.polestar/floor-messages`, `polestar / the 4 message rows, ${dbLabel}, 1 session`, '×', c.ratio('polestar', 'floor-messages')));
  for (const n of ['langgraph', 'mastra']) {
    if (names.includes(n)) rows.push(ranged(`durable.${db}.${n}/polestar`, `${LABEL[n]} / polestar (time per turn; > 1: polestar is faster), ${dbLabel}`, '×', c.ratio(n, 'polestar'), atLeast(1, '> 1× (ahead)')));
  }
  const id = `durable.${db}${many}`;
  rows.push(ranged(`${id}.polestar.tps`, `polestar, ${dbLabel}, ${many} concurrent sessions`, 'turns/s', tps(c, `polestar-${many}`, many)));
  rows.push(ranged(`${id}.floor.tps`, `floor, ${dbLabel}, ${many} concurrent sessions (a transaction per turn)`, 'turns/s', tps(c, `floor-${many}`, many)));
  const ratioTarget = db === 'sqlite' ? atMost(1.3) : { text: '≤ 1.25× (≥ 0.8× its turns/s)', ok: (m: number) => m <= 1.25 };
  rows.push(ranged(`${id}.polestar/floor`, `polestar / floor (time per turn), ${dbLabel}, ${many} concurrent sessions`, '×', perTurnRatio(c, `polestar-${many}`, many, `floor-${many}`, many), ratioTarget));
  const scaling = perTurnRatio(c, 'polestar', 1, `polestar-${many}`, many);
  rows.push(ranged(`${id}.scaling`, `polestar turns/s at ${many} sessions / at 1 session, ${dbLabel}`, '×', scaling, db === 'sqlite' ? atLeast(3) : undefined));
  return rows;
}

/** Resume of a session of 1,000 messages against one SELECT of the same rows plus JSON.parse. */
async function resumeRows(db: 'sqlite' | 'pg', dbLabel: string, sessions: Sessions, reader: FloorDb): Promise<BenchRow[]> {
  const id = `resume-${db}-${randomBytes(4).toString('hex')}`;
  const big = await sessions.create({ agentId: id, sessionId: id });
  for (let t = 0; t < RESUME_MESSAGES / 4; t++) {
    await big.turn((ctx, session) => {
      for (const m of PAYLOADS[t % PAYLOADS.length]) session.history.append(m);
      ctx.get(Counter).n++;
    });
  }
  await big.close();
  const c = await compare(
    [
      {
        name: 'polestar',
        selfTimed: true,
        run: async (n) => {
          let ns = 0;
          for (let i = 0; i < n; i++) {
            const t0 = now();
            const s = await sessions.resume({ agentId: id, sessionId: id });
            ns += now() - t0;
            if (s.session.history.length !== RESUME_MESSAGES) throw new Error(`durable bench: resumed ${s.session.history.length} messages`);
            await s.close();
          }
          return ns;
        },
      },
      {
        name: 'floor',
        run: async (n) => {
          for (let i = 0; i < n; i++) {
            const rows = await reader.query('SELECT body FROM polestar_events WHERE session_id = ? ORDER BY seq', [id]);
            const messages = rows.map((r) => JSON.parse(r.body as string) as ChatMessage);
            if (messages.length !== RESUME_MESSAGES) throw new Error(`durable bench: the floor read ${messages.length} messages`);
          }
        },
      },
    ],
    { budget: durableBudget() },
  );
  const ms = (s: Stats): Stats => stats(s.samples.map((x) => x / 1e6));
  return [
    ranged(`durable.${db}.resume1000.polestar`, `polestar Sessions.resume of 1,000 messages, ${dbLabel}`, 'ms', ms(c.ns('polestar'))),
    ranged(`durable.${db}.resume1000.floor`, `floor: one SELECT of the same rows + JSON.parse, ${dbLabel}`, 'ms', ms(c.ns('floor'))),
    ranged(`durable.${db}.resume1000.polestar/floor`, `polestar resume / its floor, 1,000 messages, ${dbLabel}`, '×', c.ratio('polestar', 'floor'), atMost(3)),
  ];
}

const reason = (err: unknown): string => (err instanceof Error ? err.message.split('\n')[0] : String(err));

// ---- SQLite --------------------------------------------------------------------------------

async function sqliteRows(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-bench-durable-'));
  const cleanup: (() => Promise<void> | void)[] = [];
  try {
    const store = new SqliteSessionStore({ path: join(dir, 'polestar.db') });
    const server = await serverOn(store);
    cleanup.push(async () => {
      await server.dispose();
      await store.close();
    });
    const sessions = server.createContext().get(Sessions);
    const floor = new SqliteFloor(join(dir, 'floor.db'));
    cleanup.push(() => floor.close());
    for (const s of floorSchema('sqlite')) await floor.query(s);
    const sync: Record<string, string> = {};
    const pragma = async (client: Client): Promise<string> => {
      const mode = (await client.execute('PRAGMA journal_mode')).rows[0]?.[0];
      return `${String((await client.execute('PRAGMA synchronous')).rows[0]?.[0])}/${String(mode)}`;
    };
    sync.floor = floor.settings();
    const probe = (store as unknown as { _synchronous?: () => Promise<number> })._synchronous;
    sync.polestar = probe === undefined ? 'unknown' : String(await probe.call(store));

    let langgraph: TurnSystem | string;
    try {
      const [{ SqliteSaver }, { uuid6 }, { default: Database }] = await Promise.all([
        import('@langchain/langgraph-checkpoint-sqlite'),
        import('@langchain/langgraph-checkpoint'),
        import('better-sqlite3'),
      ]);
      const db = new Database(join(dir, 'langgraph.db'));
      cleanup.push(() => void db.close());
      const saver = new SqliteSaver(db);
      await saver.getTuple({ configurable: { thread_id: 'setup' } }); // runs its setup (WAL, tables)
      db.pragma('synchronous = FULL'); // the saver leaves it at the build's default: set, not assumed
      sync.langgraph = `${String(db.pragma('synchronous', { simple: true }))}/${String(db.pragma('journal_mode', { simple: true }))}`;
      langgraph = new LangGraphTurns(saver, uuid6);
    } catch (err) {
      langgraph = `@langchain/langgraph-checkpoint-sqlite could not load (${reason(err)}); it needs better-sqlite3 12.x built for this Node`;
    }

    let mastra: TurnSystem | string;
    try {
      const { LibSQLStore } = await import('@mastra/libsql');
      const client = createClient({ url: pathToFileURL(join(dir, 'mastra.db')).href, concurrency: 1 });
      cleanup.push(() => client.close());
      // (@mastra/libsql 0.16 types its own nested copy of @libsql/client; the calls it makes are the same)
      const m = new LibSQLStore({ client: client as never });
      await m.init();
      // Mastra sets synchronous=NORMAL on the client it is given; set it back to FULL.
      await client.execute('PRAGMA journal_mode = WAL');
      await client.execute('PRAGMA synchronous = FULL');
      sync.mastra = await pragma(client);
      mastra = new MastraTurns(m as unknown as MastraStoreLike);
    } catch (err) {
      mastra = `@mastra/libsql could not load (${reason(err)})`;
    }

    const polestar = new PolestarTurns(sessions, 'p1');
    const polestarMany = new PolestarTurns(sessions, `p${SQLITE_SESSIONS}`);
    const settings = Object.entries(sync).map(([k, v]) => `${k} ${v}`).join(', ');
    // (a store without the probe is shown as unknown and not checked)
    const allFull = Object.values(sync).every((v) => v === 'unknown' || v === '2' || v.startsWith('2/'));
    const rows: BenchRow[] = [
      { ...single('durable.sqlite.synchronous', `SQLite synchronous/journal_mode per contender (2 = FULL): ${settings}`, '', allFull ? 2 : 0), target: 'all 2 (FULL), wal', ok: allFull },
    ];
    rows.push(...(await turnRows('sqlite', 'SQLite', polestar, polestarMany, floor, { langgraph, mastra }, SQLITE_SESSIONS)));
    await polestar.close();
    await polestarMany.close();
    const reader = new SqliteFloor(store.path);
    cleanup.push(() => reader.close());
    rows.push(...(await resumeRows('sqlite', 'SQLite', sessions, reader)));
    return rows;
  } finally {
    for (const f of cleanup.reverse()) await (async () => f())().catch((err: unknown) => console.error(`durable bench: cleanup: ${reason(err)}`));
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- PostgreSQL ----------------------------------------------------------------------------

function redacted(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function pgRows(): Promise<BenchRow[]> {
  try {
    await admin('SELECT 1');
  } catch (err) {
    const text = `skipped: no PostgreSQL at ${redacted(PG_URL)} (${reason(err)}); POLESTAR_TEST_PG_URL names the server`;
    console.error(`durable bench: ${text}`);
    return [single('durable.pg.skipped', text, '', 0)];
  }
  const name = `polestar_bench_durable_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  const cleanup: (() => Promise<void> | void)[] = [];
  try {
    const store = new PostgresSessionStore({ connectionString: url, max: PG_MAX });
    const server = await serverOn(store);
    cleanup.push(async () => {
      await server.dispose();
      await store.close();
    });
    const sessions = server.createContext().get(Sessions);
    const floorPool = new pg.Pool({ connectionString: url, max: PG_MAX });
    const floor = new PgFloor(floorPool);
    cleanup.push(() => floor.close());
    for (const s of floorSchema('postgres')) await floor.query(s);
    const settings = (await floor.query("SELECT current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fs"))[0];

    let langgraph: TurnSystem | string;
    try {
      const [{ PostgresSaver }, { uuid6 }] = await Promise.all([import('@langchain/langgraph-checkpoint-postgres'), import('@langchain/langgraph-checkpoint')]);
      const pool = new pg.Pool({ connectionString: url, max: PG_MAX });
      cleanup.push(() => pool.end());
      const saver = new PostgresSaver(pool);
      await saver.setup();
      langgraph = new LangGraphTurns(saver, uuid6);
    } catch (err) {
      langgraph = `@langchain/langgraph-checkpoint-postgres could not load (${reason(err)})`;
    }
    let mastra: TurnSystem | string;
    try {
      const { PostgresStore } = await import('@mastra/pg');
      const m = new PostgresStore({ connectionString: url, max: PG_MAX });
      await m.init();
      // Mastra's close() ends its pool without waiting for it: wait here, so that the
      // database is not dropped under a connection still open (whose error would be unhandled).
      const pool = (m.db as unknown as { $pool: pg.Pool }).$pool;
      pool.on('error', () => undefined);
      cleanup.push(async () => {
        await m.close();
        for (let i = 0; i < 100 && pool.totalCount > 0; i++) await new Promise((r) => setTimeout(r, 10));
      });
      mastra = new MastraTurns(m as unknown as MastraStoreLike);
    } catch (err) {
      mastra = `@mastra/pg could not load (${reason(err)})`;
    }

    const polestar = new PolestarTurns(sessions, 'p1');
    const polestarMany = new PolestarTurns(sessions, `p${PG_SESSIONS}`);
    const durable = settings.sc === 'on' && settings.fs === 'on';
    const rows: BenchRow[] = [
      { ...single('durable.pg.synchronous', `PostgreSQL synchronous_commit=${String(settings.sc)}, fsync=${String(settings.fs)} (loopback, pools of ${PG_MAX})`, '', durable ? 1 : 0), target: 'on, on', ok: durable },
    ];
    rows.push(...(await turnRows('pg', 'PostgreSQL', polestar, polestarMany, floor, { langgraph, mastra }, PG_SESSIONS)));
    await polestar.close();
    await polestarMany.close();
    rows.push(...(await resumeRows('pg', 'PostgreSQL', sessions, floor)));
    return rows;
  } finally {
    for (const f of cleanup.reverse()) await (async () => f())().catch((err: unknown) => console.error(`durable bench: cleanup: ${reason(err)}`));
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/** Runs the durable area and returns its rows. */
export function run(): Promise<BenchReport> {
  return withLoad(`durable turns: polestar, its floors and anchors (SQLite, PostgreSQL; ${durableBudget().name} budget)`, async () => [...(await sqliteRows()), ...(await pgRows())]);
}

await runIfMain('durable.bench.js', run);
