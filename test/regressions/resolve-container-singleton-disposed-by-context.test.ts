/**
 * Bug: `ctx.resolve(Llm)` of a class bound in `server.container` (a server-owned
 * singleton) did not record the value as server-owned, unlike `ctx.get(Llm)`. A turn that
 * then held it as a local (`turn.insert(llm)`) disposed the server's singleton when the
 * turn ended, so every later turn got a disposed client (and the server disposed it again).
 * Fixed: values `ctx.resolve` / `ctx.resolveAsync` take from `server.container` are
 * server-owned, like those `ctx.get` takes.
 */
import { jest } from '@jest/globals';
import { injectable } from 'inversify';
import { Server } from '../../src/index.js';

describe('a server.container singleton resolved through a context is never disposed by that context', () => {
  test.each(['resolve', 'resolveAsync'] as const)('ctx.%s, then held as a turn local', async (how) => {
    const disposed = jest.fn();
    @injectable()
    class Llm {
      [Symbol.dispose](): void {
        disposed();
      }
    }
    const server = new Server();
    server.container.bind(Llm).toSelf().inSingletonScope().onDeactivation(() => void disposed());
    await server.finish();
    const app = server.createContext();
    const turn = app.child();
    const llm = how === 'resolve' ? turn.resolve(Llm) : await turn.resolveAsync(Llm);
    expect(llm).toBe(server.container.get(Llm));
    turn.insert(llm);
    await turn.dispose();
    expect(disposed).not.toHaveBeenCalled();
    await server.dispose();
    // only inversify's deactivation, once
    expect(disposed).toHaveBeenCalledTimes(1);
  });

  test('a class built by the context itself and inserted there is still owned (and disposed) by it', async () => {
    const disposed = jest.fn();
    @injectable()
    class Scratch {
      [Symbol.dispose](): void {
        disposed();
      }
    }
    const server = new Server();
    await server.finish();
    const turn = server.createContext();
    turn.insert(turn.resolve(Scratch));
    await turn.dispose();
    expect(disposed).toHaveBeenCalledTimes(1);
    await server.dispose();
  });
});
