import { ContextDisposedError, Server, createScope, scopeOf, token } from '../../src/index.js';

class Config {
  constructor(public name = 'cfg') {}
}

async function root() {
  const server = new Server();
  server.insertGlobal(new Config('global'));
  await server.finish();
  return { server, app: server.createContext() };
}

describe('createScope / scopeOf', () => {
  test('scope.ctx is a child of ctx tagged with key; Res walks to ctx', async () => {
    const { server, app } = await root();
    const T = token<string>('T');
    app.insert(T, 'from owner');
    const key = { id: 'agent' };
    const scope = createScope(app, key);
    expect(scope.key).toBe(key);
    expect(scope.ctx.parent).toBe(app);
    expect(scope.ctx.get(T)).toBe('from owner');
    expect(scope.ctx.get(Config).name).toBe('global');
    expect(scopeOf(scope.ctx)).toBe(key);
    expect(scopeOf(app)).toBeUndefined();
    expect(scopeOf(scope.ctx.child().child())).toBe(key);
    await server.dispose();
  });

  test('a function is a valid key; anything else throws a TypeError', async () => {
    const { server, app } = await root();
    const fnKey = function agentKey() {};
    expect(scopeOf(createScope(app, fnKey).ctx)).toBe(fnKey);
    for (const bad of [null, undefined, 'a', 1, Symbol('s'), true]) {
      expect(() => createScope(app, bad as never)).toThrow(TypeError);
      expect(() => createScope(app, bad as never)).toThrow('non-null object or function');
    }
    expect(() => createScope({} as never, {})).toThrow(TypeError);
    expect(() => scopeOf({} as never)).toThrow(TypeError);
    await server.dispose();
  });

  test('a nested createScope replaces the tag below it only', async () => {
    const { server, app } = await root();
    const outer = createScope(app, { id: 'outer' });
    const mid = outer.ctx.child();
    const inner = createScope(mid, { id: 'inner' });
    expect(scopeOf(inner.ctx)).toBe(inner.key);
    expect(scopeOf(inner.ctx.child())).toBe(inner.key);
    expect(scopeOf(mid)).toBe(outer.key);
    expect(scopeOf(outer.ctx.child())).toBe(outer.key);
    await server.dispose();
  });

  test('disposing the owner disposes the scope; scopeOf still works on a disposed context', async () => {
    const { server, app } = await root();
    const owner = app.child();
    const scope = createScope(owner, { id: 'x' });
    let cleaned = false;
    scope.ctx.onDispose(() => {
      cleaned = true;
    });
    await owner.dispose();
    expect(scope.ctx.isDisposed).toBe(true);
    expect(cleaned).toBe(true);
    expect(scopeOf(scope.ctx)).toBe(scope.key);
    await expect(scope.dispose()).resolves.toBeUndefined();
    expect(() => createScope(owner, {})).toThrow(ContextDisposedError);
    await server.dispose();
  });

  test('dispose() is memoized: repeated and racing calls share one promise that waits for every async cleanup', async () => {
    const { server, app } = await root();
    const scope = createScope(app, {});
    const done: string[] = [];
    scope.ctx.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 20));
      done.push('slow');
    });
    scope.ctx.child().onDispose(async () => {
      await new Promise((r) => setTimeout(r, 5));
      done.push('child');
    });
    const p1 = scope.dispose();
    const p2 = scope.dispose();
    expect(p2).toBe(p1);
    expect(scope.ctx.isDisposed).toBe(true);
    await p2;
    expect(done).toEqual(['child', 'slow']);
    await server.dispose();
  });

  test('dispose() after rawDispose() still waits until the raw teardown settled', async () => {
    const { server, app } = await root();
    const scope = createScope(app, {});
    let settled = false;
    scope.ctx.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 20));
      settled = true;
    });
    void scope.rawDispose();
    await scope.dispose();
    expect(settled).toBe(true);
    await server.dispose();
  });

  test('rawDispose() is the scope context\'s own single-shot disposer: it disposes the scope (not the owner) once', async () => {
    const { server, app } = await root();
    const scope = createScope(app, {});
    let runs = 0;
    let settled = false;
    scope.ctx.onDispose(async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 20));
      settled = true;
    });
    const p = scope.rawDispose();
    expect(scope.ctx.isDisposed).toBe(true);
    expect(app.isDisposed).toBe(false);
    await p;
    expect(settled).toBe(true);
    await scope.rawDispose();
    await scope.dispose();
    expect(runs).toBe(1);
    await server.dispose();
  });

  test('dispose() racing the owner disposal waits for the same teardown', async () => {
    const { server, app } = await root();
    const owner = app.child();
    const scope = createScope(owner, {});
    let settled = false;
    scope.ctx.onDispose(async () => {
      await new Promise((r) => setTimeout(r, 20));
      settled = true;
    });
    const ownerDone = owner.dispose();
    await scope.dispose();
    expect(settled).toBe(true);
    await ownerDone;
    await server.dispose();
  });

  test('cleanup errors reject dispose() with an AggregateError after all cleanups ran', async () => {
    const { server, app } = await root();
    const scope = createScope(app, {});
    let ran = false;
    scope.ctx.onDispose(() => {
      ran = true;
    });
    scope.ctx.onDispose(() => {
      throw new Error('cleanup failed');
    });
    await expect(scope.dispose()).rejects.toThrow(AggregateError);
    await expect(scope.dispose()).rejects.toThrow(/cleanup failed/);
    expect(ran).toBe(true);
    await server.dispose();
  });
});
