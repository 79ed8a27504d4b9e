/**
 * Regression: `sessions.open` returned a session live in this process through any view, so a
 * per-request context could take a session whose agent another context owns: that request's
 * locals reached other requests' turns, and the owner's end aborted this request's turn. Now
 * only a view of the owning context, one of its ancestors, or a context inside the agent gets
 * it; any other view is refused with a TypeError naming both contexts.
 */
import { Sessions } from '../../src/index.js';
import { opened } from '../sessions/durable/helpers.js';

test('the owner view, an ancestor view and a view inside the agent get the live session; a per-request view is refused', async () => {
  const { server, ctx, durable } = await opened();
  const o = { agentId: durable.agent.id, sessionId: durable.id };
  expect(await ctx.get(Sessions).open(o)).toBe(durable); // the owning context
  const request = ctx.child();
  const err = await request
    .get(Sessions)
    .open(o)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(TypeError);
  expect((err as Error).message).toMatch(new RegExp(`Sessions\\.open\\(\\{ sessionId: "${durable.id}" \\}\\): the session is live in this process`));
  expect((err as Error).message).toMatch(/neither that context, one of its ancestors, nor inside the agent/);
  expect((err as Error).message).toMatch(/long-lived view/);
  expect((err as Error).message).toContain(request.describe());
  expect((err as Error).message).toContain(ctx.describe());
  expect((err as Error).message).toContain(request.describe());
  expect((err as Error).message).toContain(ctx.describe());
  await request.dispose();
  // inside the agent: a turn's own context
  const inside = await durable.turn((turnCtx) => turnCtx.get(Sessions).open(o));
  expect(inside).toBe(durable);
  expect(durable.isDisposed).toBe(false);
  // an ancestor of the owning context: a session opened through a child view is reachable from the root view
  const child = ctx.child();
  const mine = await child.get(Sessions).create({ agentId: 'owned-by-child', sessionId: `owned-by-child-${durable.id}` });
  expect(await ctx.get(Sessions).open({ agentId: 'owned-by-child', sessionId: mine.id })).toBe(mine);
  await child.dispose();
  expect(mine.isDisposed).toBe(true);
  await server.dispose();
});
