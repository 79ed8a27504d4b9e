import { AgentsPlugin, Server, type Plugin } from '../../src/index.js';
import { assertNoLeaks, LeakError } from '../../src/testing/index.js';

/** A finished server with AgentsPlugin (plus any extra plugins). */
export async function agentServer(...plugins: Plugin[]): Promise<Server> {
  const server = new Server();
  server.addPlugins(new AgentsPlugin(), ...plugins);
  await server.finish();
  return server;
}

/** A promise with its resolve/reject exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending microtasks and one macrotask run. */
export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * What `assertNoLeaks` reports alive on `server` whose description ends with
 * `of scope <label>` (a scoped tool, restriction, guard, prompt section, listener...): how a
 * test sees that an agent's scoped registrations are in place, or undone, once its key is
 * no longer live and reading its tools by key is refused (SPEC 10.7).
 */
export function scopedLive(server: Server, label: string): string[] {
  try {
    assertNoLeaks(server);
    return [];
  } catch (err) {
    if (!(err instanceof LeakError)) throw err;
    return err.leaks.filter((l) => l.endsWith(` of scope ${label}`));
  }
}
