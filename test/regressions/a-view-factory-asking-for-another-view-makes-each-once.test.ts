/**
 * Found in review (this session): keeping a context's first view in a field let a view
 * factory that asks for another view (its own dependency) have that inner view
 * overwritten by the outer one, so the next `ctx.get(Inner)` made a second Inner view.
 * A view is made once per context that asks for it.
 * Fixed: after a factory ran, the view already cached for that token (if the factory made
 * it) is kept, and the field is taken only while it is free.
 */
import { Server, token } from '../../src/index.js';

test('a view factory asking for another view: each view is made once per context', async () => {
  const server = new Server();
  const Inner = token<{ n: number }>('Inner');
  const Outer = token<{ inner: { n: number } }>('Outer');
  const Third = token<{ k: number }>('Third');
  let made = 0;
  let thirds = 0;
  server.insertGlobalView(Inner, () => ({ n: ++made }));
  server.insertGlobalView(Outer, (ctx) => ({ inner: ctx.get(Inner) }));
  server.insertGlobalView(Third, () => ({ k: ++thirds }));
  await server.finish();
  const ctx = server.createContext();
  const outer = ctx.get(Outer);
  expect(ctx.get(Outer)).toBe(outer);
  expect(ctx.get(Inner)).toBe(outer.inner);
  expect(ctx.get(Third)).toBe(ctx.get(Third));
  expect([made, thirds]).toEqual([1, 1]);
  // another context gets its own
  const other = server.createContext();
  expect(other.get(Inner)).not.toBe(outer.inner);
  await server.dispose();
});
