/**
 * Found in review (this session): a tool body returning a Promise *subclass* had its
 * `then` called synchronously, and when that `then` threw, the call got its error result
 * but never counted as returned: it stayed in its call groups, so disposing the calling
 * context waited the whole `disposeTimeoutMs` and named a call that was over. A native
 * promise with a throwing own `then` leaked the same way before.
 * Fixed: only a plain native promise is awaited as it is; a subclass (or any thenable) is
 * adopted in a later job through its `then`, read once; a `then` that throws ends the body.
 */
import { Server, Tools, ToolsPlugin } from '../../src/index.js';
import { tool } from '../tools/helpers.js';

async function quickServer(): Promise<{ server: Server; app: ReturnType<Server['createContext']> }> {
  const server = new Server({ disposeTimeoutMs: 200 });
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  return { server, app: server.createContext() };
}

test('a Promise subclass whose then throws: EXECUTION_ERROR, and the call is over', async () => {
  const { server, app } = await quickServer();
  class BadThen<T> extends Promise<T> {
    override then(): never {
      throw new Error('bad then');
    }
  }
  app.get(Tools).register(tool('sub', () => new BadThen<string>(() => undefined)));
  const turn = app.child();
  const r = await turn.get(Tools).execute({ callId: '1', name: 'sub', arguments: {} });
  expect(r).toMatchObject({ isError: true, error: { code: 'EXECUTION_ERROR' } });
  expect(r.content).toMatch(/bad then/);
  await expect(turn.dispose()).resolves.toBeUndefined();
  await server.dispose();
});

test('a native promise with a throwing own then: EXECUTION_ERROR, and the call is over', async () => {
  const { server, app } = await quickServer();
  app.get(Tools).register(
    tool('own-then', () => {
      const p = Promise.resolve('x');
      Object.defineProperty(p, 'then', {
        value: () => {
          throw new Error('own then');
        },
      });
      return p;
    }),
  );
  const turn = app.child();
  const r = await turn.get(Tools).execute({ callId: '2', name: 'own-then', arguments: {} });
  expect(r.content).toMatch(/own then/);
  await expect(turn.dispose()).resolves.toBeUndefined();
  await server.dispose();
});

test("a Promise subclass is adopted in a later job: its then is not called during the body's return", async () => {
  const { server, app } = await quickServer();
  const log: string[] = [];
  class Sub<T> extends Promise<T> {
    override then<A = T, B = never>(a?: ((v: T) => A | PromiseLike<A>) | null, b?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
      log.push('then');
      return super.then(a, b);
    }
  }
  app.get(Tools).register(tool('sub2', () => Sub.resolve('ok')));
  const p = app.get(Tools).execute({ callId: '3', name: 'sub2', arguments: {} });
  log.push('returned');
  expect(await p).toMatchObject({ isError: false, content: 'ok' });
  expect(log[0]).toBe('returned');
  await server.dispose();
});
