/**
 * Type-level tests of SPEC 10.7's `Res<T>` rule, compiled by `npm run typecheck`: `Res<T>`
 * is `T` for polestar's own classes (Agent, SystemContext, Session, the registry views)
 * and `Readonly<T>` otherwise. Every `@ts-expect-error` fails the typecheck if the line
 * stops being an error. The blocks also run, so the file is an ordinary jest test.
 */
import 'reflect-metadata';
import {
  Agent,
  Agents,
  AgentsPlugin,
  Events,
  openSession,
  Out,
  Prompts,
  res,
  Res,
  Server,
  Session,
  system,
  SystemContext,
  token,
  Tools,
  ToolsPlugin,
  PromptsPlugin,
} from '../../src/index.js';

class Memory {
  facts: string[] = [];
  #secret = 1;
  get secret(): number {
    return this.#secret;
  }
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | undefined {
  return undefined;
}

test('Res<T> is T for polestar classes and Readonly<T> for everything else', () => {
  assertType<Equal<Res<Agent>, Agent>>();
  assertType<Equal<Res<SystemContext>, SystemContext>>();
  assertType<Equal<Res<Session>, Session>>();
  assertType<Equal<Res<Tools>, Tools>>();
  assertType<Equal<Res<Prompts>, Prompts>>();
  assertType<Equal<Res<Events>, Events>>();
  assertType<Equal<Res<Agents>, Agents>>();
  assertType<Equal<Out<Agent>, Agent>>();
  assertType<Equal<Res<Memory>, Readonly<Memory>>>();
  assertType<Equal<Res<string[]>, readonly string[]>>();
  assertType<Equal<Res<number>, number>>();
  assertType<Equal<Res<Agent | undefined>, Agent | undefined>>();
  // @ts-expect-error a user class stays read-only
  assertType<Equal<Res<Memory>, Memory>>();

  // a user class with #private members: its Readonly view can not be passed back (unchanged rule)
  const takeMemory = (m: Memory) => m.secret;
  system([Res(Memory)], (m) => {
    // @ts-expect-error Res<Memory> is read-only
    m.facts = [];
    // @ts-expect-error Readonly<Memory> lacks #secret, so it is not a Memory
    return takeMemory(m);
  });
});

test('what Res(Agent) hands a system can be passed to openSession, and Res(SystemContext) to anything taking a context', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new PromptsPlugin(), new AgentsPlugin());
  await server.finish();
  const root = server.createContext();
  const handle = await root.get(Agents).create({ id: 'typed' });
  const Opened = token<Session>('Opened');

  const open = system([Res(Agent), Res(SystemContext, { optional: true })], (agent, ctx) => {
    const s: Session = openSession(agent);
    const c: SystemContext | undefined = ctx;
    void c;
    return s;
  }, { output: Opened });
  const session = await handle.agent.ctx.run(open);
  expect(session).toBeInstanceOf(Session);
  expect(session.ctx.parent).toBe(handle.agent.ctx);

  // the decorator form too
  class S {
    @system({ output: Opened })
    static open(@res(Agent) agent: Res<Agent>): Session {
      return openSession(agent);
    }
  }
  const again = await handle.agent.ctx.run(S.open);
  expect(again.ctx.parent).toBe(handle.agent.ctx);

  // views hand themselves over: a Res(Tools) view's methods stay callable and passable
  const useTools = system([Res(Tools)], (tools) => {
    const t: Tools = tools;
    return t.visible().length;
  }, { output: token<number>('n') });
  expect(await handle.agent.ctx.run(useTools)).toBe(0);
  await server.dispose();
});
