/**
 * `Tools.register` keeps the interned parameters of each raw schema object as the template
 * of its next snapshot. The template may only save work: what is stored and enforced is
 * always the schema object as it is at that register.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { createScope, Tools } from '../../src/index.js';
import { RELEASED_VALIDATORS_MAX } from '../../src/tools/schema/validator-cache.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import { tool, toolServer } from './helpers.js';

describe('Tools.register with a schema object registered before', () => {
  test('the same unchanged object shares one frozen parameters object and one validator', async () => {
    const { server, app } = await toolServer();
    const params = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const a = createScope(app, { id: 'a' });
    const b = createScope(app, { id: 'b' });
    a.ctx.get(Tools).register(tool('t', () => 'a', { parameters: params }));
    b.ctx.get(Tools).register(tool('t', () => 'b', { parameters: params }));
    const pa = a.ctx.get(Tools).get('t')?.parameters;
    expect(pa).toBe(b.ctx.get(Tools).get('t')?.parameters);
    expect(pa).not.toBe(params);
    expect(Object.isFrozen(pa)).toBe(true);
    expect(toolRegistryOf(server)?.validatorCount).toBe(1);
    await server.dispose();
  });

  test('a schema object changed in place between registers is stored and enforced as it is now', async () => {
    const { server, app } = await toolServer();
    const params: any = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const a = createScope(app, { id: 'a' });
    const b = createScope(app, { id: 'b' });
    a.ctx.get(Tools).register(tool('t', () => 'a', { parameters: params }));
    params.properties.q.type = 'number';
    params.required.push('r');
    b.ctx.get(Tools).register(tool('t', () => 'b', { parameters: params }));
    const first = a.ctx.get(Tools).get('t')?.parameters as any;
    const second = b.ctx.get(Tools).get('t')?.parameters as any;
    expect(first.properties.q.type).toBe('string');
    expect(first.required).toEqual(['q']);
    expect(second.properties.q.type).toBe('number');
    expect(second.required).toEqual(['q', 'r']);
    expect(toolRegistryOf(server)?.validatorCount).toBe(2);
    const ok = await a.ctx.get(Tools).execute({ callId: '1', name: 't', arguments: { q: 'x' } });
    expect(ok.isError).toBe(false);
    const bad = await b.ctx.get(Tools).execute({ callId: '2', name: 't', arguments: { q: 'x', r: 1 } });
    expect(bad.error?.code).toBe('INVALID_ARGS');
    const good = await b.ctx.get(Tools).execute({ callId: '3', name: 't', arguments: { q: 1, r: 1 } });
    expect(good.isError).toBe(false);
    await server.dispose();
  });

  test('after every tool using it is gone, the same object registers again (validator from the released cache)', async () => {
    const { server, app } = await toolServer();
    const params = { type: 'object', properties: { q: { type: 'string' } } };
    const off = app.get(Tools).register(tool('t', () => 'x', { parameters: params }));
    const before = app.get(Tools).get('t')?.parameters;
    off();
    expect(toolRegistryOf(server)?.validatorCount).toBe(0);
    app.get(Tools).register(tool('t', () => 'x', { parameters: params }));
    expect(app.get(Tools).get('t')?.parameters).toBe(before);
    expect(toolRegistryOf(server)?.validatorCount).toBe(1);
    expect((await app.get(Tools).execute({ callId: '1', name: 't', arguments: { q: 2 } })).error?.code).toBe('INVALID_ARGS');
    await server.dispose();
  });

  test('a refused definition takes no validator reference, whatever it shares with an earlier one', async () => {
    const { server, app } = await toolServer();
    const params = { type: 'object', properties: { q: { type: 'string' } } };
    app.get(Tools).register(tool('t', () => 'x', { parameters: params }));
    expect(() => app.get(Tools).register(tool('u', () => 'x', { parameters: params, annotations: { bad: Number.NaN } as never }))).toThrow(TypeError);
    expect(() => app.get(Tools).register(tool('t', () => 'x', { parameters: params }))).toThrow(/already registered/);
    expect(toolRegistryOf(server)?.validatorCount).toBe(1);
    await server.dispose();
    expect(toolRegistryOf(server)?.validatorCount).toBe(0);
  });
});

describe('what the templates keep alive', () => {
  // A real full GC, to see which raw schema objects the registry still holds.
  const gc = (): void => {
    const g = (globalThis as { gc?: () => void }).gc ?? (v8.setFlagsFromString('--expose_gc'), vm.runInNewContext('gc') as () => void);
    g();
  };
  const collected = async (ref: WeakRef<object>): Promise<boolean> => {
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      gc();
    }
    return ref.deref() === undefined;
  };

  test('a raw schema object is kept for at most RELEASED_VALIDATORS_MAX newer ones, then let go', async () => {
    const { server, app } = await toolServer();
    let first!: WeakRef<object>;
    (() => {
      const raw = { type: 'object', properties: { first: { type: 'string' } } };
      first = new WeakRef(raw);
      app.get(Tools).register(tool('first', () => 'x', { parameters: raw }))();
    })();
    for (let i = 0; i < RELEASED_VALIDATORS_MAX; i++) {
      app.get(Tools).register(tool(`t${i}`, () => 'x', { parameters: { type: 'object', properties: { [`p${i}`]: { type: 'string' } } } }))();
    }
    expect(await collected(first)).toBe(true);
    await server.dispose();
  });

  test('a Standard Schema object is never kept (it is converted anew each time)', async () => {
    const { server, app } = await toolServer();
    let ref!: WeakRef<object>;
    (() => {
      const jsonSchema = { type: 'object', properties: { q: { type: 'string' } } };
      const standard = { '~standard': { version: 1, vendor: 'test', jsonSchema: { input: () => jsonSchema, output: () => jsonSchema } } };
      ref = new WeakRef(standard);
      app.get(Tools).register(tool('std', () => 'x', { parameters: standard as never }))();
    })();
    expect(await collected(ref)).toBe(true);
    await server.dispose();
  });
});

describe('the same definition object registered again', () => {
  test("its execute is bound to the definition every time, and a replaced execute is the one bound next", async () => {
    const { server, app } = await toolServer();
    const seen: unknown[] = [];
    const def = {
      name: 'who',
      description: 'x',
      parameters: { type: 'object' },
      execute(this: unknown): string {
        seen.push(this);
        return 'first';
      },
    };
    const a = createScope(app, { id: 'a' });
    const b = createScope(app, { id: 'b' });
    a.ctx.get(Tools).register(def);
    b.ctx.get(Tools).register(def);
    const ta = a.ctx.get(Tools).get('who');
    const tb = b.ctx.get(Tools).get('who');
    expect(ta).toBe(tb); // equal field for field and frozen: one shared record
    expect(Object.isFrozen(ta?.execute)).toBe(true);
    expect(ta?.execute({}, undefined as never, undefined as never)).toBe('first');
    expect((await b.ctx.get(Tools).execute({ callId: '1', name: 'who', arguments: {} })).content).toBe('first');
    expect(seen).toEqual([def, def]);
    def.execute = function (this: unknown): string {
      seen.push(this);
      return 'second';
    };
    await a.dispose();
    const c = createScope(app, { id: 'c' });
    c.ctx.get(Tools).register(def);
    expect((await c.ctx.get(Tools).execute({ callId: '2', name: 'who', arguments: {} })).content).toBe('second');
    // the registration made before the change keeps the function it was given
    expect((await b.ctx.get(Tools).execute({ callId: '3', name: 'who', arguments: {} })).content).toBe('first');
    expect(seen).toEqual([def, def, def, def]);
    expect(c.ctx.get(Tools).get('who')).not.toBe(b.ctx.get(Tools).get('who')); // another execute: another record
    await server.dispose();
  });

  test('a changed field makes a new record; an unchanged definition gets the record made last', async () => {
    const { server, app } = await toolServer();
    const def: { name: string; description: string; parameters: object; timeoutMs?: number; annotations?: object; execute: () => string } = {
      name: 'n',
      description: 'one',
      parameters: { type: 'object' },
      execute: () => 'x',
    };
    const records: unknown[] = [];
    const registerIn = (id: string): unknown => {
      const s = createScope(app, { id });
      s.ctx.get(Tools).register(def as never);
      const t = s.ctx.get(Tools).get('n');
      expect(Object.isFrozen(t)).toBe(true);
      records.push(t);
      return t;
    };
    const first = registerIn('s1');
    expect(registerIn('s2')).toBe(first);
    def.description = 'two';
    const second = registerIn('s3');
    expect(second).not.toBe(first);
    expect((second as { description: string }).description).toBe('two');
    def.parameters = { type: 'object', properties: { q: { type: 'string' } } };
    const third = registerIn('s4');
    expect(third).not.toBe(second);
    expect((third as { parameters: object }).parameters).toEqual(def.parameters);
    def.timeoutMs = 50;
    const fourth = registerIn('s5');
    expect((fourth as { timeoutMs: number }).timeoutMs).toBe(50);
    expect(registerIn('s6')).toBe(fourth);
    def.annotations = { readOnlyHint: true };
    const withAnnotations = registerIn('s7');
    expect(withAnnotations).not.toBe(fourth);
    expect(registerIn('s8')).not.toBe(withAnnotations); // an annotations snapshot is new each time: so is the record
    await server.dispose();
  });

  test('undoing one of two registrations sharing a record aborts only the calls through it', async () => {
    const { server, app } = await toolServer();
    const started: string[] = [];
    const def = {
      name: 'slow',
      description: 'x',
      parameters: { type: 'object' },
      execute: (_a: unknown, e: { signal: AbortSignal; callId: string }): Promise<string> =>
        new Promise((resolve) => {
          started.push(e.callId);
          e.signal.addEventListener('abort', () => resolve(`aborted ${e.callId}`));
          setTimeout(() => resolve(`done ${e.callId}`), 50);
        }),
    };
    app.get(Tools).register(def as never); // global
    const agent = createScope(app, { id: 'agent' });
    // a call through the agent's scope resolves the global registration ...
    const viaGlobal = agent.ctx.get(Tools).execute({ callId: 'g', name: 'slow', arguments: {} });
    // ... then the agent registers the same definition (the same frozen record) and undoes it
    const undo = agent.ctx.get(Tools).register(def as never);
    expect(agent.ctx.get(Tools).get('slow')).toBe(app.get(Tools).get('slow'));
    const viaScoped = agent.ctx.get(Tools).execute({ callId: 's', name: 'slow', arguments: {} });
    await new Promise((r) => setTimeout(r, 5));
    undo();
    const [g, s] = await Promise.all([viaGlobal, viaScoped]);
    expect(started.sort()).toEqual(['g', 's']);
    expect(s.isError).toBe(true);
    expect(s.content).toMatch(/registration of tool "slow" was undone/);
    expect(g.isError).toBe(false);
    expect(g.content).toBe('done g');
    await server.dispose();
  });
});
