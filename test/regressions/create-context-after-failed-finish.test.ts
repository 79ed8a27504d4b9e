/**
 * Bug: when a plugin's ready() failed, finish() rejected but the server stayed in its
 * internal "ready" phase, so createContext() handed out contexts of a server whose
 * plugins were never all ready (and which can never be finished: a second finish()
 * rejects). After a failed build() it said "call finish() first", which can not help.
 * Fixed: after finish() rejects, createContext() throws a ServerError that says finish()
 * failed; dispose() still cleans up what the partial finish made.
 */
import { Server, ServerError } from '../../src/index.js';
import { assertNoLeaks } from '../../src/testing/index.js';

describe('createContext() after a failed finish()', () => {
  test('a failing ready(): refused, and a context made by an earlier ready() is still disposed by the server', async () => {
    const server = new Server();
    let early: ReturnType<Server['createContext']> | undefined;
    server.addPlugins(
      { id: 'a', build: () => undefined, ready: (s) => void (early = s.createContext()) },
      { id: 'b', dependencies: ['a'], build: () => undefined, ready: () => Promise.reject(new Error('model registry unreachable')) },
    );
    await expect(server.finish()).rejects.toThrow(/model registry unreachable/);
    expect(server.isFinished).toBe(false);
    expect(() => server.createContext()).toThrow(ServerError);
    expect(() => server.createContext()).toThrow(/finish\(\) failed/);
    await expect(server.finish()).rejects.toThrow(/already called/);
    await server.dispose();
    expect(early?.isDisposed).toBe(true);
    assertNoLeaks(server);
  });

  test('a failing build(): refused with the same message', async () => {
    const server = new Server();
    server.addPlugins({ id: 'a', build: () => { throw new Error('bad config'); } });
    await expect(server.finish()).rejects.toThrow(/bad config/);
    expect(() => server.createContext()).toThrow(/finish\(\) failed/);
    // Configuring it further can not help either: each call says so.
    class Extra {}
    expect(() => server.insertGlobal(new Extra())).toThrow(/finish\(\) failed/);
    expect(() => server.registerLocal(Extra)).toThrow(/finish\(\) failed/);
    expect(() => server.addPlugins({ id: 'late', build: () => undefined })).toThrow(/finish\(\) failed/);
    expect(server.hasGlobal(Extra)).toBe(false);
    await server.dispose();
  });

  test('dispose() during finish() still reports a disposed server', async () => {
    const server = new Server();
    let release!: () => void;
    server.addPlugins({ id: 'a', build: () => undefined, ready: () => new Promise<void>((r) => (release = r)) });
    const f = server.finish();
    await new Promise((r) => setImmediate(r));
    const d = server.dispose();
    release();
    await expect(f).rejects.toThrow(ServerError);
    await d;
    expect(() => server.createContext()).toThrow(/disposed server/);
  });
});
