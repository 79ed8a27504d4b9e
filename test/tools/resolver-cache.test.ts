/**
 * The resolver's cache is per scope (issue 9: a registration in one agent must not
 * rebuild every other agent's view) and still follows every change that concerns the
 * scope: its own layer (also one emptied and made again), the global layer, and its
 * restrictions.
 */
import { Tools, createScope } from '../../src/index.js';
import { tool, toolServer } from './helpers.js';

test("a scope's resolution follows its own layer, the global layer and its restrictions, not other scopes", async () => {
  const { server, app } = await toolServer();
  const t = app.get(Tools);
  const A = createScope(app, { id: 'A' });
  const B = createScope(app, { id: 'B' });
  const names = (key: object) => t.visible(key).map((x) => x.name);
  const offG = t.register(tool('g'));
  const offX = A.ctx.get(Tools).register(tool('x'));
  const seenA = t.visible(A.key);
  expect(names(A.key)).toEqual(['g', 'x']);
  // another scope's churn leaves A's resolution as it was (the same cached array)
  const offB = B.ctx.get(Tools).register(tool('b'));
  offB();
  expect(t.visible(A.key)).toBe(seenA);
  // A's layer emptied (deleted) and made again with another tool
  offX();
  expect(names(A.key)).toEqual(['g']);
  A.ctx.get(Tools).register(tool('y'));
  expect(names(A.key)).toEqual(['g', 'y']);
  // the global layer
  t.register(tool('h'));
  expect(names(A.key)).toEqual(['g', 'h', 'y']);
  // restrictions, added and removed
  const offR = A.ctx.get(Tools).restrict({ deny: ['h'] });
  expect(names(A.key)).toEqual(['g', 'y']);
  offR();
  expect(names(A.key)).toEqual(['g', 'h', 'y']);
  offG();
  expect(names(A.key)).toEqual(['h', 'y']);
  expect(names(B.key)).toEqual(['h']);
  await server.dispose();
});
