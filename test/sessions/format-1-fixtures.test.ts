/**
 * The format-1 corpus (test/fixtures/session-rows/format-1/, see its README.md): rows written
 * by the release before durable agents, read back by the code of the day through the
 * public API. Each store is checked from rows only, never from what the code of the day
 * would write: SQLite from a copy of the stored file and from its JSON rows put into a
 * fresh file, PostgreSQL from its JSON rows put into a fresh database (see pg-target.ts for
 * when those run or are skipped). Every value asserted is the one README.md promises.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Sessions, type ChatMessage, type DurableSession, type SessionStore, type SystemContext } from 'polestar-di';
import { PostgresSessionStore } from 'polestar-di/sessions/postgres';
import { SqliteSessionStore } from 'polestar-di/sessions/sqlite';
import { Draft, Memory, Profile, Settings, appServer } from '../fixtures/session-rows/app.js';
import { dumpSqlite, loadPostgres, loadSqlite, type CorpusDump, type RowValue } from '../fixtures/session-rows/rows.js';
import { largeText } from '../fixtures/session-rows/scenario.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const corpus = fileURLToPath(new URL('../fixtures/session-rows/format-1/', import.meta.url));
const readDump = (store: string): CorpusDump => JSON.parse(readFileSync(join(corpus, store, 'rows.json'), 'utf8')) as CorpusDump;
const sqliteRows = readDump('sqlite');
const postgresRows = readDump('postgres');

/** The rows of `table` in `dump` matching `where`, as objects by column name. */
function rowsOf(dump: CorpusDump, table: string, where: Record<string, RowValue> = {}): Record<string, RowValue>[] {
  const t = dump.tables.find((x) => x.name === table);
  if (t === undefined) throw new Error(`the ${dump.store} corpus has no table ${table}`);
  const objects = t.rows.map((r) => Object.fromEntries(t.columns.map((c, i) => [c.name, r[i]])));
  return objects.filter((o) => Object.entries(where).every(([k, v]) => o[k] === v));
}

/** The one row of `table` matching `where`. */
function rowOf(dump: CorpusDump, table: string, where: Record<string, RowValue>): Record<string, RowValue> {
  const found = rowsOf(dump, table, where);
  if (found.length !== 1) throw new Error(`${found.length} rows of ${table} match ${JSON.stringify(where)} in the ${dump.store} corpus`);
  return found[0];
}

const at = (dump: CorpusDump, table: string, where: Record<string, RowValue>, column: string): Date => new Date(Number(rowOf(dump, table, where)[column]));

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

const CHAT_BASIC: ChatMessage[] = [
  user('Olá! Vai chover em São Paulo amanhã? 🌧️'),
  { role: 'assistant', content: '', toolCalls: [{ callId: 'call_w1', name: 'weather', arguments: { city: 'São Paulo', days: 1 } }] },
  { role: 'tool', callId: 'call_w1', content: '{"forecast":"chuva leve","max":"22 °C"}' },
  assistant('Sim: chuva leve, máxima de 22 °C. 傘を持って行ってください。'),
  user('Obrigada!'),
  assistant('De nada — até amanhã! 👋'),
];
const BIG: ChatMessage = { role: 'user', content: largeText(), meta: { source: 'upload', raw: 'nul:\u0000 lone:\ud800 end' } };

const agentLocals = (s: DurableSession): { memory: Memory; settings: Settings } => ({ memory: s.agent.ctx.get(Memory), settings: s.agent.ctx.get(Settings) });
const sessionLocals = (s: DurableSession): { draft: Draft; profile: Profile } => ({ draft: s.session.ctx.get(Draft), profile: s.session.ctx.get(Profile) });
const memory = (facts: string[], turns = facts.length): Memory => Object.assign(new Memory(), { facts, turns });
const profile = (name: string, tags: string[]): Profile => Object.assign(new Profile(), { name, tags });
const draftOf = (text: string): Draft => Object.assign(new Draft(), { text });

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** `[seq, turn, kind, status]` of every stored event of a session. */
async function eventLine(sessions: Sessions, id: string): Promise<[number, number, string, string][]> {
  return (await collect(sessions.events(id))).map((e) => [e.seq, e.turn, e.kind, e.status]);
}

/** Runs `fn` on a fresh server of the application over `store`, then disposes the server. */
async function withApp(store: SessionStore, fn: (sessions: Sessions, ctx: SystemContext) => Promise<void>): Promise<void> {
  const { server, ctx } = await appServer(store);
  try {
    await fn(ctx.get(Sessions), ctx);
  } finally {
    await server.dispose();
  }
}

/** One way of getting a store onto the corpus: a fresh one per test file section, closed by `done`. */
interface Source {
  readonly rows: CorpusDump;
  open(): Promise<{ readonly store: SessionStore; done(): Promise<void> }>;
}

/** Every check of the corpus on the store `source` opens. */
function corpusChecks(source: Source): void {
  const dump = source.rows;
  let store: SessionStore;
  let done: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ store, done } = await source.open());
  });
  afterAll(async () => {
    await done?.();
  });

  test('the corpus is the format-1 one: schema 2, every row of format 1', () => {
    expect(dump.schemaVersion).toBe(2);
    expect(rowsOf(dump, 'polestar_meta')).toEqual([{ key: 'schema', value: '2' }]);
    for (const table of ['polestar_sessions', 'polestar_events', 'polestar_checkpoints']) {
      expect(new Set(rowsOf(dump, table).map((r) => r.format))).toEqual(new Set([1]));
    }
  });

  test('list() gives every session with its agent id, committed turn, meta and update time', async () => {
    await withApp(store, async (sessions) => {
      const page = await sessions.list();
      expect(page.cursor).toBeUndefined();
      const items = page.items.map((i) => [i.sessionId, i.agentId, i.committedTurn, i.meta]);
      expect(items).toEqual([
        ['big-message', 'summarizer:1', 2, null],
        ['chat-basic', 'assistant:ana', 2, { user: 'ana', locale: 'pt-BR', tags: ['beta', 'ação'] }],
        ['checkpointed', 'coder:9', 4, { repo: 'polestar-di', branch: 'main' }],
        ['desk-1', 'researcher:ana', 1, { desk: 'desk-1' }],
        ['desk-2', 'researcher:ana', 1, { desk: 'desk-2' }],
        ['held-idle', 'worker:idle', 1, null],
        ['interrupted', 'worker:7', 1, null],
        ['rolled-back', 'planner:3', 2, null],
        ['versioned', 'profiler:1', 2, null],
      ]);
      for (const i of page.items) expect(i.updatedAt).toEqual(at(dump, 'polestar_sessions', { session_id: i.sessionId }, 'updated_at'));
      expect((await sessions.list({ agentId: 'researcher:ana' })).items.map((i) => i.sessionId)).toEqual(['desk-1', 'desk-2']);
    });
  });

  test('chat-basic: history with tool calls, every local, meta; its turn key refuses a repeat; a new turn commits on top', async () => {
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'assistant:ana', sessionId: 'chat-basic' });
      expect(s.meta).toEqual({ user: 'ana', locale: 'pt-BR', tags: ['beta', 'ação'] });
      expect(s.committedTurn).toBe(2);
      expect(s.interruptedTurns).toEqual([]);
      expect(s.session.history.messages).toEqual(CHAT_BASIC);
      expect(agentLocals(s)).toEqual({
        memory: memory(['Ana mora em São Paulo', 'Ana agradece']),
        settings: Object.assign(new Settings(), { model: 'fixture-model-1', temperature: 0.25 }),
      });
      expect(sessionLocals(s)).toEqual({ draft: draftOf('rascunho: levar guarda-chuva ☂'), profile: profile('Ana Luíza', ['pt-BR']) });
      expect(await eventLine(sessions, 'chat-basic')).toEqual([
        [1, 1, 'history/append', 'committed'],
        [2, 1, 'history/append', 'committed'],
        [3, 1, 'history/append', 'committed'],
        [4, 1, 'history/append', 'committed'],
        [5, 1, 'tool/call', 'committed'],
        [6, 1, 'usage', 'committed'],
        [7, 2, 'note', 'aborted'],
        [8, 2, 'history/append', 'committed'],
        [9, 2, 'history/append', 'committed'],
      ]);
      const events = await collect(sessions.events('chat-basic'));
      expect(events.slice(4, 7).map((e) => e.body)).toEqual([{ name: 'weather', callId: 'call_w1', ms: 41 }, { inputTokens: 812, outputTokens: 64 }, { text: 'the model call failed' }]);

      let ran = false;
      await expect(s.turn(() => void (ran = true), { key: 'msg-0002' })).rejects.toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 2 });
      expect(ran).toBe(false);
      await s.turn((_c, session) => void session.history.append(user('Mais uma pergunta')), { key: 'msg-0003' });
      expect(s.committedTurn).toBe(3);
      await s.close();
      const again = await sessions.resume({ agentId: 'assistant:ana', sessionId: 'chat-basic' });
      expect(again.committedTurn).toBe(3);
      expect(again.session.history.messages).toEqual([...CHAT_BASIC, user('Mais uma pergunta')]);
      await expect(again.turn(() => undefined, { key: 'msg-0003' })).rejects.toMatchObject({ code: 'TURN_ALREADY_COMMITTED', turn: 3 });
    });
  });

  test('big-message: the compacted history; rollback brings back the large message with NUL and a lone surrogate', async () => {
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'summarizer:1', sessionId: 'big-message' });
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.messages).toEqual([{ role: 'system', content: 'Summary of earlier turns: 240 greetings from Köln (große Datei).' }, user('E agora?')]);
      const first = (await collect(sessions.events('big-message')))[0];
      expect(first).toEqual({ seq: 1, turn: 1, kind: 'history/append', body: BIG, status: 'committed' });
      expect([BIG.content.length, Buffer.byteLength(BIG.content)]).toEqual([11_760, 16_080]);
      expect((await s.checkpoints()).map((c) => c.turn)).toEqual([0, 1, 2]);
      await s.rollback(1);
      expect(s.session.history.messages).toEqual([BIG, assistant('Resumo: 240 linhas de saudações de Köln. ✅')]);
      await s.turn((_c, session) => void session.history.append(user('de novo')));
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.length).toBe(3);
    });
  });

  test('versioned: a fixture.profile v2 row restored, and after rollback a v1 row read by the v2 serializer', async () => {
    expect(JSON.parse(String(rowOf(dump, 'polestar_checkpoints', { session_id: 'versioned', turn: 1 }).locals))).toContainEqual({
      key: 'fixture.profile',
      scope: 'session',
      version: 1,
      data: 'Zoë',
    });
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'profiler:1', sessionId: 'versioned' });
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.messages).toEqual([user('Sou a Zoë.'), user('Cliente VIP.')]);
      const live = s.session.ctx.get(Profile);
      expect(live).toEqual(profile('Zoë', ['vip']));
      await s.rollback(1);
      expect(s.session.ctx.get(Profile)).toBe(live); // restored in place
      expect(live).toEqual(profile('Zoë', []));
      expect(s.session.history.messages).toEqual([user('Sou a Zoë.')]);
      await s.turn((_c, session) => void session.ctx.getMut(Profile).tags.push('returning'));
      expect(s.committedTurn).toBe(2);
      await s.close();
      const again = await sessions.resume({ agentId: 'profiler:1', sessionId: 'versioned' });
      expect(again.session.ctx.get(Profile)).toEqual(profile('Zoë', ['returning']));
    });
  });

  test('checkpointed: the kept and pinned checkpoints; rollback to the pinned one restores history and locals; a new turn commits on top', async () => {
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'coder:9', sessionId: 'checkpointed' });
      expect(s.committedTurn).toBe(4);
      expect(s.session.history.length).toBe(8);
      const created = (turn: number): Date => at(dump, 'polestar_checkpoints', { session_id: 'checkpointed', turn }, 'created_at');
      expect(await s.checkpoints()).toEqual([
        { turn: 0, pinned: false, createdAt: created(0) },
        { turn: 2, label: 'before-refactor', pinned: true, createdAt: created(2) },
        { turn: 3, pinned: false, createdAt: created(3) },
        { turn: 4, pinned: false, createdAt: created(4) },
      ]);
      expect(agentLocals(s).memory).toEqual(memory(['step 1', 'step 2', 'step 3', 'step 4']));
      await expect(s.rollback(1)).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_FOUND' });
      const kept = s.agent.ctx.get(Memory);
      await s.rollback(2);
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.messages).toEqual([user('step 1'), assistant('done 1'), user('step 2'), assistant('done 2')]);
      expect(s.agent.ctx.get(Memory)).toBe(kept); // fixture.memory has restore: in place
      expect(kept).toEqual(memory(['step 1', 'step 2']));
      expect(s.session.ctx.get(Draft)).toEqual(draftOf('after step 2'));
      await s.turn((_c, session) => void session.history.append(user('step 3, again')));
      expect(s.committedTurn).toBe(3);
      expect(await eventLine(sessions, 'checkpointed')).toEqual([
        [1, 1, 'history/append', 'committed'],
        [2, 1, 'history/append', 'committed'],
        [3, 2, 'history/append', 'committed'],
        [4, 2, 'history/append', 'committed'],
        [5, 3, 'history/append', 'superseded'],
        [6, 3, 'history/append', 'superseded'],
        [7, 4, 'history/append', 'superseded'],
        [8, 4, 'history/append', 'superseded'],
        [9, 3, 'history/append', 'committed'],
      ]);
    });
  });

  test('rolled-back: the state after its rollback, the superseded turns, and the pinned checkpoint still kept', async () => {
    expect(rowsOf(dump, 'polestar_rollbacks')).toEqual([
      expect.objectContaining({ session_id: 'rolled-back', from_turn: 3, to_turn: 1 }),
    ]);
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'planner:3', sessionId: 'rolled-back' });
      expect(s.committedTurn).toBe(2);
      expect(s.session.history.messages).toEqual([user('plan A'), user('plan D (after the rollback)')]);
      expect(agentLocals(s).memory).toEqual(memory(['plan A', 'plan D']));
      expect(sessionLocals(s).draft).toEqual(draftOf('D'));
      expect(await eventLine(sessions, 'rolled-back')).toEqual([
        [1, 1, 'history/append', 'committed'],
        [2, 2, 'history/append', 'superseded'],
        [3, 3, 'history/append', 'superseded'],
        [4, 2, 'history/append', 'committed'],
      ]);
      expect((await s.checkpoints()).map((c) => [c.turn, c.label, c.pinned])).toEqual([
        [0, undefined, false],
        [1, 'plan-v1', true],
        [2, undefined, false],
      ]);
      await s.rollback(1);
      expect(s.session.history.messages).toEqual([user('plan A')]);
      expect(sessionLocals(s).draft).toEqual(draftOf('A'));
      await s.turn((_c, session) => void session.history.append(user('plan E')));
      expect(s.committedTurn).toBe(2);
    });
  });

  test('desk-1 and desk-2, one agent id: each session restores the agent locals it committed (format 1)', async () => {
    // Format 1 stores agent locals per session. Under durable agents the agent's locals come
    // from the session that committed last (desk-2): this expectation changes with that work.
    await withApp(store, async (sessions) => {
      for (const [id, fact] of [
        ['desk-1', 'desk-1: sources on tides'],
        ['desk-2', 'desk-2: sources on winds'],
      ] as const) {
        const s = await sessions.resume({ agentId: 'researcher:ana', sessionId: id });
        expect([s.committedTurn, s.meta, s.session.history.messages]).toEqual([1, { desk: id }, [user(`research for ${id}`)]]);
        expect(agentLocals(s).memory).toEqual(memory([fact]));
        await s.close();
      }
    });
  });

  test('held-idle: the expired lease of the crashed owner is taken over; nothing was interrupted', async () => {
    const row = rowOf(dump, 'polestar_sessions', { session_id: 'held-idle' });
    expect([row.lease_owner, row.open_turn]).toEqual(['fixture-crashed-host', null]);
    expect(Number(row.lease_expires_at)).toBeLessThan(Date.now());
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'worker:idle', sessionId: 'held-idle' });
      expect(s.interruptedTurns).toEqual([]);
      expect(s.committedTurn).toBe(1);
      expect(s.session.history.messages).toEqual([user('idle work')]);
      expect(agentLocals(s).memory).toEqual(memory(['idle']));
      await s.turn((_c, session) => void session.history.append(user('more work')));
      expect(s.committedTurn).toBe(2);
    });
  });

  test('interrupted: turn 2 begun and never ended is reported with its flushed events; the state is turn 1; a new turn 2 commits', async () => {
    const row = rowOf(dump, 'polestar_sessions', { session_id: 'interrupted' });
    expect([row.lease_owner, row.open_turn, row.open_attempt]).toEqual(['fixture-crashed-host', 2, 1]);
    expect(rowOf(dump, 'polestar_attempts', { session_id: 'interrupted', turn: 2 }).status).toBe('started');
    await withApp(store, async (sessions) => {
      const s = await sessions.resume({ agentId: 'worker:7', sessionId: 'interrupted' });
      expect(s.interruptedTurns).toEqual([
        {
          turn: 2,
          startedAt: at(dump, 'polestar_attempts', { session_id: 'interrupted', turn: 2 }, 'started_at'),
          events: [
            { seq: 3, turn: 2, kind: 'history/append', body: user('step 2: deploy'), status: 'aborted' },
            { seq: 4, turn: 2, kind: 'tool/call', body: { name: 'deploy', callId: 'call_d2', args: { env: 'staging' } }, status: 'aborted' },
          ],
        },
      ]);
      expect(s.committedTurn).toBe(1);
      expect(s.session.history.messages).toEqual([user('step 1'), assistant('step 1 done')]);
      expect(agentLocals(s).memory).toEqual(memory(['step 1']));
      expect(sessionLocals(s).draft).toEqual(draftOf('one'));
      await s.turn((_c, session) => void session.history.append(user('step 2, retried')));
      expect(s.committedTurn).toBe(2);
      expect((await eventLine(sessions, 'interrupted')).map(([seq, turn, , status]) => [seq, turn, status])).toEqual([
        [1, 1, 'committed'],
        [2, 1, 'committed'],
        [3, 2, 'aborted'],
        [4, 2, 'aborted'],
        [5, 2, 'committed'],
      ]);
    });
  });
}

describe('format-1 corpus on SQLite, from the stored file', () => {
  test('the stored file holds exactly the rows of sqlite/rows.json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'polestar-f1-'));
    try {
      await copyFile(join(corpus, 'sqlite', 'sessions.db'), join(dir, 'sessions.db'));
      const fromFile = await dumpSqlite(join(dir, 'sessions.db'), sqliteRows);
      expect(fromFile.tables).toEqual(sqliteRows.tables);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  corpusChecks({
    rows: sqliteRows,
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'polestar-f1-'));
      await copyFile(join(corpus, 'sqlite', 'sessions.db'), join(dir, 'sessions.db'));
      const store = new SqliteSessionStore({ path: join(dir, 'sessions.db') });
      return { store, done: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
    },
  });
});

describe('format-1 corpus on SQLite, from its JSON rows', () => {
  corpusChecks({
    rows: sqliteRows,
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'polestar-f1-'));
      await loadSqlite(sqliteRows, join(dir, 'sessions.db'));
      const store = new SqliteSessionStore({ path: join(dir, 'sessions.db') });
      return { store, done: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
    },
  });
});

const target = await pgTarget();

describePg(target)('format-1 corpus on PostgreSQL, from its JSON rows', () => {
  corpusChecks({
    rows: postgresRows,
    async open() {
      if (!target.ok) throw new Error('unreachable: describePg runs this only with a server');
      const db = await createTestDatabase(target.adminUrl, 'format1');
      try {
        await loadPostgres(postgresRows, db.url);
      } catch (err) {
        await db.drop();
        throw err;
      }
      const store = new PostgresSessionStore({ connectionString: db.url, max: 4 });
      return { store, done: async () => (await store.close(), await db.drop()) };
    },
  });
});
