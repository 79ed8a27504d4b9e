/**
 * runSystem: runs one system on a fresh context of a fresh test server.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, isToken, type Token } from '../context/token.js';
import type { AnySystem, SystemFn } from '../system/system.js';
import { createTestServer, isPair, type TestGlobal, type TestLocal } from './create-test-server.js';
import type { Plugin } from '../context/plugin.js';
import type { CheckedFactoryPairs, CheckedPairs } from './checked-pairs.js';

/**
 * Options of {@link runSystem}. `G`, `L` and `O` are the types of the `globals`, `locals`
 * and `outputs` lists, inferred at the call so that each pair is checked against its token.
 */
export interface RunSystemOptions<
  G extends readonly TestGlobal[] = readonly TestGlobal[],
  L extends readonly (TestLocal | object)[] = readonly (TestLocal | object)[],
  O extends readonly (readonly [Token, unknown])[] = readonly (readonly [Token, unknown])[],
> {
  /** Globals: values or `[token, value]` pairs. */
  readonly globals?: CheckedPairs<G>;
  /**
   * Locals of the context the system runs on: tokens or `[token, factory]` pairs (as
   * for `createTestServer`), or values (class instances) inserted as they are.
   */
  readonly locals?: CheckedFactoryPairs<L>;
  /** Outputs placed in the context before the run: `[token, value]` pairs. */
  readonly outputs?: CheckedPairs<O>;
  /** Plugins to add to the test server. */
  readonly plugins?: readonly Plugin[];
}

/** What {@link runSystem} resolves to. */
export interface RunSystemResult<O> {
  /** The system's output. */
  readonly output: O;
  /** The context it ran on (dispose `ctx.server` when done). */
  readonly ctx: SystemContext;
}

/**
 * Makes a finished test server, a context with the given locals and outputs, runs the
 * system on it and resolves to `{ output, ctx }`. When the run fails, the server is
 * disposed and the run's error rejects.
 *
 * @example
 * ```ts
 * const { output, ctx } = await runSystem(summarize, {
 *   globals: [new AppConfig('test')],
 *   locals: [[ConversationHistory, () => new ConversationHistory([{ role: 'user', content: 'hi' }])]],
 * });
 * await ctx.server.dispose();
 * ```
 */
export async function runSystem<
  R,
  const G extends readonly TestGlobal[] = readonly TestGlobal[],
  const L extends readonly (TestLocal | object)[] = readonly (TestLocal | object)[],
  const O extends readonly (readonly [Token, unknown])[] = readonly (readonly [Token, unknown])[],
>(system: SystemFn<R> | AnySystem<R>, options: RunSystemOptions<G, L, O> = {}): Promise<RunSystemResult<Awaited<R>>> {
  const tokens: TestLocal[] = [];
  const values: object[] = [];
  for (const l of options.locals ?? []) {
    if (isPair(l) || isToken(l)) tokens.push(l as TestLocal);
    else if (l !== null && typeof l === 'object' && !Array.isArray(l)) values.push(l);
    else throw new TypeError(`runSystem(system, options): a local must be a token, a [token, factory] pair or a value, got ${describeValue(l)}.`);
  }
  const globals: readonly TestGlobal[] | undefined = options.globals;
  const server = await createTestServer({ globals, locals: tokens, plugins: options.plugins });
  try {
    const ctx = server.createContext();
    for (const v of values) ctx.insert(v);
    for (const pair of options.outputs ?? []) {
      if (!isPair(pair)) throw new TypeError(`runSystem(system, options): an output must be a [token, value] pair, got ${describeValue(pair)}.`);
      ctx.outputs.insert(pair[0], pair[1]);
    }
    const output = await ctx.run(system);
    return { output, ctx };
  } catch (err) {
    await server.dispose().catch(() => undefined);
    throw err;
  }
}
