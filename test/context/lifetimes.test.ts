/**
 * SPEC §10.3 declared lifetimes: `registerLocal(token, factory?, { per })`,
 * `factory(ctx)`, and the internal making of per-agent and per-session locals (contract C3)
 * that the agents and sessions rooms run on the agent and session contexts they make. Here
 * the "agent" and "session" contexts are plain children marked by `probe.makeLocals`.
 */
import { Server, ServerError, token, type SystemContext } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

class Memory {
  readonly facts: string[] = [];
}
class History {
  constructor(readonly owner = 'unset') {}
}
class Conn {
  closed = 0;
  [Symbol.dispose](): void {
    this.closed++;
  }
}
const MADE_FOR = token<SystemContext>('MADE_FOR');

async function finished(configure: (s: Server) => void): Promise<Server> {
  const s = new Server();
  configure(s);
  await s.finish();
  return s;
}

test("per: 'root' (default): each root gets its own; agents and sessions get none", async () => {
  const s = await finished((s) => s.registerLocal(Memory));
  const root = s.createContext();
  const agent = root.child();
  probe.makeLocals(s, agent, 'agent');
  const session = agent.child();
  probe.makeLocals(s, session, 'session');
  expect(root.hasLocal(Memory)).toBe(true);
  expect(agent.hasLocal(Memory)).toBe(false);
  expect(session.get(Memory)).toBe(root.get(Memory));
  expect(s.createContext().get(Memory)).not.toBe(root.get(Memory));
  await s.dispose();
});

test("per: 'agent': every root and every agent context gets its own; a subagent's shadows its parent's; sessions get none", async () => {
  const s = await finished((s) => s.registerLocal(Memory, () => new Memory(), { per: 'agent' }));
  const root = s.createContext();
  const billing = root.child();
  probe.makeLocals(s, billing, 'agent');
  const tech = root.child();
  probe.makeLocals(s, tech, 'agent');
  const sub = billing.child();
  probe.makeLocals(s, sub, 'agent');
  const session = sub.child();
  probe.makeLocals(s, session, 'session');
  const all = [root, billing, tech, sub].map((c) => c.getMut(Memory));
  expect(new Set(all).size).toBe(4);
  billing.getMut(Memory).facts.push('customer 4711 is under fraud investigation');
  expect(tech.get(Memory).facts).toEqual([]);
  expect(sub.get(Memory).facts).toEqual([]);
  expect(session.hasLocal(Memory)).toBe(false);
  expect(session.get(Memory)).toBe(sub.get(Memory));
  await s.dispose();
});

test("per: 'session': only session contexts get one; the options may stand in for the factory", async () => {
  const s = await finished((s) => s.registerLocal(History, { per: 'session' }));
  const root = s.createContext();
  const agent = root.child();
  probe.makeLocals(s, agent, 'agent');
  expect(root.has(History)).toBe(false);
  expect(agent.has(History)).toBe(false);
  const a = agent.child();
  probe.makeLocals(s, a, 'session');
  const b = agent.child();
  probe.makeLocals(s, b, 'session');
  expect(a.getMut(History)).toBeInstanceOf(History);
  expect(a.get(History)).not.toBe(b.get(History));
  expect(a.child().get(History)).toBe(a.get(History));
  await s.dispose();
});

test('factories receive the new context and run in registration order, once per context', async () => {
  const order: string[] = [];
  const s = await finished((s) => {
    s.registerLocal(MADE_FOR, (ctx) => (order.push('root-1'), ctx));
    s.registerLocal(History, (ctx) => (order.push('agent'), new History(`depth ${ctx.depth} sees ${ctx.get(MADE_FOR).depth}`)), { per: 'agent' });
    s.registerLocal(Memory, () => (order.push('root-2'), new Memory()));
  });
  const root = s.createContext();
  expect(root.get(MADE_FOR)).toBe(root);
  expect(root.get(History).owner).toBe('depth 0 sees 0');
  expect(order).toEqual(['root-1', 'agent', 'root-2']);
  order.length = 0;
  const agent = root.child();
  probe.makeLocals(s, agent, 'agent');
  expect(order).toEqual(['agent']);
  expect(agent.get(History).owner).toBe('depth 1 sees 0');
  await s.dispose();
});

test('per-agent locals are disposed with their context', async () => {
  const conns: Conn[] = [];
  const s = await finished((s) => s.registerLocal(Conn, () => {
    const c = new Conn();
    conns.push(c);
    return c;
  }, { per: 'agent' }));
  const root = s.createContext();
  const agent = root.child();
  probe.makeLocals(s, agent, 'agent');
  await agent.dispose();
  expect(conns.map((c) => c.closed)).toEqual([0, 1]);
  await s.dispose();
  expect(conns.map((c) => c.closed)).toEqual([1, 1]);
});

describe('a failing factory leaves nothing behind', () => {
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

  test.each([
    ['throws', () => {
      throw new Error('boom');
    }, /making the per-agent locals of the context at depth 1: the registerLocal factory of Memory threw: boom/],
    ['returns undefined', () => undefined, /factory of Memory returned undefined; return the local's value/],
    ['disposes the context', (ctx: SystemContext) => {
      void ctx.dispose();
      return new Memory();
    }, /factory of Memory disposed the context it was making a local for/],
    ['returns a value whose dispose lookup throws', () => new Proxy({}, {
      get() {
        throw new Error('strict');
      },
    }), /factory of Memory returned a value that can not be stored: .*threw \(strict\)/],
  ])('a factory that %s: ServerError naming the token; the locals this call made are removed and disposed', async (_what, fail, message) => {
    const made: Conn[] = [];
    const s = await finished((s) => {
      s.registerLocal(Conn, () => {
        const c = new Conn();
        made.push(c);
        return c;
      }, { per: 'agent' });
      // roots are made fine; the agent context (depth 1) fails
      s.registerLocal(Memory, ((ctx: SystemContext) => (ctx.depth === 0 ? new Memory() : fail(ctx))) as () => Memory, { per: 'agent' });
    });
    const root = s.createContext();
    const agent = root.child();
    expect(() => probe.makeLocals(s, agent, 'agent')).toThrow(ServerError);
    const again = root.child();
    expect(() => probe.makeLocals(s, again, 'agent')).toThrow(message);
    for (const c of [agent, again]) {
      if (!c.isDisposed) {
        expect(c.hasLocal(Conn)).toBe(false);
        expect(c.hasLocal(Memory)).toBe(false);
      }
    }
    await tick();
    // the root's Conn is untouched; each failed agent's Conn was disposed
    expect(made.map((c) => c.closed)).toEqual([0, 1, 1]);
    await s.dispose();
    expect(made.map((c) => c.closed)).toEqual([1, 1, 1]);
  });

  test('createContext(): the root is disposed, not registered, and the error names the token', async () => {
    const made: Conn[] = [];
    const s = await finished((s) => {
      s.registerLocal(Conn, () => {
        const c = new Conn();
        made.push(c);
        return c;
      });
      s.registerLocal(Memory, () => undefined as never);
    });
    expect(() => s.createContext()).toThrow(/createContext\(\): the registerLocal factory of Memory returned undefined/);
    expect(s.liveContexts).toBe(0);
    await tick();
    expect(made.map((c) => c.closed)).toEqual([1]);
    await s.dispose();
  });
});

test('registerLocal validates per and the options', () => {
  const s = new Server();
  expect(() => s.registerLocal(Memory, undefined, { per: 'turn' as never })).toThrow(/per must be 'root', 'agent' or 'session', got the string "turn"/);
  expect(() => s.registerLocal(Memory, () => new Memory(), 'agent' as never)).toThrow(/options must be an object such as \{ per: 'agent' \}/);
  expect(() => s.registerLocal(Memory, 5 as never)).toThrow(/factory must be a function/);
  s.registerLocal(Memory, { per: 'session' });
  expect(() => s.registerLocal(Memory, { per: 'agent' })).toThrow(/already registered/);
});
