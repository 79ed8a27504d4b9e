/**
 * runSystem: runs one system on a fresh context of a fresh test server.
 */
import type { SystemContext } from '../context/system-context.js';
import { describeTokenCandidate, isToken, type Token } from '../context/token.js';
import { describeValue } from '../util/describe-value.js';
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
  /** Globals: `[token, value]` pairs, or values stored under their own class (as for `createTestServer`). */
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
  /**
   * Prepares the context before the run, after `locals` and `outputs` were placed in it:
   * insert more locals, register tools through `ctx.get(Tools)` (with `ToolsPlugin` in
   * `plugins`), open child contexts... Awaited; when it throws, the server is disposed and
   * `runSystem` rejects with its error.
   */
  readonly setup?: (ctx: SystemContext) => void | Promise<void>;
}

/** What {@link runSystem} resolves to. */
export interface RunSystemResult<O> {
  /** The system's output. */
  readonly output: O;
  /** The context it ran on (dispose `ctx.server` when done). */
  readonly ctx: SystemContext;
}

/**
 * Makes a finished test server, a root context with the given locals and outputs, awaits
 * `setup(ctx)`, runs the system on it and resolves to `{ output, ctx }`. When anything
 * fails (a bad entry, a local factory, `setup`, the run), the server is disposed and the
 * promise rejects with that error.
 *
 * A list entry that is an array but not a `[token, factory]` pair (say a pair whose
 * first entry is a symbol not made by `token()`) is refused with a `TypeError`, never
 * inserted as a value.
 *
 * @example
 * ```ts
 * import { ConversationHistory, Res, system } from 'polestar-di';
 * import { runSystem } from 'polestar-di/testing';
 *
 * class AppConfig {
 *   constructor(readonly agentName: string) {}
 * }
 * const summarize = system([Res(AppConfig), Res(ConversationHistory)], (config, history) =>
 *   `${config.agentName}: ${history.length} message(s)`);
 *
 * const { output, ctx } = await runSystem(summarize, {
 *   globals: [new AppConfig('support')],
 *   locals: [[ConversationHistory, () => new ConversationHistory([{ role: 'user', content: 'hi' }])]],
 *   setup: (ctx) => {
 *     ctx.getMut(ConversationHistory).append({ role: 'assistant', content: 'hello!' });
 *   },
 * });
 * expect(output).toBe('support: 2 message(s)');
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
    else if (Array.isArray(l)) throw new TypeError(`runSystem(system, options): ${badPair(l)}`);
    else if (l !== null && typeof l === 'object') values.push(l);
    else throw new TypeError(`runSystem(system, options): a local must be a token, a [token, factory] pair or a value, got ${describeTokenCandidate(l)}.`);
  }
  const setup: unknown = options.setup;
  if (setup !== undefined && typeof setup !== 'function') {
    throw new TypeError(`runSystem(system, { setup }): setup must be a function (ctx) => void | Promise<void>, got ${describeValue(setup)}.`);
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
    if (setup !== undefined) await (setup as (ctx: SystemContext) => unknown)(ctx);
    const output = await ctx.run(system);
    return { output, ctx };
  } catch (err) {
    await server.dispose().catch(() => undefined);
    throw err;
  }
}

/** Why an array in a locals list is not a `[token, factory]` pair. */
function badPair(l: readonly unknown[]): string {
  if (l.length !== 2) {
    return `a local that is an array must be a [token, factory] pair (two entries), got an array of ${l.length} entr${l.length === 1 ? 'y' : 'ies'}; an array is never inserted as a value.`;
  }
  return `the first entry of a [token, factory] pair must be a token (a class, or a symbol made by token<T>(name)), got ${describeTokenCandidate(l[0])}; an array is never inserted as a value.`;
}
