/**
 * SPEC 10.6: the reserved prefixes hold exactly the built-in events. A variant spelling of
 * a built-in (or any other name under a reserved prefix) is refused by `on` (TypeError)
 * and by `emit`/`waterfall` (a rejection), with the closest built-in suggested; names
 * outside the prefixes stay free.
 */
import fc from 'fast-check';
import { Agents, AgentsPlugin, Events, Server, Tools, ToolsPlugin, createScope, type EventMap } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

const BUILTINS = [
  'tools/pre-execute',
  'tools/execute',
  'tools/post-execute',
  'tools/result',
  'prompt/assemble',
  'agent/created',
  'agent/disposed',
  'session/created',
  'session/resumed',
  'session/turn-committed',
  'session/rolled-back',
  'session/lease-lost',
  'session/disposed',
] as const satisfies readonly (keyof EventMap)[];
const PREFIXES = ['tools/', 'tool/', 'prompt/', 'prompts/', 'agent/', 'agents/', 'session/', 'sessions/'];

async function world() {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(), new AgentsPlugin());
  await server.finish();
  const app = server.createContext();
  return { server, app, events: app.get(Events) };
}

/** `on`, `emit` and `waterfall` with a name only known as a string (as JavaScript would call them). */
const free = (name: string) => name;

describe('reserved event names', () => {
  test.each([
    ['tool/pre-execute', 'tools/pre-execute'],
    ['Tools/Pre-Execute', 'tools/pre-execute'],
    ['tools.pre-execute', 'tools/pre-execute'],
    ['tools:post-execute', 'tools/post-execute'],
    ['tools/preexecute', 'tools/pre-execute'],
    ['tools/results', 'tools/result'],
    ['prompts/assemble', 'prompt/assemble'],
    ['PROMPT:ASSEMBLE', 'prompt/assemble'],
    ['agents/created', 'agent/created'],
    ['agent.disposed', 'agent/disposed'],
    ['sessions/created', 'session/created'],
    ['session/turn-commited', 'session/turn-committed'],
    ['session:lease-lost', 'session/lease-lost'],
  ])('on(%j) throws a TypeError suggesting %j; emit and waterfall reject alike', async (name, suggestion) => {
    const { server, events } = await world();
    const exact = `unknown event "${name}"; did you mean "${suggestion}"?`;
    let thrown: unknown;
    try {
      events.on(free(name), () => undefined);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toContain(exact);
    expect((thrown as Error).message).toContain('Events.on');
    expect(events.listenerCount(name)).toBe(0);
    // promise APIs reject, never throw synchronously
    let emitted!: Promise<void>;
    expect(() => (emitted = events.emit(undefined, free(name)))).not.toThrow();
    await expect(emitted).rejects.toThrow(TypeError);
    await expect(emitted).rejects.toThrow(exact);
    let poured!: Promise<unknown>;
    expect(() => (poured = events.waterfall(undefined, free(name), 1))).not.toThrow();
    await expect(poured).rejects.toThrow(exact);
    await server.dispose();
  });

  test('a non-built-in name under a reserved prefix is refused too (whatever is listening elsewhere)', async () => {
    const { server, events } = await world();
    expect(() => events.on(free('tools/custom-audit'), () => undefined)).toThrow(/unknown event "tools\/custom-audit"; did you mean "tools\/[a-z-]+"\?/);
    expect(() => events.on(free('agent/spawned'), () => undefined)).toThrow(/unknown event "agent\/spawned"; did you mean "agent\/[a-z]+"\?/);
    await expect(events.emit(undefined, free('session/custom'))).rejects.toThrow(/unknown event "session\/custom"/);
    await server.dispose();
  });

  test('every built-in spelled exactly is accepted by on, emit and waterfall', async () => {
    const { server, events } = await world();
    for (const name of BUILTINS) {
      const off = events.on(name, ((v: unknown) => v) as never);
      expect(events.listenerCount(name)).toBe(1);
      await expect(events.waterfall(undefined, free(name), 'seed')).resolves.toBe('seed');
      off();
    }
    await server.dispose();
  });

  test('names outside the reserved prefixes stay free', async () => {
    const { server, events } = await world();
    for (const name of ['billing/refund-requested', 'toolsx/run', 'my.tools/run', 'tool', 'agent', 'sessions', 'x', 'metrics:tools/pre-execute', 'Agent-created']) {
      const heard: unknown[] = [];
      const off = events.on(free(name), (...args) => void heard.push(args));
      await events.emit(undefined, free(name), 1, 'two');
      await expect(events.waterfall(undefined, free(name), 5)).resolves.toBe(undefined);
      expect(heard).toEqual([[1, 'two'], [5]]);
      off();
      await expect(events.emit(undefined, free(name))).resolves.toBeUndefined();
    }
    await server.dispose();
  });

  test('built-in emitters still reach their listeners (tools pipeline, agents)', async () => {
    const { server, app, events } = await world();
    const heard: string[] = [];
    events.on('tools/pre-execute', (d, e) => {
      heard.push(`pre:${e.name}`);
      return d;
    });
    events.on('tools/result', (e, r) => void heard.push(`result:${e.name}:${r.content}`));
    events.on('agent/created', (a) => void heard.push(`created:${a.id}`));
    events.on('agent/disposed', (a) => void heard.push(`disposed:${a.id}`));
    const handle = await app.get(Agents).create({
      id: 'researcher',
      setup: (ctx) => void ctx.get(Tools).register({ name: 'search', description: 's', parameters: { type: 'object' }, execute: () => 'found' }),
    });
    await handle.agent.ctx.get(Tools).execute({ callId: '1', name: 'search', arguments: {} });
    await handle.dispose();
    expect(heard).toEqual(['created:researcher', 'pre:search', 'result:search:found', 'disposed:researcher']);
    await server.dispose();
  });

  test('a scoped view refuses like the global one, and a refused on() registers nothing on the scope', async () => {
    const { server, app } = await world();
    const scope = createScope(app, { id: 'A' });
    expect(() => scope.ctx.get(Events).on(free('tool/result'), () => undefined)).toThrow(TypeError);
    await scope.dispose();
    await app.dispose();
    assertNoLeaks(server);
    await server.dispose();
  });

  test('property: a name is accepted exactly when it is a built-in or outside every reserved prefix', async () => {
    const { server, events } = await world();
    const variant = fc
      .tuple(fc.constantFrom(...BUILTINS), fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }), fc.constantFrom('/', '.', ':'))
      .map(([b, upper, sep]) => [...b].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('').replace('/', sep));
    const underPrefix = fc.tuple(fc.constantFrom(...PREFIXES), fc.string({ maxLength: 12 })).map(([p, rest]) => p + rest);
    const anything = fc.string({ minLength: 1, maxLength: 20 });
    // a reserved head (or a near miss) in any case, then a separator or not, then anything
    const nearHead = fc
      .tuple(
        fc.constantFrom(...PREFIXES.map((p) => p.slice(0, -1)), 'tool', 'toolz', 'agentss', 'sessio', 'promptsx', 'x'),
        fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
        fc.constantFrom('/', '.', ':', '-', '_', '', 'İ/'),
        fc.string({ maxLength: 8 }),
      )
      .map(([h, upper, sep, rest]) => [...h].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('') + sep + rest);
    await fc.assert(
      fc.asyncProperty(fc.oneof(variant, underPrefix, nearHead, anything, fc.constantFrom(...BUILTINS)), async (name) => {
        fc.pre(name.length > 0);
        const normalized = name.toLowerCase().replace(/[.:]/g, '/');
        const allowed = (BUILTINS as readonly string[]).includes(name) || !PREFIXES.some((p) => normalized.startsWith(p));
        let off: (() => void) | undefined;
        let error: unknown;
        try {
          off = events.on(free(name), () => undefined);
        } catch (err) {
          error = err;
        }
        off?.();
        const emitted = await events.emit(undefined, free(name)).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (allowed) {
          expect(error).toBeUndefined();
          expect(emitted).toBeUndefined();
        } else {
          expect(error).toBeInstanceOf(TypeError);
          expect(emitted).toBeInstanceOf(TypeError);
          const m = /^unknown event "(.*)"; did you mean "([^"]+)"\?/s.exec((error as Error).message);
          expect(m?.[1]).toBe(name);
          expect(BUILTINS).toContain(m?.[2]);
        }
      }),
      { numRuns: 500 },
    );
    await server.dispose();
  });
});
