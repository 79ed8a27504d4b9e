/**
 * The memoized promise of `ctx.dispose()` when the disposal runs synchronously to its end
 * (every cleanup and local disposal synchronous): the same promise on every call, settled
 * with the collected errors; a descendant's errors reach its ancestor's promise; order is
 * kept when a step in the middle is async. (That a descendant's failure is never an
 * unhandled rejection is checked in a child process, where `unhandledRejection` is
 * observable: test/regressions/descendant-disposed-under-a-disposing-ancestor.test.ts.)
 */
import { Server } from '../../src/index.js';

async function app(): Promise<{ server: Server; ctx: ReturnType<Server['createContext']> }> {
  const server = new Server();
  await server.finish();
  return { server, ctx: server.createContext() };
}

test('a synchronous disposal: every call returns the same promise, before and after it settled', async () => {
  const { server, ctx } = await app();
  let ran = 0;
  ctx.onDispose(() => void ran++);
  const first = ctx.dispose();
  expect(ctx.dispose()).toBe(first);
  await first;
  expect(ctx.dispose()).toBe(first);
  expect(ran).toBe(1);
  await server.dispose();
});

test('a synchronous cleanup that throws: the one promise rejects naming it, every call gets it', async () => {
  const { server, ctx } = await app();
  ctx.onDispose(() => {
    throw new Error('socket refused to close');
  });
  const first = ctx.dispose();
  expect(ctx.dispose()).toBe(first);
  await expect(first).rejects.toThrow(/socket refused to close/);
  expect(ctx.dispose()).toBe(first);
  await server.dispose();
});

test("a descendant's failure reaches its ancestor's promise, asked for or not", async () => {
  const { server, ctx } = await app();
  const asked = ctx.child();
  const unasked = ctx.child();
  let askedPromise: Promise<void> | undefined;
  asked.onDispose(() => {
    throw new Error('asked failed');
  });
  // asked for (and ignored) while the ancestor's drive disposes it
  asked.child().onDispose(() => void (askedPromise = asked.dispose()));
  unasked.onDispose(() => {
    throw new Error('unasked failed');
  });
  const outer = ctx.dispose();
  await expect(outer).rejects.toThrow(/asked failed/);
  await expect(outer).rejects.toThrow(/unasked failed/);
  // each descendant's own memoized promise carries its own failure
  expect(asked.dispose()).toBe(askedPromise);
  await expect(askedPromise).rejects.toThrow(/asked failed/);
  await expect(unasked.dispose()).rejects.toThrow(/unasked failed/);
  expect(unasked.dispose()).toBe(unasked.dispose());
  await server.dispose();
});

test('an async step in the middle keeps the order: descendants first, then cleanups last registered first, then locals', async () => {
  const { server, ctx } = await app();
  const order: string[] = [];
  const child = ctx.child();
  child.onDispose(async () => {
    await new Promise((r) => setTimeout(r, 5));
    order.push('child (async)');
  });
  class Local {
    [Symbol.dispose](): void {
      order.push('local');
    }
  }
  ctx.insert(new Local());
  ctx.onDispose(() => void order.push('first registered'));
  ctx.onDispose(async () => {
    await new Promise((r) => setTimeout(r, 5));
    order.push('second (async)');
  });
  ctx.onDispose(() => void order.push('last registered'));
  const p = ctx.dispose();
  expect(ctx.dispose()).toBe(p);
  await p;
  expect(order).toEqual(['child (async)', 'last registered', 'second (async)', 'first registered', 'local']);
  expect(ctx.dispose()).toBe(p);
  await server.dispose();
});
