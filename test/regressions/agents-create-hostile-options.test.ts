// Issue 8 #16: hostile proxies must never break Agents.create's error handling. Options
// (or their id, setup or parent) that are hostile proxies, revoked proxies or throwing
// getters made create reject with the hostile value's own error (or an internal
// TypeError from the value-describing helper behind its messages) instead of a clear
// TypeError / AgentError; a proxy posing as an Agent was accepted as a parent. Every such
// call must reject with a clear error naming the field, and leave no residue: no
// reserved id, no child context, nothing announced.
import { Agent, AgentError, Agents, AgentsPlugin, Events, Server } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

class Hostile extends Error {
  constructor() {
    super('hostile trap ran');
  }
}

/** A proxy whose every trap throws (a strict mock, an ORM proxy gone wrong). */
function hostile(target: object = {}): object {
  const boom = (): never => {
    throw new Hostile();
  };
  return new Proxy(target, {
    get: boom,
    has: boom,
    getPrototypeOf: boom,
    getOwnPropertyDescriptor: boom,
    ownKeys: boom,
    apply: boom,
  });
}

function revoked(): object {
  const r = Proxy.revocable({}, {});
  r.revoke();
  return r.proxy;
}

async function world() {
  const server = new Server();
  server.addPlugins(new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  const announced: string[] = [];
  app.get(Events).on('agent/created', (a: Agent) => announced.push(a.id));
  return { server, app, agents: app.get(Agents), announced };
}

const cases: [string, () => unknown, RegExp][] = [
  ['options is a hostile proxy', () => hostile(), /Agents\.create\(options\): reading options\.id threw: hostile trap ran/],
  ['options is a revoked proxy', () => revoked(), /Agents\.create\(options\): reading options\.id threw/],
  [
    'options.id is a throwing getter',
    () => ({
      get id(): string {
        throw new Hostile();
      },
    }),
    /reading options\.id threw: hostile trap ran/,
  ],
  ['id is a hostile proxy', () => ({ id: hostile() }), /id must be a non-empty string, got an object/],
  ['id is a revoked proxy', () => ({ id: revoked() }), /id must be a non-empty string, got/],
  ['setup is a hostile object', () => ({ id: 'x', setup: hostile() }), /setup must be a function .* got an object/],
  ['parent is a hostile proxy', () => ({ id: 'x', parent: hostile() }), /parent must be an Agent .* got an object/],
  ['parent is a revoked proxy', () => ({ id: 'x', parent: revoked() }), /parent must be an Agent/],
  [
    'parent is a throwing getter',
    () => ({
      id: 'x',
      get parent(): Agent {
        throw new Hostile();
      },
    }),
    /reading options\.parent threw: hostile trap ran/,
  ],
];

describe('Agents.create with hostile options', () => {
  test.each(cases)('%s: rejects with a clear TypeError and leaves no residue', async (_label, make, pattern) => {
    const { server, app, agents, announced } = await world();
    let result: Promise<unknown> | undefined;
    expect(() => {
      result = agents.create(make() as never);
    }).not.toThrow();
    const err = await (result as Promise<unknown>).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(Hostile);
    expect((err as Error).message).toMatch(pattern);
    expect(agents.list()).toEqual([]);
    expect(probe.liveChildren(app).length).toBe(0);
    expect(announced).toEqual([]);
    // the id (when there was one) is free
    await expect(agents.create({ id: 'x' })).resolves.toBeDefined();
    await server.dispose();
  });

  test('a proxy posing as a live Agent is refused as a parent (no proxy ever becomes agent.parent)', async () => {
    const { server, app, agents, announced } = await world();
    const real = await agents.create({ id: 'real' });
    announced.length = 0;
    const posing = new Proxy(real.agent, {});
    expect(posing instanceof Agent).toBe(true); // it passes instanceof ...
    const err = await agents.create({ id: 'child', parent: posing }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError); // ... but not the brand check
    expect((err as Error).message).toMatch(/parent must be an Agent/);
    expect(agents.get('child')).toBeUndefined();
    expect(probe.liveChildren(real.agent.ctx).length).toBe(0);
    expect(announced).toEqual([]);
    expect(probe.liveChildren(app).length).toBe(1);
    await server.dispose();
  });

  test('a setup that is a hostile callable proxy fails as a setup: AgentError with the cause, rolled back', async () => {
    const { server, agents, announced } = await world();
    const setup = hostile(() => undefined) as () => void;
    const err = await agents.create({ id: 'x', setup }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).cause).toBeInstanceOf(Hostile);
    expect((err as Error).message).toMatch(/agent "x": setup failed: hostile trap ran/);
    expect(agents.list()).toEqual([]);
    expect(announced).toEqual([]);
    await expect(agents.create({ id: 'x' })).resolves.toBeDefined();
    await server.dispose();
  });
});
