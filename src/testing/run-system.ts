/**
 * runSystem: runs one system on a fresh context of a fresh test server.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeValue, isToken, type Token } from '../context/token.js';
import type { AnySystem, SystemFn } from '../system/system.js';
import { createTestServer, isPair, type TestGlobal, type TestLocal } from './create-test-server.js';
import type { Plugin } from '../context/plugin.js';

/** Options of {@link runSystem}. */
export interface RunSystemOptions {
  /** Globals: values or `[token, value]` pairs. */
  readonly globals?: readonly TestGlobal[];
  /**
   * Locals of the context the system runs on: tokens or `[token, factory]` pairs (as
   * for `createTestServer`), or values (class instances) inserted as they are.
   */
  readonly locals?: readonly (TestLocal | object)[];
  /** Outputs placed in the context before the run: `[token, value]` pairs. */
  readonly outputs?: readonly (readonly [Token, unknown])[];
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
 *   locals: [[ConversationHistory, () => new ConversationHistory(['hi'])]],
 * });
 * await ctx.server.dispose();
 * ```
 */
export async function runSystem<R>(system: SystemFn<R> | AnySystem<R>, options: RunSystemOptions = {}): Promise<RunSystemResult<Awaited<R>>> {
  const tokens: TestLocal[] = [];
  const values: object[] = [];
  for (const l of options.locals ?? []) {
    if (isPair(l) || isToken(l)) tokens.push(l as TestLocal);
    else if (l !== null && typeof l === 'object' && !Array.isArray(l)) values.push(l);
    else throw new TypeError(`runSystem(system, options): a local must be a token, a [token, factory] pair or a value, got ${describeValue(l)}.`);
  }
  const server = await createTestServer({ globals: options.globals, locals: tokens, plugins: options.plugins });
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
