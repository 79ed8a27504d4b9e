import { Server, createScope } from '../../src/index.js';
import { ScopedList } from '../../src/registry/scoped-list.js';

async function contexts() {
  const server = new Server();
  await server.finish();
  const app = server.createContext();
  const a = createScope(app, { id: 'A' });
  const b = createScope(app, { id: 'B' });
  return { server, app, a, b };
}

test('items go to the global list or to their scope\'s, in registration order', async () => {
  const { server, app, a, b } = await contexts();
  const list = new ScopedList<string>('tool guard');
  expect(list.global).toEqual([]);
  expect(list.of(a.key)).toBeUndefined();
  list.add(app, undefined, 'g1');
  list.add(a.ctx, a.key, 'a1');
  list.add(a.ctx, a.key, 'a2');
  list.add(app, undefined, 'g2');
  expect(list.global).toEqual(['g1', 'g2']);
  expect(list.of(a.key)).toEqual(['a1', 'a2']);
  expect(list.has(a.key)).toBe(true);
  expect(list.has(b.key)).toBe(false);
  expect(list.scopes).toBe(1);
  await server.dispose();
});

test('every change replaces the list: a reader keeps its array, a cache sees a new identity', async () => {
  const { server, app, a } = await contexts();
  const list = new ScopedList<string>('tool restriction');
  const undo = list.add(a.ctx, a.key, 'a1');
  const before = list.of(a.key);
  list.add(a.ctx, a.key, 'a2');
  const after = list.of(a.key);
  expect(after).not.toBe(before);
  expect(before).toEqual(['a1']);
  undo();
  expect(list.of(a.key)).not.toBe(after);
  expect(after).toEqual(['a1', 'a2']);
  expect(list.of(a.key)).toEqual(['a2']);
  const g = list.global;
  list.add(app, undefined, 'g');
  expect(g).toEqual([]);
  await server.dispose();
});

test('a disposer removes its own item once; the same item added twice is removed once per disposer', async () => {
  const { server, a } = await contexts();
  const list = new ScopedList<string>('prompt protection');
  const first = list.add(a.ctx, a.key, 'x');
  const second = list.add(a.ctx, a.key, 'x');
  first();
  first();
  expect(list.of(a.key)).toEqual(['x']);
  second();
  expect(list.of(a.key)).toBeUndefined(); // a scope left without items is forgotten
  expect(list.scopes).toBe(0);
  await server.dispose();
});

test('the owner\'s disposal removes its items; a disposer called afterwards does nothing', async () => {
  const { server, app, a, b } = await contexts();
  const list = new ScopedList<string>('tool guard');
  const undo = list.add(a.ctx, a.key, 'a1');
  list.add(b.ctx, b.key, 'b1');
  list.add(app, undefined, 'g');
  await a.dispose();
  expect(list.of(a.key)).toBeUndefined();
  undo();
  expect(list.of(b.key)).toEqual(['b1']);
  await app.dispose();
  expect(list.global).toEqual([]);
  expect(list.scopes).toBe(0);
  await server.dispose();
});

test('a disposed owner refuses: its error is thrown and nothing is left in the list', async () => {
  const { server, a } = await contexts();
  const list = new ScopedList<string>('tool guard');
  await a.dispose();
  expect(() => list.add(a.ctx, a.key, 'late')).toThrow(/disposed/);
  expect(list.of(a.key)).toBeUndefined();
  expect(list.leaks()).toEqual([]);
  await server.dispose();
});

test('leaks() lists one line per scoped item, naming the kind and the scope; global items are not leaks', async () => {
  const { server, app, a, b } = await contexts();
  const list = new ScopedList<number>('tool restriction');
  list.add(app, undefined, 0);
  list.add(a.ctx, a.key, 1);
  list.add(a.ctx, a.key, 2);
  list.add(b.ctx, b.key, 3);
  expect(list.leaks()).toEqual(['tool restriction of scope A', 'tool restriction of scope A', 'tool restriction of scope B']);
  await server.dispose();
  expect(list.leaks()).toEqual([]);
});
