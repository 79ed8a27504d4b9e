import {
  Agent,
  Agents,
  ConversationHistory,
  Res,
  ResMut,
  Scratchpad,
  Session,
  openSession,
  res,
  system,
} from '../../src/index.js';
import { agentServer } from './helpers.js';

describe('sessions and turns', () => {
  test('a session is a child of the agent context holding the history; a turn is its child with a Scratchpad', async () => {
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'chat' });
    const session = openSession(h.agent);
    expect(session).toBeInstanceOf(Session);
    expect(session.ctx.parent).toBe(h.agent.ctx);
    expect(session.agent).toBe(h.agent);
    expect(session.ctx.getMut(ConversationHistory)).toBe(session.history);
    let turnCtx: typeof session.ctx | undefined;
    const out = await session.turn((ctx) => {
      turnCtx = ctx;
      expect(ctx.parent).toBe(session.ctx);
      ctx.getMut(Scratchpad).notes.push('thinking');
      session.history.append({ role: 'user', content: 'hi' });
      return ctx.get(ConversationHistory).length;
    });
    expect(out).toBe(1);
    expect(turnCtx?.isDisposed).toBe(true);
    expect(session.history.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(session.ctx.hasLocal(Scratchpad)).toBe(false);
    expect(session.turnCount).toBe(1);
    await h.dispose();
    expect(session.isDisposed).toBe(true);
    await server.dispose();
  });

  test('each turn gets a fresh Scratchpad; systems in a turn read the agent and history and write the scratchpad', async () => {
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'sys' });
    const session = openSession(h.agent);
    const note = system(
      [Res(Agent), Res(ConversationHistory), ResMut(Scratchpad)],
      (agent, history, scratch) => {
        scratch.notes.push(`${agent.id}:${history.length}`);
        return scratch.notes.length;
      },
      { name: 'note' },
    );
    const first = await session.turn((ctx) => ctx.run(note));
    session.history.append({ role: 'assistant', content: 'x' });
    const second = await session.turn((ctx) => ctx.run(note));
    expect([first, second]).toEqual([1, 1]);
    await server.dispose();
  });

  test('a failing turn is disposed and rejects with its error; the session goes on', async () => {
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'f' });
    const session = openSession(h.agent, { history: new ConversationHistory() });
    let turnCtx: typeof session.ctx | undefined;
    await expect(
      session.turn((ctx) => {
        turnCtx = ctx;
        throw new Error('model down');
      }),
    ).rejects.toThrow('model down');
    expect(turnCtx?.isDisposed).toBe(true);
    await expect(session.turn(() => 'ok')).resolves.toBe('ok');
    await session.dispose();
    expect(h.agent.isDisposed).toBe(false);
    await server.dispose();
  });

  test('bad arguments are TypeErrors', async () => {
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'b' });
    expect(() => openSession({} as never)).toThrow(/owner must be an Agent or a SystemContext/);
    expect(() => openSession(h.agent, { history: [] as never })).toThrow(/history must be a ConversationHistory/);
    await expect(openSession(h.agent).turn('x' as never)).rejects.toThrow(/fn must be a function/);
    await server.dispose();
  });

  test('history messages are copied and frozen', () => {
    const history = new ConversationHistory();
    const m = { role: 'user' as const, content: 'a' };
    history.append(m);
    m.content = 'changed';
    expect(history.messages[0].content).toBe('a');
    expect(Object.isFrozen(history.messages[0])).toBe(true);
  });
});

describe('openSession takes what Res(Agent) hands a system (SPEC 10.7)', () => {
  // Type-level: these compile only because Res<Agent> is Agent (Readonly<Agent> lacks
  // #private and was refused by openSession); each also runs.
  test('function form', async () => {
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'typed' });
    const open = system([Res(Agent)], (agent) => openSession(agent));
    const session = await h.agent.ctx.child().run(open);
    const s: Session = session;
    expect(s.ctx.parent).toBe(h.agent.ctx);
    const optional = system([Res(Agent, { optional: true })], (agent) => (agent === undefined ? undefined : openSession(agent).agent));
    expect(await h.agent.ctx.run(optional)).toBe(h.agent);
    await server.dispose();
  });

  test('decorator form', async () => {
    class Systems {
      @system()
      static open(@res(Agent) agent: Res<Agent>): Session {
        return openSession(agent, { history: new ConversationHistory([{ role: 'user', content: 'hi' }]) });
      }
    }
    const server = await agentServer();
    const h = await server.createContext().get(Agents).create({ id: 'decorated' });
    const session = await h.agent.ctx.run(Systems.open);
    expect(session.history.length).toBe(1);
    expect(session.agent).toBe(h.agent);
    await server.dispose();
  });
});
