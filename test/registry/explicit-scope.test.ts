import { Server, createScope } from '../../src/index.js';
import { explicitScope } from '../../src/registry/explicit-scope.js';

async function contexts() {
  const server = new Server();
  await server.finish();
  const app = server.createContext();
  const a = createScope(app, { id: 'A' });
  return { server, app, a };
}

const FIX = 'omit scope';

test('an omitted scope is the view\'s own; the own key and a live key are read as given', async () => {
  const { server, app, a } = await contexts();
  expect(explicitScope(app, undefined, 'Kind.read(scope)', FIX)).toBeUndefined();
  expect(explicitScope(a.ctx, undefined, 'Kind.read(scope)', FIX)).toBe(a.key);
  expect(explicitScope(a.ctx, a.key, 'Kind.read(scope)', FIX)).toBe(a.key);
  expect(explicitScope(app, a.key, 'Kind.read(scope)', FIX)).toBe(a.key);
  const fnKey = function worker() {};
  createScope(app, fnKey);
  expect(explicitScope(app, fnKey, 'Kind.read(scope)', FIX)).toBe(fnKey);
  await server.dispose();
});

test('a value that is no scope key is a TypeError naming the call; a context is told to pass scopeOf(ctx)', async () => {
  const { server, app, a } = await contexts();
  expect(() => explicitScope(app, 'A', 'Kind.read(scope)', FIX)).toThrow(
    new TypeError('Kind.read(scope): scope must be a scope key (an object) or omitted, got the string "A"; for a context pass scopeOf(ctx).'),
  );
  expect(() => explicitScope(app, null, 'Kind.read(scope)', FIX, 'an object or function')).toThrow(/scope must be a scope key \(an object or function\) or omitted, got null/);
  expect(() => explicitScope(app, a.ctx, 'Kind.read(scope)', FIX)).toThrow(/for a context pass scopeOf\(ctx\)/);
  await server.dispose();
});

test('a forged key, or the key of a scope whose disposal started, is refused with the given fix', async () => {
  const { server, app, a } = await contexts();
  expect(() => explicitScope(app, { id: 'forged' }, 'Kind.read(scope)', FIX)).toThrow(
    /^Kind\.read\(scope\): scope forged is neither this view's own scope nor a live scope key .*; omit scope\.$/,
  );
  const disposing = a.dispose();
  expect(() => explicitScope(app, a.key, 'Kind.read(scope)', FIX)).toThrow(TypeError);
  await disposing;
  expect(() => explicitScope(app, a.key, 'Kind.read(scope)', FIX)).toThrow(/scope A is neither/);
  await server.dispose();
});
