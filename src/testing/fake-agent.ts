/**
 * fakeAgent: a real, detached `Agent` for tests that need one without a server.
 */
import { Agent } from '../agents/agent.js';
import { Server } from '../context/server.js';
import { SystemContext } from '../context/system-context.js';
import { describeValue } from '../util/describe-value.js';

/** Options of {@link fakeAgent}. */
export interface FakeAgentOptions {
  /** The agent's id: a non-empty string (fakes are in no registry, so ids need not be unique). */
  readonly id: string;
  /** Makes the fake a subagent: `agent.parent === parent` and `agent.ctx` is a child of `parent.ctx`. */
  readonly parent?: Agent;
}

/**
 * Makes an `Agent` for tests that need one without a server: a genuine `Agent` (so
 * `instanceof Agent`, `Res(Agent)`, `openSession(agent)` and `scopeOf(agent.ctx) === agent`
 * all work), published from the start and held by no registry, so no `agent/created` or
 * `agent/disposed` is ever emitted for it.
 *
 * Its `ctx` is a registration scope on a private, empty server (of a `parent`, under
 * `parent.ctx`): locals inserted into it, and contexts made below it, work as usual;
 * there are no globals or plugins behind it (`ctx.get(Tools)` is `ResourceNotFound`).
 * For an agent with tools, prompts and globals, use {@link createTestAgent}.
 * `await agent.ctx.dispose()` disposes it (its state becomes `'disposed'`).
 *
 * @example
 * ```ts
 * import { Agent, Res, system } from 'polestar-di';
 * import { fakeAgent, runSystem } from 'polestar-di/testing';
 *
 * const whoAmI = system([Res(Agent)], (agent) => `I am ${agent.id}`);
 *
 * const { output, ctx } = await runSystem(whoAmI, { locals: [fakeAgent({ id: 'billing' })] });
 * expect(output).toBe('I am billing');
 * await ctx.server.dispose();
 * ```
 * @throws TypeError for an id that is not a non-empty string or a parent that is not an `Agent`.
 */
export function fakeAgent(options: FakeAgentOptions): Agent {
  let id: unknown;
  let parent: unknown;
  try {
    id = options.id;
    parent = options.parent;
  } catch (err) {
    throw new TypeError(`fakeAgent(options): options must be an object { id, parent? }, got ${describeValue(options)}.`, { cause: err });
  }
  if (typeof id !== 'string' || id.length === 0) {
    throw new TypeError(`fakeAgent({ id }): id must be a non-empty string, got ${describeValue(id)}.`);
  }
  if (parent !== undefined && !Agent._is(parent)) {
    throw new TypeError(`fakeAgent({ id: "${id}", parent }): parent must be an Agent (another fakeAgent, or handle.agent), got ${describeValue(parent)}.`);
  }
  const owner = parent === undefined ? new SystemContext(new Server(), undefined, undefined) : parent.ctx;
  return new Agent(undefined, id, parent, owner);
}
