/**
 * Sessions and turns: plain contexts below an agent, with a small helper for the common
 * pattern (a session keeps its `ConversationHistory`; each turn is a child context with a
 * fresh `Scratchpad`, disposed when the turn ends).
 */
import { SystemContext } from '../context/system-context.js';
import { ContextDisposedError } from '../context/errors.js';
import { describeValue, errorText } from '../context/token.js';
import { Agent } from '../agents/agent.js';
import { ConversationHistory } from './conversation-history.js';
import type { ownClass } from '../system/own-class.js';
import { trace, turnChannel, type Mutable, type TurnTraceContext } from '../observability/channels.js';
import { bodyWrapper } from '../observability/wrap.js';

/** Per-turn working memory. A local of the turn context, gone when the turn ends. */
export class Scratchpad {
  /** Free-form notes of the turn. */
  readonly notes: string[] = [];
}

/** Options of {@link openSession}. */
export interface SessionOptions {
  /** The history to start from (e.g. a restored one); a fresh empty one by default. */
  readonly history?: ConversationHistory;
}

/**
 * A session: a child context of an agent (`session.ctx`, holding the session's
 * {@link ConversationHistory} as a local) that runs turns. Made by {@link openSession}.
 *
 * Disposing the agent disposes its sessions; `session.dispose()` disposes one session
 * (and any turn still running in it).
 */
export class Session implements AsyncDisposable {
  /** Type-level brand of polestar's own classes: `Res<T>` hands this class over as itself (never present at run time). */
  declare readonly [ownClass]: true;
  /** The session context: a child of the agent's context. */
  readonly ctx: SystemContext;
  /** The session's history (also `session.ctx.get(ConversationHistory)`). */
  readonly history: ConversationHistory;
  #turns = 0;

  /** @internal Use {@link openSession}. */
  constructor(ctx: SystemContext, history: ConversationHistory) {
    this.ctx = ctx;
    this.history = history;
  }

  /** The agent this session belongs to (`Res(Agent)` from the session context), if any. */
  get agent(): Agent | undefined {
    return this.ctx.isDisposed ? undefined : this.ctx.tryGet(Agent);
  }

  /** Number of turns started so far. */
  get turnCount(): number {
    return this.#turns;
  }

  /** True once the session's context is disposed (or being disposed). */
  get isDisposed(): boolean {
    return this.ctx.isDisposed;
  }

  /**
   * Runs one turn: makes a child context of the session holding a fresh
   * {@link Scratchpad}, calls `fn(turnCtx, session)`, then disposes the turn context
   * (whether `fn` succeeded or not) and resolves to what `fn` returned. Systems run with
   * `turnCtx.run(...)` / `turnCtx.execute(...)` read the session's history and the
   * agent's resources through `Res`, and `ResMut(Scratchpad)` is the turn's own.
   *
   * Turns may overlap; each has its own context. A failure of `fn` rejects after the turn
   * was disposed; a failure of the turn's disposal rejects when `fn` succeeded.
   *
   * A turn of a session under an agent is one trace on the `polestar:turn` tracing channel
   * while it has subscribers (see `POLESTAR_CHANNELS`).
   */
  turn<R>(fn: (turnCtx: SystemContext, session: Session) => R | Promise<R>): Promise<Awaited<R>> {
    if (typeof fn !== 'function') return Promise.reject(new TypeError(`session.turn(fn): fn must be a function (turnCtx) => result, got ${describeValue(fn)}.`));
    if (turnChannel.hasSubscribers) {
      const agentId = Agent._nearest(this.ctx)?.id;
      if (agentId !== undefined) {
        const context: Mutable<TurnTraceContext> = { agentId, durable: false };
        return trace(turnChannel, context, this.ctx.server, () => this._turn(fn, context));
      }
    }
    return this._turn(fn, undefined);
  }

  /**
   * @internal The turn itself (a durable turn runs its own inside, untraced: `traced` is
   * the durable turn's `polestar:turn` context object, given to the body wrapper;
   * `onContext` is handed the turn context before `fn` runs, so the durable turn can abort
   * it with {@link abortTurnContext}).
   */
  async _turn<R>(
    fn: (turnCtx: SystemContext, session: Session) => R | Promise<R>,
    traced: object | undefined,
    onContext?: (turnCtx: SystemContext) => void,
  ): Promise<Awaited<R>> {
    const turnCtx = this.ctx.child();
    turnCtx.insert(new Scratchpad());
    this.#turns++;
    onContext?.(turnCtx);
    let result: Awaited<R>;
    try {
      // an instrumentation's wrapper (only while one is installed, for a traced turn)
      result = await (bodyWrapper !== undefined && traced !== undefined ? (bodyWrapper('turn', traced, () => fn(turnCtx, this)) as R | Promise<R>) : fn(turnCtx, this));
    } catch (err) {
      await turnCtx.dispose().catch(() => undefined);
      throw err;
    }
    await turnCtx.dispose();
    return result;
  }

  /** Disposes the session context (memoized, like every context). */
  dispose(): Promise<void> {
    return this.ctx.dispose();
  }

  /** Same as {@link Session.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/**
 * @internal Aborts a turn: starts the disposal of `turnCtx`, whose `signal` aborts with a
 * `ContextDisposedError` whose `cause` is `cause` (every tool execution and system run
 * tracked in it is aborted and awaited by the disposal, as for any disposed context).
 * Does nothing to a context whose disposal already started.
 */
export function abortTurnContext(turnCtx: SystemContext, cause: unknown): void {
  if (turnCtx._disposalStarted()) return;
  const reason = new ContextDisposedError(
    'signal',
    turnCtx.describe(),
    `the turn was aborted (${errorText(cause)}): work running in its ${turnCtx.describe()} or below it was aborted.`,
  );
  Object.defineProperty(reason, 'cause', { value: cause, writable: true, configurable: true, enumerable: false });
  // Aborted before the disposal's own abort pass, which then finds the signal aborted
  // already: the turn context's signal carries this reason, not the generic one.
  const x = turnCtx._x();
  (x.ac ??= new AbortController()).abort(reason);
  void turnCtx.dispose().catch(() => undefined);
}

/**
 * Opens a session under an agent (or under any context): `session.ctx` is a child of
 * `agent.ctx` holding a {@link ConversationHistory} local, so it is disposed with the
 * agent and its turns see the agent's scope (tools, prompts, listeners). The session
 * context also gets its own instance of every local registered with
 * `server.registerLocal(token, factory, { per: 'session' })`, made after the history (a
 * factory may read it) and disposed with the session.
 *
 * @throws TypeError for an owner that is neither an `Agent` nor a `SystemContext`, or a
 *   `history` that is not a `ConversationHistory`; `ServerError` when a `per: 'session'`
 *   factory fails (nothing is left behind); `ContextDisposedError` for a disposed owner.
 *
 * @example
 * ```ts
 * import { Scratchpad, openSession } from 'polestar-di';
 * import { createTestAgent } from 'polestar-di/testing';
 *
 * const { agent, server } = await createTestAgent({ id: 'support' });
 * const session = openSession(agent);
 * await session.turn(async (turnCtx) => {
 *   session.history.append({ role: 'user', content: 'hello' });
 *   turnCtx.getMut(Scratchpad).notes.push('greeted');
 * });
 * expect(session.history.length).toBe(1); // the turn (and its Scratchpad) is gone, the history stays
 * await server.dispose();
 * ```
 */
export function openSession(owner: Agent | SystemContext, options?: SessionOptions): Session {
  const parent = Agent._is(owner) ? owner.ctx : isContext(owner) ? owner : undefined;
  if (parent === undefined) {
    throw new TypeError(`openSession(owner): owner must be an Agent or a SystemContext, got ${describeValue(owner)}.`);
  }
  let given: unknown;
  try {
    given = options?.history;
  } catch (err) {
    throw new TypeError(`openSession(owner, options): reading options.history threw: ${errorText(err)}.`, { cause: err });
  }
  const history = given ?? new ConversationHistory();
  if (!isHistory(history)) {
    throw new TypeError(`openSession(owner, { history }): history must be a ConversationHistory, got ${describeValue(history)}.`);
  }
  const ctx = parent.child();
  ctx.insert(ConversationHistory, history);
  try {
    ctx.server._makeLocals(ctx, 'session');
  } catch (err) {
    void ctx.dispose().catch(() => undefined);
    throw err;
  }
  return new Session(ctx, history);
}

/** `instanceof SystemContext`, false (not a throw) for a proxy whose traps throw. */
function isContext(value: unknown): value is SystemContext {
  try {
    return value instanceof SystemContext;
  } catch {
    return false;
  }
}

/** `instanceof ConversationHistory`, false (not a throw) for a proxy whose traps throw. */
function isHistory(value: unknown): value is ConversationHistory {
  try {
    return value instanceof ConversationHistory;
  } catch {
    return false;
  }
}
