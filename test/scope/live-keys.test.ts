/**
 * SPEC §10.7 live scope keys (contract C2): a key is live from `createScope` until its
 * scope's disposal starts; `createScope` with a live key throws a TypeError; the test
 * probe's `liveScope(server, key)` returns the live scope context of a key.
 */
import { createScope, inspect, scopeOf, Server } from '../../src/index.js';
import { probe } from '../../src/testing/probe.js';

async function root() {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

test('a live key is refused anywhere on the server; liveScope returns its scope context', async () => {
  const { server, ctx } = await root();
  const key = { id: 'billing' };
  const scope = createScope(ctx, key);
  expect(probe.liveScope(server, key)).toBe(scope.ctx);
  expect(() => createScope(ctx, key)).toThrow(TypeError);
  expect(() => createScope(server.createContext(), key)).toThrow(/already live: the scope of the context at depth 1 \(scope billing\) uses it/);
  expect(() => createScope(scope.ctx, key)).toThrow(TypeError);
  expect(probe.liveScope(server, { id: 'billing' })).toBeUndefined();
  await server.dispose();
});

test('the key stops being live the moment the scope’s disposal starts (synchronously), and may be used again', async () => {
  const { server, ctx } = await root();
  const key = {};
  const scope = createScope(ctx, key);
  let release!: () => void;
  scope.ctx.onDispose(() => new Promise<void>((r) => (release = r)));
  const p = scope.dispose();
  expect(probe.liveScope(server, key)).toBeUndefined();
  const again = createScope(ctx, key);
  expect(probe.liveScope(server, key)).toBe(again.ctx);
  expect(scopeOf(again.ctx)).toBe(key);
  await new Promise((r) => setImmediate(r));
  release();
  await p;
  // the old scope's end does not end the new one
  expect(probe.liveScope(server, key)).toBe(again.ctx);
  await server.dispose();
});

test('disposing the owner (or an ancestor) ends the liveness of every scope below it', async () => {
  const { server, ctx } = await root();
  const a = {};
  const b = {};
  const outer = createScope(ctx.child(), a);
  const inner = createScope(outer.ctx.child(), b);
  void ctx.dispose();
  expect(probe.liveScope(server, a)).toBeUndefined();
  expect(probe.liveScope(server, b)).toBeUndefined();
  expect(inner.ctx.isDisposed).toBe(true);
  await server.dispose();
});

test('a function key works the same; a refused createScope adopts nothing', async () => {
  const { server, ctx } = await root();
  const key = (): void => undefined;
  createScope(ctx, key);
  const before = inspect(ctx).children.length;
  expect(() => createScope(ctx, key)).toThrow(TypeError);
  expect(inspect(ctx).children.length).toBe(before);
  await server.dispose();
});
