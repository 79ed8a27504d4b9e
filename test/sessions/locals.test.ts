/**
 * Persisted locals in a service (SPEC §13.1, §13.6): `deserialize` and `restore` get fresh
 * mutable data; on resume the locals are restored before `setup`, so what `setup` captures
 * is the persisted instance; `restore` keeps the live instance across a failed turn and a
 * rollback; `insert` of a restored token during a resumed `setup`; a rollback that is all
 * or nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentError,
  AgentsPlugin,
  MemorySessionStore,
  Server,
  SessionError,
  Sessions,
  SessionsPlugin,
  type AgentSetup,
  type DurableSession,
  type JsonValue,
  type LocalSerializer,
  type SessionStore,
} from '../../src/index.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { delegateStore } from './harness.js';

/** An agent-scope local whose constructor keeps the array it is given. */
class Notes {
  readonly items: string[];
  disposed = false;
  constructor(items: string[] = []) {
    this.items = items;
  }
  [Symbol.dispose](): void {
    this.disposed = true;
  }
}

/** A session-scope local. */
class Draft {
  text = '';
}

interface Knobs {
  /** Make `deserialize` throw. */
  failDeserialize?: boolean;
  /** Make `restore` throw (always, or for the data the function picks). */
  failRestore?: boolean | ((data: JsonValue) => boolean);
  /** Every `data` `deserialize` and `restore` got. */
  seen?: JsonValue[];
}

function notesSerializer(withRestore: boolean, knobs: Knobs = {}): LocalSerializer<Notes> {
  return {
    key: 'test.notes',
    version: 1,
    scope: 'agent',
    serialize: (n) => n.items,
    deserialize: (data) => {
      knobs.seen?.push(data);
      if (knobs.failDeserialize === true) throw new Error('garbage notes');
      return new Notes(data as string[]);
    },
    ...(withRestore
      ? {
          restore: (target: Notes, data: JsonValue) => {
            knobs.seen?.push(data);
            const fail = knobs.failRestore;
            if (fail === true || (typeof fail === 'function' && fail(data))) throw new Error('restore refused');
            target.items.length = 0;
            for (const x of data as string[]) target.items.push(x);
          },
        }
      : {}),
  };
}

const draftSerializer: LocalSerializer<Draft> = {
  key: 'test.draft',
  version: 1,
  scope: 'session',
  serialize: (d) => d.text,
  deserialize: (data) => Object.assign(new Draft(), { text: data as string }),
};

async function serverOn(store: SessionStore, withRestore: boolean, knobs: Knobs = {}): Promise<{ server: Server; sessions: Sessions }> {
  const server = new Server();
  server.registerLocal(Notes, { per: 'agent' });
  server.registerLocal(Draft, { per: 'session' });
  server.addPlugins(
    new AgentsPlugin(),
    new SessionsPlugin({ store, serializers: [[Notes, notesSerializer(withRestore, knobs)], [Draft, draftSerializer]] }),
  );
  await server.finish();
  return { server, sessions: server.createContext().get(Sessions) };
}

const say = (s: DurableSession, content: string, note?: string): Promise<void> =>
  s.turn((turnCtx, session) => {
    session.history.append({ role: 'user', content });
    if (note !== undefined) turnCtx.get(Notes).items.push(note);
  });

const contents = (s: DurableSession): string[] => s.session.history.messages.map((m) => m.content as string);

describe('serializers', () => {
  test('restore must be a function when given: a TypeError naming the serializer key', () => {
    const bad = { key: 'app.bad', version: 1, scope: 'agent', serialize: () => 1, deserialize: () => 1, restore: 'yes' };
    expect(() => new SessionsPlugin({ serializers: [[Notes, bad]] as never })).toThrow(TypeError);
    expect(() => new SessionsPlugin({ serializers: [[Notes, bad]] as never })).toThrow(/"app\.bad".*restore must be a function/);
    expect(() => new SessionsPlugin({ serializers: [[Notes, { ...bad, restore: undefined }]] as never })).not.toThrow();
  });

  test('deserialize and restore get a fresh, mutable copy per call; changing it changes nothing stored', async () => {
    const store = new MemorySessionStore();
    const knobs: Knobs = { seen: [] };
    const a = await serverOn(store, false, knobs);
    const s = await a.sessions.create({ agentId: 'a', sessionId: 's' });
    await say(s, 'one', 'x');
    await s.close();
    const again = await a.sessions.resume({ agentId: 'a', sessionId: 's' });
    await say(again, 'two', 'y'); // pushes into the array deserialize kept
    await expect(again.turn((c) => {
      c.get(Notes).items.push('lost');
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(again.agent.ctx.get(Notes).items).toEqual(['x', 'y']);
    again.agent.ctx.get(Notes).items.push('outside a turn'); // a mutable copy, not the stored checkpoint
    expect((await store.load('s')).checkpoint.locals[0]?.data).toEqual(['x', 'y']);
    const [first, second] = knobs.seen as JsonValue[];
    expect(Object.isFrozen(first)).toBe(false);
    expect(second).not.toBe(first);
    await a.server.dispose();
  });
});

describe('locals captured in setup', () => {
  test('on resume the persisted locals are restored before setup: setup sees and captures the persisted instance', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store, false);
    const created = await a.sessions.create({ agentId: 'a', sessionId: 's' });
    await say(created, 'one', 'kept');
    await created.turn((_c, session) => void (session.ctx.get(Draft).text = 'draft'));
    await created.close();
    let seen: Notes | undefined;
    let itemsInSetup: string[] = [];
    const setup: AgentSetup = (agentCtx) => {
      seen = agentCtx.getMut(Notes);
      itemsInSetup = [...seen.items];
    };
    const again = await a.sessions.resume({ agentId: 'a', sessionId: 's', setup });
    expect(itemsInSetup).toEqual(['kept']);
    expect(again.agent.ctx.get(Notes)).toBe(seen);
    expect(again.session.ctx.get(Draft).text).toBe('draft'); // session-scope locals: restored into the session, made after setup
    seen?.items.push('through the capture');
    await say(again, 'two');
    expect((await store.load('s')).checkpoint.locals.find((l) => l.key === 'test.notes')?.data).toEqual(['kept', 'through the capture']);
    await a.server.dispose();
  });

  test('the per-agent instance replaced by the restored one is disposed', async () => {
    const store = new MemorySessionStore();
    const made: Notes[] = [];
    const server = new Server();
    server.registerLocal(Notes, () => {
      const n = new Notes();
      made.push(n);
      return n;
    }, { per: 'agent' });
    server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Notes, notesSerializer(false)]] }));
    await server.finish();
    const sessions = server.createContext().get(Sessions);
    await (await sessions.create({ agentId: 'a', sessionId: 's' })).close();
    const before = made.length;
    const again = await sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(made).toHaveLength(before + 1);
    expect(made.at(-1)?.disposed).toBe(true);
    expect(again.agent.ctx.get(Notes)).not.toBe(made.at(-1));
    await server.dispose();
  });

  test('with restore, a failed turn restores the live instance in place: the reference setup captured stays the persisted one', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store, true);
    let captured: Notes | undefined;
    const s = await a.sessions.create({ agentId: 'a', sessionId: 's', setup: (agentCtx) => void (captured = agentCtx.getMut(Notes)) });
    await s.turn(() => void captured?.items.push('one'));
    await expect(s.turn(() => {
      captured?.items.push('lost');
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(s.agent.ctx.get(Notes)).toBe(captured);
    expect(captured?.items).toEqual(['one']);
    await s.turn(() => void captured?.items.push('two'));
    expect((await store.load('s')).checkpoint.locals.find((l) => l.key === 'test.notes')?.data).toEqual(['one', 'two']);
    await a.server.dispose();
  });

  test('without restore, a failed turn replaces the instance (documented): a reference captured earlier is no longer the persisted one', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store, false);
    let captured: Notes | undefined;
    const s = await a.sessions.create({ agentId: 'a', sessionId: 's', setup: (agentCtx) => void (captured = agentCtx.getMut(Notes)) });
    await s.turn(() => void captured?.items.push('one'));
    await expect(s.turn(() => {
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(s.agent.ctx.get(Notes)).not.toBe(captured);
    expect(s.agent.ctx.get(Notes).items).toEqual(['one']);
    await s.turn((c) => void c.get(Notes).items.push('read at call time'));
    expect((await store.load('s')).checkpoint.locals.find((l) => l.key === 'test.notes')?.data).toEqual(['one', 'read at call time']);
    await a.server.dispose();
  });

  test('a restore that throws after a failed turn disposes the session (DESERIALIZE_FAILED); the store keeps the last commit', async () => {
    const store = new MemorySessionStore();
    const knobs: Knobs = {};
    const a = await serverOn(store, true, knobs);
    const s = await a.sessions.create({ agentId: 'a', sessionId: 's' });
    await say(s, 'one', 'one');
    knobs.failRestore = true;
    const err = await s.turn((c) => {
      c.get(Notes).items.push('lost');
      throw new Error('boom');
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionError);
    expect(err).toMatchObject({ code: 'DESERIALIZE_FAILED', sessionId: 's' });
    expect((err as Error).message).toMatch(/restore refused.*disposed.*resume/s);
    await expect(s.turn(() => undefined)).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    knobs.failRestore = false;
    const again = await a.sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(again.committedTurn).toBe(1);
    expect(again.agent.ctx.get(Notes).items).toEqual(['one']);
    await a.server.dispose();
  });
});

describe('insert during a resumed setup', () => {
  test('without restore: insert of a restored token is refused with a TypeError naming it; nothing is published', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store, false);
    const setup: AgentSetup = (agentCtx) => void agentCtx.insert(new Notes(['fresh']));
    const s = await a.sessions.create({ agentId: 'a', sessionId: 's', setup }); // create is unchanged
    expect(s.agent.ctx.get(Notes).items).toEqual(['fresh']);
    await s.close();
    const err = await a.sessions.resume({ agentId: 'a', sessionId: 's', setup }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    const cause = (err as AgentError).cause;
    expect(cause).toBeInstanceOf(TypeError);
    expect((cause as Error).message).toMatch(/setup inserted Notes.*"test\.notes".*getMut\(Notes\).*restore/);
    expect(a.sessions.get('s')).toBeUndefined();
    expect((await store.load('s')).info.lease).toBeUndefined();
    // a token that was not restored may still be inserted
    await expect(a.sessions.resume({ agentId: 'a', sessionId: 's', setup: (agentCtx) => void agentCtx.insert(new Draft()) })).resolves.toBeDefined();
    await a.server.dispose();
  });

  test('with restore: the inserted instance is restored in place and kept', async () => {
    const store = new MemorySessionStore();
    const a = await serverOn(store, true);
    let inserted: Notes | undefined;
    const setup: AgentSetup = (agentCtx) => {
      inserted = new Notes(['default']);
      agentCtx.insert(inserted);
    };
    const s = await a.sessions.create({ agentId: 'a', sessionId: 's', setup });
    await s.turn(() => void inserted?.items.push('one'));
    await s.close();
    const again = await a.sessions.resume({ agentId: 'a', sessionId: 's', setup });
    expect(again.agent.ctx.get(Notes)).toBe(inserted);
    expect(inserted?.items).toEqual(['default', 'one']);
    await again.turn(() => void inserted?.items.push('two'));
    expect((await store.load('s')).checkpoint.locals.find((l) => l.key === 'test.notes')?.data).toEqual(['default', 'one', 'two']);
    await a.server.dispose();
  });
});

const dir = mkdtempSync(join(tmpdir(), 'polestar-locals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: [string, () => SessionStore][] = [
  ['memory', () => new MemorySessionStore()],
  ['sqlite', () => new SqliteSessionStore({ path: join(dir, `rollback-${Math.random().toString(36).slice(2)}.db`) })],
];

describe.each(stores)('rollback on the %s store', (_name, makeStore) => {
  async function threeTurns(withRestore: boolean, knobs: Knobs): Promise<{ store: SessionStore; server: Server; sessions: Sessions; s: DurableSession }> {
    const store = makeStore();
    const { server, sessions } = await serverOn(store, withRestore, knobs);
    const s = await sessions.create({ agentId: 'a', sessionId: 's' });
    await say(s, 'a', 'a');
    await s.checkpoint('first');
    await say(s, 'b', 'b');
    await say(s, 'c', 'c');
    return { store, server, sessions, s };
  }

  test('a failing deserializer leaves the store and the live session as they were (DESERIALIZE_FAILED)', async () => {
    const knobs: Knobs = {};
    const { store, server, s } = await threeTurns(false, knobs);
    knobs.failDeserialize = true;
    const err = await s.rollback(1).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DESERIALIZE_FAILED', sessionId: 's' });
    expect((await store.load('s')).info.committedTurn).toBe(3);
    expect(s.committedTurn).toBe(3);
    expect(contents(s)).toEqual(['a', 'b', 'c']);
    knobs.failDeserialize = false;
    await say(s, 'd', 'd');
    expect(s.committedTurn).toBe(4);
    await s.close();
    const again = await (await serverOn(store, false)).sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(again.committedTurn).toBe(4);
    expect(contents(again)).toEqual(['a', 'b', 'c', 'd']);
    expect(again.agent.ctx.get(Notes).items).toEqual(['a', 'b', 'c', 'd']);
    await again.agent.ctx.server.dispose();
    await server.dispose();
    await store.close();
  });

  test('with restore, the live instance is restored in place; a restore that throws changes nothing', async () => {
    const knobs: Knobs = {};
    const { store, server, s } = await threeTurns(true, knobs);
    const live = s.agent.ctx.get(Notes);
    knobs.failRestore = (data) => (data as string[]).length === 1; // turn 1's checkpoint; putting ['a', 'b', 'c'] back works
    const err = await s.rollback(1).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DESERIALIZE_FAILED', sessionId: 's' });
    expect((err as Error).message).toMatch(/restore refused.*Nothing was rolled back.*retry/s);
    expect(s.agent.ctx.get(Notes)).toBe(live);
    expect(live.items).toEqual(['a', 'b', 'c']);
    expect((await store.load('s')).info.committedTurn).toBe(3);
    expect(contents(s)).toEqual(['a', 'b', 'c']);
    knobs.failRestore = false;
    await s.rollback(1);
    expect(s.agent.ctx.get(Notes)).toBe(live);
    expect(live.items).toEqual(['a']);
    expect(s.committedTurn).toBe(1);
    expect(contents(s)).toEqual(['a']);
    await say(s, 'e', 'e');
    expect((await store.load('s')).checkpoint).toMatchObject({ turn: 2, locals: [{ key: 'test.notes', data: ['a', 'e'] }, { key: 'test.draft' }] });
    await server.dispose();
    await store.close();
  });

  test('a restore that throws and can not be undone: the store is left as it was and the session is disposed', async () => {
    const knobs: Knobs = {};
    const { store, server, sessions, s } = await threeTurns(true, knobs);
    knobs.failRestore = true;
    const err = await s.rollback(1).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DESERIALIZE_FAILED', sessionId: 's' });
    expect((err as Error).message).toMatch(/disposed.*resume/s);
    expect((await store.load('s')).info.committedTurn).toBe(3);
    await expect(s.turn(() => undefined)).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    knobs.failRestore = false;
    const again = await sessions.resume({ agentId: 'a', sessionId: 's' });
    expect(contents(again)).toEqual(['a', 'b', 'c']);
    expect(again.agent.ctx.get(Notes).items).toEqual(['a', 'b', 'c']);
    await server.dispose();
    await store.close();
  });

  test('a store that refuses the rollback puts the locals restored in place back', async () => {
    const inner = makeStore();
    let refuse = true;
    const store = delegateStore(inner, {
      // A known refusal (the lock was never obtained): a STORE_ERROR would be an unknown outcome, which disposes the session.
      rollback: (lease, turn) => (refuse ? Promise.reject(new SessionError('STORE_LOCKED', 'store.rollback(): the session row is locked by another transaction', { sessionId: 's' })) : inner.rollback(lease, turn)),
    });
    const { server, sessions } = await serverOn(store, true);
    const s = await sessions.create({ agentId: 'a', sessionId: 's' });
    await say(s, 'a', 'a');
    await say(s, 'b', 'b');
    const live = s.agent.ctx.get(Notes);
    await expect(s.rollback(1)).rejects.toMatchObject({ code: 'STORE_LOCKED' });
    expect(s.agent.ctx.get(Notes)).toBe(live);
    expect(live.items).toEqual(['a', 'b']);
    expect(contents(s)).toEqual(['a', 'b']);
    expect(s.committedTurn).toBe(2);
    refuse = false;
    await s.rollback(1);
    expect(live.items).toEqual(['a']);
    await server.dispose();
    await inner.close();
  });
});
