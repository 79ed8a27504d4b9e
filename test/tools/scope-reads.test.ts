/**
 * SPEC 10.7: every read of `Tools` that takes an explicit `scope` (`get`, `visible`,
 * `schemas`, `knownNames`) refuses a key that is neither the view's own scope nor live
 * with a TypeError naming the method, the scope and the fix. A key is live from
 * `createScope` until its scope's disposal starts. Live foreign keys and the view's own
 * key keep working; a disposed view keeps its own rule (ContextDisposedError).
 */
import {
  Agent,
  Agents,
  AgentsPlugin,
  ContextDisposedError,
  Events,
  Prompts,
  PromptsPlugin,
  Tools,
  createScope,
  scopeOf,
  type SystemContext,
} from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';
import { tool, toolServer } from './helpers.js';

type Read = (t: Tools, scope?: object) => unknown;

/** Each read, called with `scope` (or omitted), normalised to the tool names it answers. */
const reads: [string, string, Read][] = [
  ['get', 'get(name, scope)', (t, s) => (s === undefined ? t.get('own') : t.get('own', s))?.name ?? null],
  ['visible', 'visible(scope)', (t, s) => t.visible(s).map((x) => x.name)],
  ['schemas', 'schemas(scope)', (t, s) => t.schemas(s).map((x) => x.name)],
  ['knownNames', 'knownNames(scope)', (t, s) => t.knownNames(s)],
];

async function world() {
  const { server, app } = await toolServer(new PromptsPlugin(), new AgentsPlugin());
  app.get(Tools).register(tool('g'));
  return { server, app };
}

/** A scope "A" with its own tool "own" and a restriction hiding the global "g". */
function scopeA(app: SystemContext, key: object = { id: 'A' }) {
  const scope = createScope(app, key);
  scope.ctx.get(Tools).register(tool('own'));
  scope.ctx.get(Tools).restrict({ deny: ['g'] });
  return scope;
}

/** The refusal message of `method` for a scope labelled `label`. */
function refusal(call: string, label: string): RegExp {
  const esc = call.replace(/[()]/g, '\\$&');
  return new RegExp(
    `^Tools\\.${esc}: scope ${label} is neither this view's own scope nor a live scope key .*` +
      `read through a live scope, or omit scope to use the view's own\\.$`,
  );
}

describe.each(reads)('Tools.%s with an explicit scope (SPEC 10.7)', (_method, call, read) => {
  test('a live foreign key reads that scope (global + its own layer, its restrictions applied)', async () => {
    const { server, app } = await world();
    const A = scopeA(app);
    const expected = read(A.ctx.get(Tools));
    expect(read(app.get(Tools), A.key)).toEqual(expected);
    // from another scope's view too: a live key is readable from any view of the server
    const B = createScope(app, { id: 'B' });
    expect(read(B.ctx.get(Tools), A.key)).toEqual(expected);
    // and it is A's answer, not the global one
    expect(read(app.get(Tools), A.key)).not.toEqual(read(app.get(Tools)));
    await server.dispose();
  });

  test("the view's own key reads as the omitted scope, also from a turn below the scope", async () => {
    const { server, app } = await world();
    const A = scopeA(app);
    const view = A.ctx.get(Tools);
    expect(read(view, A.key)).toEqual(read(view));
    const turn = A.ctx.child().child().get(Tools);
    expect(read(turn, A.key)).toEqual(read(view));
    await server.dispose();
  });

  test('a key never made by createScope is refused', async () => {
    const { server, app } = await world();
    expect(() => read(app.get(Tools), { id: 'forged' })).toThrow(refusal(call, 'forged'));
    expect(() => read(app.get(Tools), {})).toThrow(TypeError);
    await server.dispose();
  });

  test('the key of a disposed createScope scope is refused, from the moment its disposal starts', async () => {
    const { server, app } = await world();
    const A = scopeA(app);
    let release!: () => void;
    A.ctx.onDispose(() => new Promise<void>((r) => (release = r)));
    const disposing = A.dispose();
    // disposal started, its cleanups are still pending: the key is already dead
    expect(() => read(app.get(Tools), A.key)).toThrow(refusal(call, 'A'));
    await new Promise((r) => setImmediate(r));
    expect(() => read(app.get(Tools), A.key)).toThrow(refusal(call, 'A'));
    release();
    await disposing;
    expect(() => read(app.get(Tools), A.key)).toThrow(refusal(call, 'A'));
    // the error is a plain TypeError
    let err: unknown;
    try {
      read(app.get(Tools), A.key);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).name).toBe('TypeError');
    await server.dispose();
  });

  test('a dead key is live again once a new scope takes it, and reads that scope (an empty layer)', async () => {
    const { server, app } = await world();
    const key = { id: 'A' };
    await scopeA(app, key).dispose();
    expect(() => read(app.get(Tools), key)).toThrow(TypeError);
    const again = createScope(app, key);
    expect(read(app.get(Tools), key)).toEqual(read(again.ctx.get(Tools)));
    expect(read(app.get(Tools), key)).toEqual(read(app.get(Tools)));
    await server.dispose();
  });

  test('the key of a disposed agent is refused', async () => {
    const { server, app } = await world();
    const h = await app.get(Agents).create({ id: 'researcher', setup: (ctx) => void ctx.get(Tools).register(tool('own')) });
    expect(read(app.get(Tools), h.agent)).toEqual(read(h.agent.ctx.get(Tools)));
    await h.dispose();
    expect(() => read(app.get(Tools), h.agent)).toThrow(refusal(call, 'researcher'));
    await server.dispose();
  });

  test('an agent/disposed listener reading the ending agent by key is refused: the key died when disposal started', async () => {
    const { server, app } = await world();
    const watcher = server.createContext();
    const seen: unknown[] = [];
    watcher.get(Events).on('agent/disposed', (a: Agent) => {
      try {
        seen.push(read(watcher.get(Tools), a));
      } catch (err) {
        seen.push(err);
      }
    });
    const h = await app.get(Agents).create({ id: 'ending', setup: (ctx) => void ctx.get(Tools).register(tool('own')) });
    await h.dispose();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(TypeError);
    expect((seen[0] as Error).message).toMatch(refusal(call, 'ending'));
    await server.dispose();
  });

  test("the agent's own view, in its own agent/disposed listener, still reads its own key (the view's rules apply)", async () => {
    const { server, app } = await world();
    const seen: unknown[] = [];
    const h = await app.get(Agents).create({
      id: 'self',
      setup: (ctx) => {
        ctx.get(Tools).register(tool('own'));
        ctx.get(Events).on('agent/disposed', () => {
          // the agent's key is dead, its context not yet disposed (the teardown announces first)
          expect(probe.liveScope(server, scopeOf(ctx) as object)).toBeUndefined();
          const view = ctx.get(Tools);
          seen.push(read(view, scopeOf(ctx)), read(view));
        });
      },
    });
    const own = read(h.agent.ctx.get(Tools));
    await h.dispose();
    expect(seen).toEqual([own, own]);
    await server.dispose();
  });

  test('a disposed view keeps its own rule: ContextDisposedError, also for its own key and for a dead or live foreign key', async () => {
    const { server, app } = await world();
    const A = scopeA(app);
    const B = createScope(app, { id: 'B' });
    const view = A.ctx.get(Tools);
    await A.dispose();
    expect(() => read(view)).toThrow(ContextDisposedError);
    expect(() => read(view, A.key)).toThrow(ContextDisposedError);
    expect(() => read(view, { id: 'forged' })).toThrow(ContextDisposedError);
    expect(() => read(view, B.key)).toThrow(ContextDisposedError);
    await server.dispose();
  });
});

test('reads, execute and assemble agree on which keys they refuse (one shared check)', async () => {
  const { server, app } = await world();
  const A = scopeA(app);
  const dead = scopeA(app, { id: 'dead' });
  await dead.dispose();
  const view = app.get(Tools);
  const prompts = app.get(Prompts);
  for (const key of [{ id: 'forged' }, dead.key]) {
    for (const [, , read] of reads) expect(() => read(view, key)).toThrow(TypeError);
    expect((await view.execute({ callId: 'c', name: 'own', arguments: {}, scope: key })).error?.code).toBe('INVALID_ARGS');
    await expect(prompts.assemble({ scope: key })).rejects.toThrow(TypeError);
  }
  for (const [, , read] of reads) expect(() => read(view, A.key)).not.toThrow();
  expect((await view.execute({ callId: 'c', name: 'own', arguments: {}, scope: A.key })).isError).toBe(false);
  await expect(prompts.assemble({ scope: A.key })).resolves.toBeDefined();
  await server.dispose();
});

test("in its own agent/disposed listener the agent's views take its (dead) key as their own: execute is not INVALID_ARGS, assemble assembles", async () => {
  const { server, app } = await world();
  const seen: unknown[] = [];
  const h = await app.get(Agents).create({
    id: 'self',
    setup: (ctx) => {
      ctx.get(Tools).register(tool('own'));
      ctx.get(Prompts).section({ name: 'persona', order: 0, text: 'self persona' });
      ctx.get(Events).on('agent/disposed', async () => {
        const key = scopeOf(ctx) as object;
        // the calling context's disposal has started, so the call is aborted, exactly as without scope
        const r = await ctx.get(Tools).execute({ callId: 'c', name: 'own', arguments: {}, scope: key });
        const bare = await ctx.get(Tools).execute({ callId: 'c', name: 'own', arguments: {} });
        seen.push(r.error?.code ?? r.content, r.error?.message === bare.error?.message);
        seen.push((await ctx.get(Prompts).assemble({ scope: key })).sections.map((s) => s.text));
        // a foreign view is refused the same key
        seen.push((await app.get(Tools).execute({ callId: 'c', name: 'own', arguments: {}, scope: key })).error?.code);
      });
    },
  });
  await h.dispose();
  expect(seen).toEqual(['EXECUTION_ERROR', true, ['self persona'], 'INVALID_ARGS']);
  await server.dispose();
});
