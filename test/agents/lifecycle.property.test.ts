/**
 * Model-based property test of the agent lifecycle: random sequences of creates (top
 * level and subagents, with setups that succeed, fail, or are cut short by their owner's
 * disposal), composed groups (a parent creating subagents in its setup, which may then
 * fail), racing duplicate creates, handle disposals, owner disposals and sessions, run
 * against polestar and a small reference model. After every step the registry, the scope
 * tree and the agent/created minus agent/disposed count must match the model; every live
 * agent (and every root and session) holds its own `per: 'agent'` (`per: 'session'`)
 * local, and a local is disposed exactly when its context is; at the end nothing leaks.
 */
import fc from 'fast-check';
import { Agent, AgentError, AgentsPlugin, Agents, Events, Server, openSession, scopeOf, type AgentHandle, type SystemContext } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

/** A local that remembers the context it was made for and how often it was disposed. */
class Mem {
  disposed = 0;
  constructor(readonly ctx: SystemContext) {}
  [Symbol.dispose](): void {
    this.disposed++;
  }
}
class SessionMem extends Mem {}

async function agentServer(made: Mem[]): Promise<Server> {
  const server = new Server();
  server.registerLocal(Mem, (ctx) => made[made.push(new Mem(ctx)) - 1], { per: 'agent' });
  server.registerLocal(SessionMem, (ctx) => made[made.push(new SessionMem(ctx)) - 1] as SessionMem, { per: 'session' });
  server.addPlugins(new AgentsPlugin());
  await server.finish();
  return server;
}

const IDS = ['a', 'b', 'c', 'd', 'e'];
const OWNERS = 2;

type Cmd =
  | { op: 'create'; id: number; owner: number; parent: number | null; setup: 'ok' | 'throw' | 'async' }
  | { op: 'createCutByOwner'; id: number; owner: number }
  | { op: 'createTwice'; id: number; owner: number }
  | { op: 'createComposed'; id: number; owner: number; kids: number[]; failParent: boolean }
  | { op: 'openSession'; id: number }
  | { op: 'dispose'; id: number }
  | { op: 'disposeOwner'; owner: number };

const id = fc.nat(IDS.length - 1);
const owner = fc.nat(OWNERS - 1);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('create' as const), id, owner, parent: fc.option(id, { nil: null }), setup: fc.constantFrom('ok' as const, 'throw' as const, 'async' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('createCutByOwner' as const), id, owner }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('createTwice' as const), id, owner }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('createComposed' as const), id, owner, kids: fc.array(id, { maxLength: 3 }), failParent: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('openSession' as const), id }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('dispose' as const), id }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('disposeOwner' as const), owner }) },
);

interface ModelAgent {
  id: string;
  owner: number;
  parent: string | undefined;
}

test('the agent registry, scope tree and lifecycle events agree with a reference model', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(cmd, { maxLength: 40 }), async (cmds) => {
      const made: Mem[] = [];
      const server = await agentServer(made);
      const owners: SystemContext[] = Array.from({ length: OWNERS }, () => server.createContext());
      const watcher = server.createContext();
      let announced = 0;
      watcher.get(Events).on('agent/created', () => void announced++);
      watcher.get(Events).on('agent/disposed', () => void announced--);
      const model = new Map<string, ModelAgent>();
      const handles = new Map<string, AgentHandle>();
      const agents = watcher.get(Agents);

      const removeTree = (rootId: string): void => {
        for (const m of [...model.values()]) if (m.parent === rootId) removeTree(m.id);
        model.delete(rootId);
      };

      for (const c of cmds) {
        if (c.op === 'create') {
          const name = IDS[c.id];
          const parentName = c.parent === null ? undefined : IDS[c.parent];
          const parentHandle = parentName === undefined ? undefined : handles.get(parentName);
          const parentLive = parentName !== undefined && model.has(parentName);
          const expectOk = !model.has(name) && (parentName === undefined || parentLive) && c.setup !== 'throw';
          const setup = c.setup === 'throw' ? () => { throw new Error('nope'); } : c.setup === 'async' ? async () => { await Promise.resolve(); } : () => undefined;
          const result = await owners[c.owner]
            .get(Agents)
            .create({ id: name, setup, parent: parentHandle?.agent })
            .then((h) => h, (e: unknown) => e as Error);
          if (parentName !== undefined && parentHandle === undefined) {
            // never existed: no parent object to pass, so this was a top-level create
            const ok = !model.has(name) && c.setup !== 'throw';
            expect(result instanceof Error).toBe(!ok);
            if (ok) {
              model.set(name, { id: name, owner: c.owner, parent: undefined });
              handles.set(name, result as AgentHandle);
            }
          } else {
            expect(result instanceof Error).toBe(!expectOk);
            if (expectOk) {
              model.set(name, { id: name, owner: c.owner, parent: parentName });
              handles.set(name, result as AgentHandle);
            } else {
              expect(result).toBeInstanceOf(AgentError);
            }
          }
        } else if (c.op === 'createComposed') {
          const name = IDS[c.id];
          const kidHandles = new Map<string, AgentHandle>();
          const result = await owners[c.owner]
            .get(Agents)
            .create({
              id: name,
              setup: async (ctx) => {
                for (const k of c.kids) {
                  const h = await agents.create({ id: IDS[k], parent: ctx.get(Agent) }).catch(() => undefined);
                  if (h !== undefined) {
                    expect(h.agent.state).toBe('composing');
                    expect(agents.get(IDS[k])).toBeUndefined();
                    kidHandles.set(IDS[k], h);
                  }
                }
                if (c.failParent) throw new Error('parent setup failed');
              },
            })
            .then((h) => h, (e: unknown) => e as Error);
          const expectOk = !model.has(name) && !c.failParent;
          expect(result instanceof Error).toBe(!expectOk);
          // the kids that could reserve their ids: free, not the parent's, first of their name
          const kidsOk = [...new Set(c.kids.map((k) => IDS[k]))].filter((k) => k !== name && !model.has(k));
          expect([...kidHandles.keys()]).toEqual(model.has(name) ? [] : kidsOk);
          if (expectOk) {
            model.set(name, { id: name, owner: c.owner, parent: undefined });
            handles.set(name, result as AgentHandle);
            for (const k of kidsOk) {
              model.set(k, { id: k, owner: c.owner, parent: name });
              handles.set(k, kidHandles.get(k) as AgentHandle);
            }
          } else {
            for (const h of kidHandles.values()) expect(h.agent.state).toBe('disposed');
          }
        } else if (c.op === 'openSession') {
          const h = handles.get(IDS[c.id]);
          if (h !== undefined && model.has(IDS[c.id]) && h.agent.state === 'published') {
            const session = openSession(h.agent);
            expect(session.ctx.getMut(SessionMem).ctx).toBe(session.ctx);
          }
        } else if (c.op === 'createCutByOwner') {
          const name = IDS[c.id];
          const creating = owners[c.owner].get(Agents).create({ id: name, setup: () => new Promise((r) => setTimeout(r, 1)) });
          const old = owners[c.owner];
          owners[c.owner] = server.createContext();
          await old.dispose();
          await expect(creating).rejects.toBeInstanceOf(AgentError);
          for (const m of [...model.values()]) if (m.owner === c.owner && m.parent === undefined) removeTree(m.id);
        } else if (c.op === 'createTwice') {
          const name = IDS[c.id];
          const rs = await Promise.allSettled([
            owners[c.owner].get(Agents).create({ id: name, setup: async () => undefined }),
            owners[c.owner].get(Agents).create({ id: name, setup: async () => undefined }),
          ]);
          const wins = rs.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<AgentHandle>[];
          expect(wins.length).toBe(model.has(name) ? 0 : 1);
          if (wins.length === 1) {
            model.set(name, { id: name, owner: c.owner, parent: undefined });
            handles.set(name, wins[0].value);
          }
        } else if (c.op === 'dispose') {
          const name = IDS[c.id];
          const h = handles.get(name);
          if (h !== undefined) {
            await Promise.all([h.dispose(), h.dispose()]);
            if (model.has(name) && handles.get(name) === h) removeTree(name);
          }
        } else {
          const old = owners[c.owner];
          owners[c.owner] = server.createContext();
          await old.dispose();
          for (const m of [...model.values()]) if (m.owner === c.owner && m.parent === undefined) removeTree(m.id);
        }

        // ---- invariants after every step
        const listed = agents.list().map((a) => a.id).sort();
        expect(listed).toEqual([...model.keys()].sort());
        expect(announced).toBe(model.size);
        for (const m of model.values()) {
          const a = agents.get(m.id) as Agent;
          expect(a).toBe(handles.get(m.id)?.agent);
          expect(scopeOf(a.ctx)).toBe(a);
          expect(a.parent?.id).toBe(m.parent);
          expect(a.ctx.parent).toBe(m.parent === undefined ? owners[m.owner] : (agents.get(m.parent) as Agent).ctx);
          // its own per-agent local, made for its own context
          expect(a.ctx.getMut(Mem).ctx).toBe(a.ctx);
        }
        // every per-agent / per-session local is disposed once, exactly when its context is;
        // the live ones are one per live agent, root and session
        for (const m of made) expect(m.disposed).toBe(m.ctx.isDisposed ? 1 : 0);
        const live = made.filter((m) => m.disposed === 0);
        const liveAgentMems = live.filter((m) => !(m instanceof SessionMem) && m.ctx.parent !== undefined);
        expect(liveAgentMems.map((m) => m.ctx.get(Agent).id).sort()).toEqual([...model.keys()].sort());
        expect(live.filter((m) => m.ctx.parent === undefined).length).toBe(OWNERS + 1);
      }
      for (const o of owners) await o.dispose();
      await watcher.dispose();
      expect(agents.list()).toEqual([]);
      assertNoLeaks(server);
      await server.dispose();
    }),
    { numRuns: 150 },
  );
});
