/**
 * SPEC §10.7 live scope keys (contract C2): a key is live from `createScope` until its
 * scope's disposal starts; `createScope` with a live key throws a TypeError; the
 * internal `server._scopeCtx(key)` returns the live scope context of a key.
 */
import { createScope, scopeOf, Server } from '../../src/index.js';

async function root() {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

test('a live key is refused anywhere on the server; _scopeCtx returns its scope context', async () => {
  const { server, ctx } = await root();
  const key = { id: 'billing' };
  const scope = createScope(ctx, key);
  expect(server._scopeCtx(key)).toBe(scope.ctx);
  expect(() => createScope(ctx, key)).toThrow(TypeError);
  expect(() => createScope(server.createContext(), key)).toThrow(/already live: the scope of the context at depth 1 \(scope billing\) uses it/);
  expect(() => createScope(scope.ctx, key)).toThrow(TypeError);
  expect(server._scopeCtx({ id: 'billing' })).toBeUndefined();
  await server.dispose();
});

test('the key stops being live the moment the scope’s disposal starts (synchronously), and may be used again', async () => {
  const { server, ctx } = await root();
  const key = {};
  const scope = createScope(ctx, key);
  let release!: () => void;
  scope.ctx.onDispose(() => new Promise<void>((r) => (release = r)));
  const p = scope.dispose();
  expect(server._scopeCtx(key)).toBeUndefined();
  const again = createScope(ctx, key);
  expect(server._scopeCtx(key)).toBe(again.ctx);
  expect(scopeOf(again.ctx)).toBe(key);
  await new Promise((r) => setImmediate(r));
  release();
  await p;
  // the old scope's end does not end the new one
  expect(server._scopeCtx(key)).toBe(again.ctx);
  await server.dispose();
});

test('disposing the owner (or an ancestor) ends the liveness of every scope below it', async () => {
  const { server, ctx } = await root();
  const a = {};
  const b = {};
  const outer = createScope(ctx.child(), a);
  const inner = createScope(outer.ctx.child(), b);
  void ctx.dispose();
  expect(server._scopeCtx(a)).toBeUndefined();
  expect(server._scopeCtx(b)).toBeUndefined();
  expect(inner.ctx.isDisposed).toBe(true);
  await server.dispose();
});

test('a function key works the same; a refused createScope adopts nothing', async () => {
  const { server, ctx } = await root();
  const key = (): void => undefined;
  createScope(ctx, key);
  const before = ctx._children?.size;
  expect(() => createScope(ctx, key)).toThrow(TypeError);
  expect(ctx._children?.size).toBe(before);
  await server.dispose();
});
