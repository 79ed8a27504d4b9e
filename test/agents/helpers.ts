import { AgentsPlugin, Server, type Plugin } from '../../src/index.js';

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
