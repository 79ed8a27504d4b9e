import { RegistrationError, Server, createScope } from '../../src/index.js';
import { Layers } from '../../src/scope/layers.js';
import { probe } from '../../src/testing/probe.js';

async function world() {
  const server = new Server();
  await server.finish();
  const app = server.createContext();
  const layers = new Layers<string>('thing', server);
  return { server, app, layers };
}
const leaks = (s: Server) => probe.registrationLeaks(s);

describe('Layers (the shared registration primitive)', () => {
  test('merged(K) = global + K only, K shadows global keeping its position', async () => {
    const { server, app, layers } = await world();
    layers.add(app, 'a', 'ga');
    layers.add(app, 'b', 'gb');
    const A = createScope(app, { id: 'A' });
    const B = createScope(app, { id: 'B' });
    layers.add(A.ctx, 'b', 'Ab');
    layers.add(A.ctx, 'c', 'Ac');
    layers.add(B.ctx, 'd', 'Bd');
    expect([...layers.merged(A.key)]).toEqual([['a', 'ga'], ['b', 'Ab'], ['c', 'Ac']]);
    expect([...layers.merged(B.key)]).toEqual([['a', 'ga'], ['b', 'gb'], ['d', 'Bd']]);
    expect([...layers.merged(undefined)]).toEqual([['a', 'ga'], ['b', 'gb']]);
    expect([...layers.merged({})]).toEqual([['a', 'ga'], ['b', 'gb']]);
    await server.dispose();
  });

  test('merged views are cached until a layer involved changes', async () => {
    const { server, app, layers } = await world();
    layers.add(app, 'a', 'ga');
    const A = createScope(app, { id: 'A' });
    const B = createScope(app, { id: 'B' });
    layers.add(A.ctx, 'x', 'Ax');
    layers.add(B.ctx, 'y', 'By');
    const m1 = layers.merged(A.key);
    expect(layers.merged(A.key)).toBe(m1);
    const g1 = layers.merged(undefined);
    expect(layers.merged(undefined)).toBe(g1);
    layers.add(B.ctx, 'z', 'Bz');
    expect(layers.merged(A.key)).toBe(m1);
    expect(layers.merged(undefined)).toBe(g1);
    const off = layers.add(app, 'late', 'g');
    expect(layers.merged(A.key)).not.toBe(m1);
    expect([...layers.merged(A.key).keys()]).toEqual(['a', 'late', 'x']);
    off();
    expect([...layers.merged(A.key).keys()]).toEqual(['a', 'x']);
    expect([...layers.merged(undefined).keys()]).toEqual(['a']);
    await server.dispose();
  });

  test('a duplicate name in one layer throws; the global message hints at the agent context', async () => {
    const { server, app, layers } = await world();
    layers.add(app, 'a', '1');
    expect(() => layers.add(app, 'a', '2')).toThrow(RegistrationError);
    expect(() => layers.add(app, 'a', '2')).toThrow(/thing "a" is already registered in the global layer.*agent's context/s);
    const A = createScope(app, { id: 'A' });
    layers.add(A.ctx, 'a', 'scoped');
    expect(() => layers.add(A.ctx.child(), 'a', 'again')).toThrow(/already registered in this scope's layer/);
    expect(layers.merged(A.key).get('a')).toBe('scoped');
    await server.dispose();
  });

  test('a throwing change listener rolls the registration back (no residue, no leak, no cleanup left)', async () => {
    const { server, app, layers } = await world();
    const A = createScope(app, { id: 'A' });
    const off = layers.onChange((c) => {
      if (c.kind === 'add' && c.entry.name === 'forbidden') throw new Error('vetoed');
    });
    expect(() => layers.add(A.ctx, 'forbidden', 'x')).toThrow('vetoed');
    expect(layers.hasLayer(A.key)).toBe(false);
    expect(leaks(server)).toEqual([]);
    expect(layers.merged(A.key).has('forbidden')).toBe(false);
    off();
    layers.add(A.ctx, 'forbidden', 'x');
    expect(layers.merged(A.key).get('forbidden')).toBe('x');
    await server.dispose();
  });

  test('change listeners hear adds and removes', async () => {
    const { server, app, layers } = await world();
    const seen: string[] = [];
    layers.onChange((c) => void seen.push(`${c.kind}:${c.entry.name}`));
    const off = layers.add(app, 'a', '1');
    off();
    off();
    expect(seen).toEqual(['add:a', 'remove:a']);
    await server.dispose();
  });

  test('ownership: the registering context undoes it; empty scope layers are deleted; leak probe lists scoped entries', async () => {
    const { server, app, layers } = await world();
    const A = createScope(app, { id: 'A' });
    const turn = A.ctx.child();
    layers.add(A.ctx, 'x', '1');
    layers.add(turn, 'y', '2');
    expect(leaks(server).sort()).toEqual(['thing "x" of scope A', 'thing "y" of scope A']);
    await turn.dispose();
    expect([...layers.layer(A.key).keys()]).toEqual(['x']);
    await A.dispose();
    expect(layers.hasLayer(A.key)).toBe(false);
    expect(layers.scopeCount).toBe(0);
    expect(leaks(server)).toEqual([]);
    await server.dispose();
  });

  test('a disposed context can not register', async () => {
    const { server, app, layers } = await world();
    const c = app.child();
    await c.dispose();
    expect(() => layers.add(c, 'a', '1')).toThrow(/disposed/);
    expect(layers.merged(undefined).size).toBe(0);
    await server.dispose();
  });

  test('scopesWith lists the scopes shadowing a name', async () => {
    const { server, app, layers } = await world();
    const A = createScope(app, { id: 'A' });
    layers.add(A.ctx, 'n', '1');
    expect(layers.scopesWith('n')).toEqual([A.key]);
    expect(layers.scopesWith('m')).toEqual([]);
    await server.dispose();
  });
});
