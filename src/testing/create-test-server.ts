/**
 * createTestServer: a finished Server with fakes for globals and locals.
 */
import { Server, type LocalLifetime } from '../context/server.js';
import type { SystemContext } from '../context/system-context.js';
import type { Plugin } from '../context/plugin.js';
import { describeTokenCandidate, isToken, type Token } from '../context/token.js';
import { describeValue } from '../util/describe-value.js';
import type { CheckedFactoryPairs, CheckedPairs } from './checked-pairs.js';

/** A global for a test server: a value (its class is the token) or a `[token, value]` pair. */
export type TestGlobal = object | readonly [Token, unknown];

/**
 * A local for a test server: a token (its class is the factory) or a `[token, factory]`
 * pair; the factory receives the new context (`factory(ctx)`).
 */
export type TestLocal = Token | readonly [Token, (ctx: SystemContext) => unknown];

/**
 * Options of {@link createTestServer}. `G` and `L` are the types of the `globals` and
 * `locals` lists, inferred at the call so that each `[token, value]` pair is checked
 * against its token (`[COUNT, 'one']` with `COUNT = token<number>(...)` does not compile).
 */
export interface TestServerOptions<G extends readonly TestGlobal[] = readonly TestGlobal[], L extends readonly TestLocal[] = readonly TestLocal[]> {
  /**
   * Globals: `[token, value]` pairs (fakes: `[ToolLibrary, new FakeLibrary()]`), or values,
   * each stored under its own class (`value.constructor`: a bare `new FakeLibrary()` is
   * found as `FakeLibrary`, not as the `ToolLibrary` it extends).
   */
  readonly globals?: CheckedPairs<G>;
  /** Locals every root context gets: tokens or `[token, factory]` pairs. */
  readonly locals?: CheckedFactoryPairs<L>;
  /** Plugins to add before `finish()`. */
  readonly plugins?: readonly Plugin[];
}

/** @internal True for a `[token, x]` pair. */
export function isPair(v: unknown): v is readonly [Token, unknown] {
  return Array.isArray(v) && v.length === 2 && isToken(v[0]);
}

/**
 * @internal Applies `globals`, `locals` and `plugins` to a server that is still open; the
 * locals are registered with the lifetime `per` (`'root'` unless said otherwise).
 */
export function configure(server: Server, options: TestServerOptions, where: string, per: LocalLifetime = 'root'): void {
  for (const g of options.globals ?? []) {
    if (isPair(g)) server.insertGlobal(g[0], g[1]);
    else if (g !== null && typeof g === 'object' && !Array.isArray(g)) server.insertGlobal(g);
    else throw new TypeError(`${where}: a global must be a value (an object) or a [token, value] pair, got ${describeValue(g)}.`);
  }
  for (const l of options.locals ?? []) {
    if (isPair(l)) server.registerLocal(l[0], l[1] as (ctx: SystemContext) => unknown, { per });
    else if (isToken(l)) server.registerLocal(l, { per });
    else throw new TypeError(`${where}: a local must be a token or a [token, factory] pair, got ${describeTokenCandidate(l)}.`);
  }
  if (options.plugins !== undefined && options.plugins.length > 0) server.addPlugins(...options.plugins);
}

/**
 * Makes a server with the given globals, locals and plugins and awaits `finish()`.
 *
 * @example
 * ```ts
 * import { token } from 'polestar-di';
 * import { createTestServer } from 'polestar-di/testing';
 *
 * interface ModelClient {
 *   complete(prompt: string): Promise<string>;
 * }
 * const ModelClient = token<ModelClient>('ModelClient');
 * class AppConfig {
 *   constructor(readonly env: string) {}
 * }
 * class AgentMemory {
 *   readonly facts: string[] = [];
 * }
 *
 * const server = await createTestServer({
 *   globals: [[ModelClient, { complete: async () => 'hello' }], new AppConfig('test')],
 *   locals: [[AgentMemory, () => new AgentMemory()]],
 * });
 * const ctx = server.createContext(); // every root context gets its own AgentMemory
 * expect(await ctx.get(ModelClient).complete('hi')).toBe('hello');
 * expect(ctx.getMut(AgentMemory).facts).toEqual([]);
 * await server.dispose();
 * ```
 */
export async function createTestServer<const G extends readonly TestGlobal[] = readonly TestGlobal[], const L extends readonly TestLocal[] = readonly TestLocal[]>(
  options: TestServerOptions<G, L> = {},
): Promise<Server> {
  const server = new Server();
  try {
    configure(server, options, 'createTestServer(options)');
    await server.finish();
  } catch (err) {
    await server.dispose().catch(() => undefined);
    throw err;
  }
  return server;
}
