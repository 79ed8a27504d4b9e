/**
 * The agent create transaction: reserve the id, mint the scope, run the
 * unpublished steps, publish the agent with everything composed with it, announce it, and
 * roll everything back on any failure. `Agents.create` is this transaction with no extra
 * steps; durable sessions call it with their own unpublished steps.
 */
import { ContextDisposedError } from '../context/errors.js';
import { ParentFilter } from '../context/parent-filter.js';
import type { SystemContext } from '../context/system-context.js';
import { describeValue, errorText } from '../context/token.js';
import { readField } from '../util/read-field.js';
import { Agent, AgentHandle } from './agent.js';
import type { AgentSetup, CreateAgentOptions } from './create-agent-options.js';
import { Composition } from './composition.js';
import { AgentError } from './errors.js';
import type { AgentKind } from './kind.js';
import { resolveKind } from './kinds.js';
import type { AgentRegistry } from './registry.js';
import { agentChannel, trace, type AgentTraceContext, type Mutable } from '../observability/channels.js';

/**
 * @internal An extra unpublished step of the create transaction. `signal` aborts (with a
 * `ContextDisposedError`) the moment the agent's teardown starts (its owner, its parent
 * or its own context disposed); the transaction stops waiting for the step at that moment.
 */
export type AgentStep = (agentCtx: SystemContext, signal: AbortSignal, agent: Agent) => void | Promise<void>;

/**
 * @internal The extra steps a caller of {@link createAgent} may add. Both
 * run while the agent is unpublished, raced against its teardown, with the same rollback
 * as `setup`. A step's own error is rethrown as it is (after the rollback; when the
 * rollback also failed, an {@link AgentError} carrying both is rejected instead), so a
 * caller can reject with its own typed error.
 */
export interface CreateAgentSteps {
  /** How validation messages name the call; `'Agents.create'` by default. */
  readonly call?: string;
  /** Runs after the agent's context (and its per-agent locals) exist, before `setup`. */
  readonly beforeSetup?: AgentStep;
  /** Runs after `setup`, still unpublished (e.g. restoring persisted locals). */
  readonly prepare?: AgentStep;
  /**
   * `false` when the steps never read their `signal` (they are synchronous): they get a
   * signal that never aborts, and no `AbortController` is made for the agent.
   */
  readonly signal?: false;
}

/**
 * @internal What the create transaction uses of an `Agents` view: the context it is bound
 * to (the owner of the agents it creates) and the server's agent registry.
 */
export interface AgentsView {
  readonly context: SystemContext;
  /** @internal */
  readonly _registry: AgentRegistry;
}

interface Snapshot {
  readonly id: string;
  /** The kind the agent is made from, if any (its setup and parent filter are already in `setup` and `parentFilter`). */
  readonly kind: AgentKind | undefined;
  readonly setup: AgentSetup | undefined;
  readonly parent: Agent | undefined;
  readonly parentFilter: ParentFilter | undefined;
}


/**
 * @internal The create transaction behind `Agents.create`, for callers
 * that add unpublished steps (`steps.beforeSetup`, `steps.prepare`). The options are read
 * once and validated, the id is reserved and the agent's scope made before the first
 * await (so a concurrent create of the same id is refused at once); every failure
 * rejects, never throws.
 *
 * Order: reserve → scope (with `parentFilter`) → the `per: 'agent'` locals →
 * `beforeSetup` → `setup` → `prepare` → (for a root) wait for the agents composed with it
 * → publish it and then each composed agent (registry, then `agent/created`). An agent created while another agent is composing joins that agent's
 * group: its create resolves after its own steps with `state === 'composing'`, and the
 * group's root publishes it.
 */
export function createAgent(view: AgentsView, options: CreateAgentOptions, steps: CreateAgentSteps = {}): Promise<AgentHandle> {
  const call = steps.call ?? 'Agents.create';
  let snap: Snapshot;
  try {
    snap = snapshot(options, call, view._registry);
  } catch (err) {
    return Promise.reject(err);
  }
  if (agentChannel.hasSubscribers) {
    const context: Mutable<AgentTraceContext> = { op: 'create', agentId: snap.id };
    if (snap.kind !== undefined) context.kind = snap.kind.name;
    return trace(agentChannel, context, view.context.server, () => create(view, snap, steps, call));
  }
  return create(view, snap, steps, call);
}

/** The transaction of {@link createAgent} once the options were read. */
async function create(view: AgentsView, { id, kind, setup, parent, parentFilter }: Snapshot, steps: CreateAgentSteps, call: string): Promise<AgentHandle> {
  const viewCtx = view.context;
  if (parent !== undefined) {
    if (parent.ctx.server !== viewCtx.server) {
      throw new AgentError(id, `${call}({ id: "${id}", parent }): parent agent "${parent.id}" belongs to another server.`);
    }
    if (parent.isDisposed) {
      throw new AgentError(id, `${call}({ id: "${id}", parent }): parent agent "${parent.id}" is disposed; a subagent needs a live parent.`);
    }
  }
  if (viewCtx.isDisposed) viewCtx._live(`${call}({ id: "${id}" })`);
  const registry: AgentRegistry = view._registry;
  const holder = registry.liveHolder(id);
  if (holder !== undefined) {
    const where = holder.state === 'composing' ? 'an agent with that id is still running its setup' : 'a live agent has that id';
    throw new AgentError(id, `agent "${id}" is already registered (${where}); dispose it first or choose another id.`);
  }

  // ---- reserve, mint the scope, join a composing agent's group (no await so far)
  const owner = parent === undefined ? viewCtx : parent.ctx;
  // the agent an agent created through the view would be owned by
  const anchor = parent ?? Agent._nearest(viewCtx);
  // A composing anchor is a group's root (its group is made when the first member joins)
  // or a member (which always holds its root's group).
  const group = anchor !== undefined && anchor.state === 'composing' ? (anchor._composition ??= new Composition(anchor)) : undefined;
  const agent = new Agent(registry, id, parent, owner, parentFilter, kind?.name);
  registry.reserve(agent);
  agent._composition = group;
  const settleMember = group?.join(agent);

  // The teardown as a promise is made only when something waits for it (an async step, a
  // composition); a synchronous setup only checks the flag.
  const teardown = new Teardown();
  // The steps' signal: aborted by a teardown that starts while they run. Dropped once they
  // are over, so the agent's end, maybe much later, does not build an error nobody reads.
  let controller = steps.signal !== false && (steps.beforeSetup !== undefined || steps.prepare !== undefined) ? new AbortController() : undefined;
  agent._onAbort(() => {
    teardown.started = true;
    teardown.resolve?.('aborted');
    controller?.abort(new ContextDisposedError(`${call}({ id: "${id}" })`, `${agent.ctx.describe()}`));
  });
  const aborted = (): Promise<'aborted'> =>
    (teardown.promise ??= teardown.started ? Promise.resolve('aborted') : new Promise<'aborted'>((resolve) => (teardown.resolve = resolve)));

  // ---- the agent's own per-agent locals, before any step
  try {
    viewCtx.server._makeLocals(agent.ctx, 'agent');
  } catch (err) {
    settleMember?.(false);
    throw await rollback(
      agent,
      new AgentError(id, `${agent}: making its per-agent locals failed: ${errorText(err)}; nothing was published and the id is free again.`, {
        cause: err,
      }),
    );
  }

  // ---- the unpublished steps, each raced against the agent's teardown
  const signal = controller === undefined ? NEVER_ABORTED : controller.signal;
  const { beforeSetup, prepare } = steps;
  for (let step = 0; step < 3; step++) {
    // 0: beforeSetup, 1: setup, 2: prepare (a caller's own steps are 0 and 2)
    const own = step !== 1;
    if (own && (step === 0 ? beforeSetup : prepare) === undefined) continue;
    let outcome: 'done' | 'aborted';
    try {
      const ctx = agent.ctx;
      const returned = step === 1 ? setup?.(ctx) : (step === 0 ? (beforeSetup as AgentStep) : (prepare as AgentStep))(ctx, signal, agent);
      if (returned === null || (typeof returned !== 'object' && typeof returned !== 'function')) {
        // nothing to wait for (a synchronous step, or none): awaited once, so a disposal
        // started in the same turn still wins
        await undefined;
        outcome = teardown.started ? 'aborted' : 'done';
      } else outcome = await race(returned, aborted);
    } catch (err) {
      settleMember?.(false);
      if (own) throw await rollbackKeeping(agent, err);
      throw await rollback(
        agent,
        new AgentError(id, `${agent}: setup failed: ${errorText(err)}; everything it registered was undone and the id is free again.`, {
          cause: err,
        }),
      );
    }
    if (outcome === 'aborted' || agent.isDisposed) {
      settleMember?.(false);
      throw await rollback(agent, disposedMeanwhile(agent, parent, own ? 'it was being prepared' : 'its setup was running'));
    }
  }
  controller = undefined;

  // ---- a member of a group: the group's root publishes it
  if (settleMember !== undefined) {
    settleMember(true);
    return new AgentHandle(agent);
  }

  // ---- the root: wait for the members still running their setup, then publish the group
  const composition = agent._composition;
  if (composition === undefined) {
    const announcing = announce(agent, agent, registry, parent);
    if (announcing !== undefined) await announcing;
    return new AgentHandle(agent);
  }
  for (let i = 0; i < composition.size; i++) {
    if ((await Promise.race([composition.member(i).ready, aborted()])) === 'aborted' || agent.isDisposed) {
      throw await rollback(agent, disposedMeanwhile(agent, parent, 'the agents composed with it were running their setup'));
    }
  }
  await announce(agent, agent, registry, parent);
  for (let i = 0; i < composition.size; i++) {
    const { agent: member, ready } = composition.member(i);
    const settled = await Promise.race([ready, aborted()]);
    if (settled === 'aborted' || agent.isDisposed) {
      throw await rollback(agent, disposedMeanwhile(agent, parent, `the agent "${member.id}" composed with it was running its setup`));
    }
    if (!settled || member.isDisposed) continue;
    await announce(agent, member, registry, parent);
  }
  for (let i = 0; i < composition.size; i++) composition.member(i).agent._composition = undefined;
  agent._composition = undefined;
  return new AgentHandle(agent);
}

/** The signal of steps that never read it (`steps.signal === false`): never aborted. */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** Whether (and, once something waits, a promise of when) an agent's teardown started. A class: see `Entry` in scope/layers.ts (it lives as long as its agent). */
class Teardown {
  started = false;
  resolve: ((v: 'aborted') => void) | undefined = undefined;
  promise: Promise<'aborted'> | undefined = undefined;
}

/** Races what a step returned (an object: a promise, maybe) against the agent's teardown. */
function race(returned: object, aborted: () => Promise<'aborted'>): Promise<'done' | 'aborted'> {
  const p = Promise.resolve(returned).then(() => 'done' as const); // reads a thenable's `then` once
  p.catch(() => undefined);
  return Promise.race([p, aborted()]);
}

function disposedMeanwhile(agent: Agent, parent: Agent | undefined, phase: string): AgentError {
  return new AgentError(
    agent.id,
    `${agent} was disposed while ${phase} (${ownerWord(parent)}, or the agent's context, was disposed); nothing was published.`,
  );
}

/**
 * Publishes `agent` (the root or a member of root's group), then emits `agent/created`;
 * rolls the root back on failure. Without a listener nothing is awaited: it returns
 * `undefined` (and the create resolves a tick sooner).
 */
function announce(root: Agent, agent: Agent, registry: AgentRegistry, parent: Agent | undefined): Promise<void> | undefined {
  registry.publish(agent);
  if (registry.bus.hasListeners('agent/created', agent)) return announced(root, agent, registry, parent);
  if (root.isDisposed) return disposedWhileAnnouncing(root, agent, parent);
  return undefined;
}

async function announced(root: Agent, agent: Agent, registry: AgentRegistry, parent: Agent | undefined): Promise<void> {
  const errors = await registry.bus.emit(agent, 'agent/created', [agent]);
  if (errors.length > 0) {
    const id = root.id;
    const cause = errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} agent/created listeners failed`);
    const undone = root._composition === undefined ? 'the agent was disposed again' : 'the agent and every agent composed with it were disposed again';
    throw await rollback(root, new AgentError(id, `${root}: an agent/created listener failed${whoseWords(root, agent)}: ${errorText(cause)}; ${undone}.`, { cause }));
  }
  if (root.isDisposed) await disposedWhileAnnouncing(root, agent, parent);
}

async function disposedWhileAnnouncing(root: Agent, agent: Agent, parent: Agent | undefined): Promise<void> {
  throw await rollback(
    root,
    new AgentError(
      root.id,
      `${root} was disposed while agent/created was being emitted${whoseWords(root, agent)} (${ownerWord(parent)}, or the agent's context, was disposed).`,
    ),
  );
}

function whoseWords(root: Agent, agent: Agent): string {
  return agent === root ? '' : ` for the agent "${agent.id}" composed with it`;
}

/** Reads each option once, validates it, and never lets a hostile value break the report. */
function snapshot(options: unknown, call: string, registry: AgentRegistry): Snapshot {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}(options): options must be an object { id, kind? | setup?, parent?, parentFilter? }, got ${describeValue(options)}.`);
  }
  const id = read(options, 'id', call);
  if (typeof id !== 'string' || id.length === 0) {
    throw new TypeError(`${call}({ id }): id must be a non-empty string, got ${describeValue(id)}.`);
  }
  const kindOption = read(options, 'kind', call);
  const setupOption = read(options, 'setup', call);
  if (setupOption !== undefined && typeof setupOption !== 'function') {
    throw new TypeError(`${call}({ id: "${id}", setup }): setup must be a function (agentCtx) => void | Promise<void>, got ${describeValue(setupOption)}.`);
  }
  let kind: AgentKind | undefined;
  let setup = setupOption as AgentSetup | undefined;
  if (kindOption !== undefined) {
    if (setupOption !== undefined) {
      throw new TypeError(`${call}({ id: "${id}", kind, setup }): give either kind or setup, not both (an agent made from a kind is composed by the kind's setup).`);
    }
    kind = resolveKind(registry, kindOption, `${call}({ id: "${id}", kind })`);
    setup = kind.setup;
  }
  const parent = read(options, 'parent', call);
  if (parent !== undefined && !Agent._is(parent)) {
    throw new TypeError(`${call}({ id: "${id}", parent }): parent must be an Agent (handle.agent or agents.get(id)), got ${describeValue(parent)}.`);
  }
  const parentFilter = read(options, 'parentFilter', call);
  if (parentFilter !== undefined && !isParentFilter(parentFilter)) {
    throw new TypeError(
      `${call}({ id: "${id}", parentFilter }): parentFilter must be made by ParentFilter.allowOnly([...]) or ParentFilter.allowAllExcept([...]), got ${describeValue(parentFilter)}.`,
    );
  }
  return {
    id,
    kind,
    setup,
    parent: parent as Agent | undefined,
    parentFilter: (parentFilter as ParentFilter | undefined) ?? kind?.parentFilter,
  };
}

/** `instanceof ParentFilter`, false (not a throw) for a proxy whose traps throw. */
function isParentFilter(value: unknown): boolean {
  try {
    return value instanceof ParentFilter;
  } catch {
    return false;
  }
}

/** Reads `options[field]` once; a throwing getter or trap becomes a TypeError naming the call and the field. */
function read(options: object, field: string, call: string): unknown {
  return readField(options, field, `${call}(options)`, 'options');
}

/** Disposes the half-made agent (and so everything composed with it) and returns the error to reject with. */
async function rollback(agent: Agent, failure: AgentError): Promise<AgentError> {
  try {
    await agent._dispose();
    return failure;
  } catch (rollbackError) {
    return new AgentError(failure.agentId, `${failure.message} Rolling back also failed: ${errorText(rollbackError)}`, {
      cause: failure.cause,
      rollbackError,
    });
  }
}

/** Like {@link rollback} for a step's own error, which is returned as it is unless the rollback failed. */
async function rollbackKeeping(agent: Agent, error: unknown): Promise<unknown> {
  try {
    await agent._dispose();
    return error;
  } catch (rollbackError) {
    return new AgentError(agent.id, `agent "${agent.id}": a create step failed: ${errorText(error)}; rolling back also failed: ${errorText(rollbackError)}`, {
      cause: error,
      rollbackError,
    });
  }
}

function ownerWord(parent: Agent | undefined): string {
  return parent === undefined ? 'its owner context' : `its parent agent "${parent.id}"`;
}
