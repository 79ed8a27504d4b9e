import { NotLosslessJsonError, RegistrationError, Tools, createScope, scopeOf, type Tool } from '../../src/index.js';
import { RELEASED_VALIDATORS_MAX } from '../../src/tools/schema/validator-cache.js';
import { leaks, tool, toolServer } from './helpers.js';

describe('Tools registration and resolution', () => {
  test('ctx.get(Tools) is a view bound to ctx; unscoped registrations are global', async () => {
    const { server, app } = await toolServer();
    const tools = app.get(Tools);
    expect(tools.context).toBe(app);
    expect(tools.scope).toBeUndefined();
    tools.register(tool('read'));
    const A = createScope(app, { id: 'A' });
    expect(A.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['read']);
    expect(A.ctx.get(Tools).scope).toBe(A.key);
    await server.dispose();
  });

  test('resolution for K is global + K only: never the parent scope, never a sibling', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('g'));
    const parent = createScope(app, { id: 'P' });
    const child = createScope(parent.ctx, { id: 'C' });
    const sib = createScope(app, { id: 'S' });
    parent.ctx.get(Tools).register(tool('p'));
    child.ctx.get(Tools).register(tool('c'));
    sib.ctx.get(Tools).register(tool('s'));
    expect(scopeOf(child.ctx)).toBe(child.key);
    const t = app.get(Tools);
    expect(t.visible().map((x) => x.name)).toEqual(['g']);
    expect(t.visible(parent.key).map((x) => x.name)).toEqual(['g', 'p']);
    expect(t.visible(child.key).map((x) => x.name)).toEqual(['g', 'c']);
    expect(t.visible(sib.key).map((x) => x.name)).toEqual(['g', 's']);
    expect(child.ctx.get(Tools).get('p')).toBeUndefined();
    expect(child.ctx.get(Tools).get('s')).toBeUndefined();
    expect(child.ctx.get(Tools).knownNames()).toEqual(['g', 'c']);
    await server.dispose();
  });

  test('an omitted scope is the view scope (also from a turn below the agent); an unscoped view reads global', async () => {
    const { server, app } = await toolServer();
    const A = createScope(app, { id: 'A' });
    A.ctx.get(Tools).register(tool('mine'));
    const turn = A.ctx.child().child();
    expect(turn.get(Tools).visible().map((t) => t.name)).toEqual(['mine']);
    expect(turn.get(Tools).get('mine')?.name).toBe('mine');
    expect(app.get(Tools).get('mine')).toBeUndefined();
    expect(app.get(Tools).get('mine', A.key)?.name).toBe('mine');
    const r = await turn.get(Tools).execute({ callId: '1', name: 'mine', arguments: {} });
    expect(r).toEqual({ callId: '1', content: 'mine', isError: false, output: 'mine' });
    const g = await app.get(Tools).execute({ callId: '2', name: 'mine', arguments: {} });
    expect(g.error?.code).toBe('UNKNOWN_TOOL');
    await server.dispose();
  });

  test('a scoped tool shadows the global one of the same name (keeping its position)', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('a', () => 'global a'));
    app.get(Tools).register(tool('b'));
    const A = createScope(app, { id: 'A' });
    A.ctx.get(Tools).register(tool('a', () => 'scoped a'));
    expect(A.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['a', 'b']);
    expect((await A.ctx.get(Tools).execute({ callId: 'x', name: 'a', arguments: {} })).content).toBe('scoped a');
    expect((await app.get(Tools).execute({ callId: 'x', name: 'a', arguments: {} })).content).toBe('global a');
    await server.dispose();
  });

  test('duplicate names in one layer throw already registered (global: hint to use the agent context)', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('a'));
    expect(() => app.get(Tools).register(tool('a'))).toThrow(RegistrationError);
    expect(() => app.child().get(Tools).register(tool('a'))).toThrow(/already registered.*agent's context/s);
    const A = createScope(app, { id: 'A' });
    A.ctx.get(Tools).register(tool('b'));
    expect(() => A.ctx.get(Tools).register(tool('b'))).toThrow(/already registered/);
    expect(A.ctx.get(Tools).visible()).toHaveLength(2);
    await server.dispose();
  });

  test('the disposer and the owning context both undo a registration; empty scope layers vanish', async () => {
    const { server, app } = await toolServer();
    const off = app.get(Tools).register(tool('a'));
    off();
    off();
    expect(app.get(Tools).visible()).toEqual([]);
    app.get(Tools).register(tool('a'));
    const A = createScope(app, { id: 'A' });
    A.ctx.get(Tools).register(tool('x'));
    A.ctx.get(Tools).restrict({ deny: ['a'] });
    A.ctx.get(Tools).guard(() => undefined);
    expect(leaks(server).sort()).toEqual(['tool "x" of scope A', 'tool guard of scope A', 'tool restriction of scope A']);
    await A.dispose();
    expect(leaks(server)).toEqual([]);
    // A's key is dead now: reading it is refused (SPEC 10.7), not answered with the globals
    expect(() => app.get(Tools).visible(A.key)).toThrow(TypeError);
    // layers are keyed by the key: a new scope with the same key finds A's tool and
    // restriction gone (its deny of "a" would hide "a", "x" would still be listed)
    const again = createScope(app, A.key);
    expect(again.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['a']);
    expect(app.get(Tools).visible(A.key).map((t) => t.name)).toEqual(['a']);
    await again.dispose();
    const child = app.child();
    child.get(Tools).register(tool('tmp'));
    await child.dispose();
    expect(app.get(Tools).get('tmp')).toBeUndefined();
    await server.dispose();
  });

  test('register snapshots: each field read once, stored record deep-frozen, execute bound to the original', async () => {
    const { server, app } = await toolServer();
    const reads: Record<string, number> = {};
    const def = {
      calls: 0,
      get name() {
        reads.name = (reads.name ?? 0) + 1;
        return reads.name === 1 ? 'snap' : 'changed';
      },
      get description() {
        reads.description = (reads.description ?? 0) + 1;
        return 'd';
      },
      parameters: { type: 'object', properties: { q: { type: 'string' } } } as Record<string, any>,
      execute(this: { calls: number }) {
        this.calls++;
        return `calls=${this.calls}`;
      },
    };
    app.get(Tools).register(def);
    expect(reads).toEqual({ name: 1, description: 1 });
    def.parameters.properties.q.type = 'number';
    def.execute = () => 'replaced';
    const stored = app.get(Tools).get('snap');
    expect(stored).toBeDefined();
    expect(app.get(Tools).get('snap')).toBe(stored);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(Object.isFrozen((stored as Tool).parameters)).toBe(true);
    expect(Object.isFrozen(((stored as Tool).parameters as any).properties.q)).toBe(true);
    expect(((stored as Tool).parameters as any).properties.q.type).toBe('string');
    const r = await app.get(Tools).execute({ callId: '1', name: 'snap', arguments: { q: 'x' } });
    expect(r.content).toBe('calls=1');
    expect(def.calls).toBe(1);
    expect(app.get(Tools).visible()[0]).toBe(stored);
    await server.dispose();
  });

  test('register reads every field of the definition exactly once', async () => {
    const { server, app } = await toolServer();
    const reads = new Map<PropertyKey, number>();
    const target = { ...tool('once', () => 'ran'), timeoutMs: 1000 };
    const def = new Proxy(target, {
      get(o, k, r) {
        reads.set(k, (reads.get(k) ?? 0) + 1);
        return Reflect.get(o, k, r) as unknown;
      },
    });
    app.get(Tools).register(def);
    for (const k of ['name', 'description', 'parameters', 'execute', 'timeoutMs']) expect([k, reads.get(k)]).toEqual([k, 1]);
    target.timeoutMs = 1;
    target.description = 'changed';
    expect(app.get(Tools).get('once')).toMatchObject({ description: 'the once tool', timeoutMs: 1000 });
    expect((await app.get(Tools).execute({ callId: '1', name: 'once', arguments: {} })).content).toBe('ran');
    await server.dispose();
  });

  test('register refuses every non-lossless parameters value the SPEC lists, with the SPEC message and no residue', async () => {
    const { server, app } = await toolServer();
    const A = createScope(app, { id: 'A' });
    const cyc: Record<string, unknown> = { type: 'object' };
    cyc.self = cyc;
    class Schema {
      type = 'object';
    }
    const bad: [string, unknown][] = [
      ['function', { type: 'object', default: () => 1 }],
      ['undefined', { type: 'object', default: undefined }],
      ['NaN', { type: 'object', default: NaN }],
      ['Infinity', { type: 'object', default: Infinity }],
      ['-Infinity', { type: 'object', default: -Infinity }],
      ['-0', { type: 'object', minimum: -0 }],
      ['bigint', { type: 'object', default: 1n }],
      ['symbol value', { type: 'object', default: Symbol('s') }],
      ['symbol key', { type: 'object', [Symbol('s')]: 1 }],
      ['cycle', cyc],
      // eslint-disable-next-line no-sparse-arrays
      ['sparse array', { type: 'object', enum: [1, , 3] }],
      ['Map', { type: 'object', default: new Map() }],
      ['Set', { type: 'object', default: new Set() }],
      ['class instance', new Schema()],
      ['Date', { type: 'object', default: new Date(0) }],
    ];
    for (const view of [app.get(Tools), A.ctx.get(Tools)]) {
      for (const [what, parameters] of bad) {
        let err: unknown;
        try {
          view.register({ ...tool('p'), parameters: parameters as never });
        } catch (e) {
          err = e;
        }
        expect([what, err instanceof NotLosslessJsonError]).toEqual([what, true]);
        expect((err as Error).message).toMatch(/^Tools\.register\(p\): tool parameters must be losslessly JSON-serializable: parameters/);
      }
      expect(view.visible()).toEqual([]);
    }
    expect(leaks(server)).toEqual([]);
    await server.dispose();
  });

  test('a tool of another scope is indistinguishable from a missing one in every read and in execute', async () => {
    const { server, app } = await toolServer();
    const A = createScope(app, { id: 'A' });
    const B = createScope(app, { id: 'B' });
    A.ctx.get(Tools).register(tool('secret'));
    for (const t of [B.ctx.get(Tools), app.get(Tools), A.ctx.child().get(Tools)]) {
      const foreign = t.scope !== A.key;
      expect(t.get('secret') === undefined).toBe(foreign);
      expect(t.visible().some((x) => x.name === 'secret')).toBe(!foreign);
      expect(t.schemas().some((x) => x.name === 'secret')).toBe(!foreign);
      expect(t.knownNames().includes('secret')).toBe(!foreign);
      const r = await t.execute({ callId: 'c', name: 'secret', arguments: {} });
      const m = await t.execute({ callId: 'c', name: 'missing', arguments: {} });
      if (foreign) {
        expect(r).toEqual({ callId: 'c', content: 'Error: unknown tool "secret"', isError: true, error: { code: 'UNKNOWN_TOOL', message: 'unknown tool "secret"' } });
        expect({ ...r, content: r.content.replace('secret', 'missing'), error: { ...r.error, message: r.error?.message.replace('secret', 'missing') } }).toEqual(m);
      } else expect(r.isError).toBe(false);
    }
    await server.dispose();
  });

  test('registrations through a turn below an agent scope belong to the agent\'s layer and are owned by the turn', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('g'));
    const A = createScope(app, { id: 'A' });
    A.ctx.get(Tools).register(tool('kept'));
    const turn = A.ctx.child().child();
    turn.get(Tools).register(tool('turn-tool'));
    turn.get(Tools).restrict({ deny: ['g'] });
    turn.get(Tools).guard((e) => (e.name === 'kept' ? 'turn guard' : undefined));
    expect(app.get(Tools).visible(A.key).map((t) => t.name)).toEqual(['kept', 'turn-tool']);
    expect(A.ctx.get(Tools).knownNames()).toEqual(['g', 'kept', 'turn-tool']);
    expect((await A.ctx.get(Tools).execute({ callId: '1', name: 'kept', arguments: {} })).content).toBe('Error: turn guard');
    expect(app.get(Tools).visible().map((t) => t.name)).toEqual(['g']);
    await turn.dispose();
    expect(A.ctx.get(Tools).visible().map((t) => t.name)).toEqual(['g', 'kept']);
    expect((await A.ctx.get(Tools).execute({ callId: '2', name: 'kept', arguments: {} })).content).toBe('kept');
    expect(leaks(server)).toEqual(['tool "kept" of scope A']);
    await server.dispose();
  });

  test('guards are flat: a parent scope\'s guard does not govern its nested scope, nor the other way round', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('x'));
    const P = createScope(app, { id: 'P' });
    const C = createScope(P.ctx, { id: 'C' });
    P.ctx.get(Tools).guard(() => 'parent says no');
    expect((await C.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('x');
    expect((await P.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: parent says no');
    const { server: s2, app: a2 } = await toolServer();
    a2.get(Tools).register(tool('x'));
    const P2 = createScope(a2, { id: 'P' });
    const C2 = createScope(P2.ctx, { id: 'C' });
    C2.ctx.get(Tools).guard(() => 'child says no');
    expect((await P2.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('x');
    expect((await C2.ctx.get(Tools).execute({ callId: '1', name: 'x', arguments: {} })).content).toBe('Error: child says no');
    await server.dispose();
    await s2.dispose();
  });

  test('schemas() are detached {name, description, parameters} copies', async () => {
    const { server, app } = await toolServer();
    app.get(Tools).register(tool('a'));
    const s = app.get(Tools).schemas();
    expect(s).toEqual([{ name: 'a', description: 'the a tool', parameters: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false } }]);
    expect(Object.keys(s[0])).toEqual(['name', 'description', 'parameters']);
    (s[0].parameters as any).type = 'string';
    s[0].name = 'zzz';
    expect(app.get(Tools).schemas()[0].name).toBe('a');
    expect((app.get(Tools).schemas()[0].parameters as any).type).toBe('object');
    await server.dispose();
  });

  test('bad definitions throw and leave no residue', async () => {
    const { server, app } = await toolServer();
    const t = app.get(Tools);
    expect(() => t.register(null as never)).toThrow(TypeError);
    expect(() => t.register({ ...tool('a'), name: '' })).toThrow(/name must be a non-empty string/);
    expect(() => t.register({ ...tool('a'), description: 3 as never })).toThrow(/description must be a string/);
    expect(() => t.register({ ...tool('a'), execute: 'x' as never })).toThrow(/execute must be a function/);
    expect(() => t.register({ ...tool('a'), timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => t.register({ ...tool('a'), parameters: [] as never })).toThrow(/JSON Schema object/);
    expect(() => t.register({ ...tool('a'), parameters: { type: 'nope' } })).toThrow(/not a valid JSON Schema/);
    expect(() => t.register({ ...tool('a'), parameters: { $ref: 'http://example.com/missing.json' } })).toThrow(/can not be compiled/);
    const bad = { type: 'object', default: NaN };
    expect(() => t.register({ ...tool('a'), parameters: bad })).toThrow('tool parameters must be losslessly JSON-serializable');
    expect(() => t.register({ ...tool('a'), parameters: bad })).toThrow(NotLosslessJsonError);
    const throwing = { ...tool('a') };
    Object.defineProperty(throwing, 'parameters', { get: () => { throw new Error('nope'); }, enumerable: true });
    expect(() => t.register(throwing)).toThrow(/reading "parameters" threw/);
    expect(t.visible()).toEqual([]);
    t.register(tool('a'));
    expect(t.visible()).toHaveLength(1);
    await server.dispose();
  });

  test('read APIs refuse a non-object scope and a context passed as scope', async () => {
    const { server, app } = await toolServer();
    expect(() => app.get(Tools).visible('A' as never)).toThrow(/scope must be a scope key/);
    expect(() => app.get(Tools).get('x', app as never)).toThrow(/scopeOf\(ctx\)/);
    await server.dispose();
  });

  test('a disposed view refuses registrations', async () => {
    const { server, app } = await toolServer();
    const c = app.child();
    const t = c.get(Tools);
    await c.dispose();
    expect(() => t.register(tool('a'))).toThrow(/disposed/);
    expect(() => t.guard(() => undefined)).toThrow(/disposed/);
    expect(app.get(Tools).visible()).toEqual([]);
    await server.dispose();
  });

  test('ToolsPlugin installs Events too; validators are shared and released', async () => {
    const { server, app } = await toolServer();
    const { toolRegistryOf } = await import('../../src/tools/tools.js');
    const reg = toolRegistryOf(server) as NonNullable<ReturnType<typeof toolRegistryOf>>;
    const offs = [app.get(Tools).register(tool('a')), app.get(Tools).register(tool('b'))];
    expect(reg.validatorCount).toBe(1);
    const off3 = app.get(Tools).register({ ...tool('c'), parameters: { type: 'object' } });
    expect(reg.validatorCount).toBe(2);
    offs.forEach((f) => f());
    off3();
    expect(reg.validatorCount).toBe(0);
    expect(() => app.get(Tools).register(tool('a'))).not.toThrow();
    expect(() => app.get(Tools).register(tool('a'))).toThrow(/already registered/);
    expect(reg.validatorCount).toBe(1);
    await server.dispose();
  });

  test('a released validator is kept in a bounded LRU and reused when the schema comes back', async () => {
    const { server, app } = await toolServer();
    const { toolRegistryOf } = await import('../../src/tools/tools.js');
    const reg = toolRegistryOf(server) as NonNullable<ReturnType<typeof toolRegistryOf>>;
    const schemaOf = (i: number) => ({ type: 'object', properties: { [`p${i}`]: { type: 'string' } }, required: [`p${i}`] });
    const scope = createScope(app, { id: 'agent-1' });
    scope.ctx.get(Tools).register({ ...tool('a'), parameters: schemaOf(0) });
    const first = scope.ctx.get(Tools).visible()[0].parameters;
    await scope.dispose();
    expect(reg.validatorCount).toBe(0);
    expect(reg.releasedValidatorCount).toBe(1);

    // The next agent with the same schema takes the validator back out of the LRU, and it still validates.
    const again = createScope(app, { id: 'agent-2' });
    again.ctx.get(Tools).register({ ...tool('a'), parameters: schemaOf(0) });
    expect(reg.validatorCount).toBe(1);
    expect(reg.releasedValidatorCount).toBe(0);
    expect(again.ctx.get(Tools).visible()[0].parameters).toBe(first);
    const bad = await again.ctx.get(Tools).execute({ callId: 'c1', name: 'a', arguments: { p0: 1 } });
    expect(bad.error?.code).toBe('INVALID_ARGS');
    const ok = await again.ctx.get(Tools).execute({ callId: 'c2', name: 'a', arguments: { p0: 'x' } });
    expect(ok.isError).toBe(false);
    await again.dispose();

    // Many distinct schemas released: the LRU stays bounded and keeps the most recent ones.
    const offs = Array.from({ length: 300 }, (_, i) => app.get(Tools).register({ ...tool(`t${i}`), parameters: schemaOf(i) }));
    expect(reg.validatorCount).toBe(300);
    offs.forEach((off) => off());
    expect(reg.validatorCount).toBe(0);
    expect(reg.releasedValidatorCount).toBe(RELEASED_VALIDATORS_MAX);
    app.get(Tools).register({ ...tool('recent'), parameters: schemaOf(299) });
    expect(reg.releasedValidatorCount).toBe(RELEASED_VALIDATORS_MAX - 1);
    app.get(Tools).register({ ...tool('evicted'), parameters: schemaOf(1) });
    expect(reg.releasedValidatorCount).toBe(RELEASED_VALIDATORS_MAX - 1);
    expect(reg.validatorCount).toBe(2);
    await server.dispose();
  });
});

describe('Tools.restrict', () => {
  async function world() {
    const { server, app } = await toolServer();
    for (const n of ['read', 'write', 'shell']) app.get(Tools).register(tool(n));
    const A = createScope(app, { id: 'A' });
    A.ctx.get(Tools).register(tool('own'));
    return { server, app, A, t: A.ctx.get(Tools) };
  }

  test('requires a scoped context', async () => {
    const { server, app } = await world();
    expect(() => app.get(Tools).restrict({ deny: ['read'] })).toThrow('requires a scoped context');
    await server.dispose();
  });

  test('{} and deny: [] are no-ops and throw', async () => {
    const { server, t } = await world();
    expect(() => t.restrict({})).toThrow('no-op');
    expect(() => t.restrict({ deny: [] })).toThrow('no-op');
    expect(() => t.restrict({ allow: undefined })).toThrow('no-op');
    await server.dispose();
  });

  test('unknown names throw listing the known names of the scope (or (none))', async () => {
    const { server, app, t } = await world();
    expect(() => t.restrict({ deny: ['nope'] })).toThrow(/unknown tool "nope"; known tools for this scope: read, write, shell, own$/);
    const B = createScope(app, { id: 'B' });
    expect(() => B.ctx.get(Tools).restrict({ allow: ['own'] })).toThrow(/unknown tool "own"; known tools for this scope: read, write, shell$/);
    const { server: s2, app: a2 } = await toolServer();
    expect(() => createScope(a2, {}).ctx.get(Tools).restrict({ allow: ['x'] })).toThrow(/unknown tool "x"; known tools for this scope: \(none\)$/);
    await server.dispose();
    await s2.dispose();
  });

  test('allow keeps the listed global tools, deny hides; restrictions intersect; own tools never masked', async () => {
    const { server, t, A, app } = await world();
    const off1 = t.restrict({ allow: ['read', 'write', 'own'] });
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'write', 'own']);
    const off2 = t.restrict({ deny: ['write', 'own'] });
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'own']);
    expect(t.knownNames()).toEqual(['read', 'write', 'shell', 'own']);
    expect(app.get(Tools).visible().map((x) => x.name)).toEqual(['read', 'write', 'shell']);
    off1();
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'shell', 'own']);
    off2();
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'write', 'shell', 'own']);
    expect(A.key).toBeDefined();
    await server.dispose();
  });

  test('allow: [] hides every global tool but not the scope own ones; a later global tool stays hidden', async () => {
    const { server, t, app } = await world();
    t.restrict({ allow: [] });
    expect(t.visible().map((x) => x.name)).toEqual(['own']);
    app.get(Tools).register(tool('late'));
    expect(t.visible().map((x) => x.name)).toEqual(['own']);
    expect(app.get(Tools).visible().map((x) => x.name)).toContain('late');
    await server.dispose();
  });

  test('a restricted-away tool is indistinguishable from a missing one', async () => {
    const { server, t } = await world();
    t.restrict({ deny: ['shell'] });
    expect(t.get('shell')).toBeUndefined();
    expect(t.schemas().map((s) => s.name)).not.toContain('shell');
    const r = await t.execute({ callId: '1', name: 'shell', arguments: {} });
    const m = await t.execute({ callId: '1', name: 'missing', arguments: {} });
    expect(r).toEqual({ callId: '1', content: 'Error: unknown tool "shell"', isError: true, error: { code: 'UNKNOWN_TOOL', message: 'unknown tool "shell"' } });
    expect(m.content).toBe('Error: unknown tool "missing"');
    await server.dispose();
  });

  test('caller arrays are read once and copied', async () => {
    const { server, t } = await world();
    const allow = ['read'];
    let reads = 0;
    const r = {
      get allow() {
        reads++;
        return allow;
      },
    };
    t.restrict(r);
    allow.push('write');
    expect(reads).toBe(1);
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'own']);
    const deny = ['read'];
    let denyReads = 0;
    t.restrict({
      get deny() {
        denyReads++;
        return denyReads === 1 ? deny : ['nope-not-known'];
      },
    });
    deny.length = 0;
    expect(denyReads).toBe(1);
    expect(t.visible().map((x) => x.name)).toEqual(['own']);
    await server.dispose();
  });

  test('restrictions never mask the scope\'s own tool, also when it shadows a global one of the same name', async () => {
    const { server, app, t } = await world();
    t.register(tool('read', () => 'scoped read'));
    t.restrict({ deny: ['read'] });
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'write', 'shell', 'own']);
    expect(t.get('read')?.execute).toBe(app.get(Tools).get('read', t.scope)?.execute);
    t.restrict({ allow: [] });
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'own']);
    expect((await t.execute({ callId: '1', name: 'read', arguments: {} })).content).toBe('scoped read');
    expect((await app.get(Tools).execute({ callId: '2', name: 'read', arguments: {} })).content).toBe('read');
    await server.dispose();
  });

  test('restrictions are flat: a parent scope\'s restriction does not reach its nested scope, nor the other way round', async () => {
    const { server, A, t } = await world();
    const C = createScope(A.ctx.child(), { id: 'C' });
    t.restrict({ deny: ['shell'] });
    C.ctx.get(Tools).restrict({ allow: ['read'] });
    expect(t.visible().map((x) => x.name)).toEqual(['read', 'write', 'own']);
    expect(C.ctx.get(Tools).visible().map((x) => x.name)).toEqual(['read']);
    expect(C.ctx.get(Tools).knownNames()).toEqual(['read', 'write', 'shell']);
    await server.dispose();
  });

  test('bad lists throw TypeErrors and leave no restriction', async () => {
    const { server, t } = await world();
    expect(() => t.restrict({ allow: 'read' as never })).toThrow(TypeError);
    expect(() => t.restrict({ deny: [3 as never] })).toThrow(TypeError);
    expect(() => t.restrict(null as never)).toThrow(TypeError);
    expect(t.visible()).toHaveLength(4);
    await server.dispose();
  });
});
