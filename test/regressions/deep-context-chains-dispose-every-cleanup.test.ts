/**
 * Issue 8 #10. Bug: disposal recursed once per level (marking the subtree, and each
 * context's disposal calling its children's), so a chain more than about 1,800 contexts
 * deep overflowed the stack and lost its deepest cleanups; at 50,000 deep, `dispose()`
 * threw synchronously.
 * Fixed: marking and disposal walk the tree with an explicit stack: every cleanup runs,
 * deepest first, at any depth.
 */
import { Server, token } from '../../src/index.js';

const DEPTH = 50_000;
const N = token<number>('N');

async function chain(): Promise<{ server: Server; contexts: ReturnType<Server['createContext']>[]; ran: number[] }> {
  const server = new Server();
  await server.finish();
  const ran: number[] = [];
  const contexts = [server.createContext()];
  for (let i = 1; i < DEPTH; i++) contexts.push(contexts[i - 1].child());
  contexts.forEach((c, i) => {
    c.onDispose(() => void ran.push(i));
  });
  return { server, contexts, ran };
}

test(`disposing the root of a ${DEPTH.toLocaleString('en')}-deep chain: no synchronous throw, every cleanup runs, deepest first`, async () => {
  const { server, contexts, ran } = await chain();
  const deepest = contexts[DEPTH - 1];
  const signal = deepest.signal;
  let p: Promise<void> | undefined;
  expect(() => (p = contexts[0].dispose())).not.toThrow();
  // the whole chain is marked (and the deepest signal aborted) synchronously
  expect(deepest.isDisposed).toBe(true);
  expect(signal.aborted).toBe(true);
  await p;
  expect(ran).toHaveLength(DEPTH);
  expect(ran[0]).toBe(DEPTH - 1);
  expect(ran[DEPTH - 1]).toBe(0);
  expect(ran.every((v, i) => v === DEPTH - 1 - i)).toBe(true);
  expect(server.liveContexts).toBe(0);
  await server.dispose();
}, 120_000);

test(`server.dispose() of a ${DEPTH.toLocaleString('en')}-deep chain with locals runs every cleanup and disposes every local`, async () => {
  const { server, contexts, ran } = await chain();
  let disposed = 0;
  for (let i = 0; i < DEPTH; i += 1000) {
    contexts[i].insert(N, i);
    contexts[i].insert(token<Disposable>(`d${i}`), { [Symbol.dispose]: () => void disposed++ });
  }
  await expect(server.dispose()).resolves.toBeUndefined();
  expect(ran).toHaveLength(DEPTH);
  expect(disposed).toBe(DEPTH / 1000);
}, 120_000);

test('disposing a middle context of a deep chain while the root disposes: both finish, each cleanup runs once', async () => {
  const { server, contexts, ran } = await chain();
  const mid = contexts[DEPTH / 2];
  const a = mid.dispose();
  const b = contexts[0].dispose();
  await Promise.all([a, b]);
  expect(ran).toHaveLength(DEPTH);
  expect(new Set(ran).size).toBe(DEPTH);
  await server.dispose();
}, 120_000);
