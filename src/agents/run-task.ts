/**
 * `agents.runTask`: a one-task subagent. It is made by the create transaction, handed to
 * the task's function, and disposed when that function settles; when its owner (the
 * parent agent, or the view's context) is disposed first, the task rejects with the
 * owner's `ContextDisposedError` at once. With `output`, the subagent records a
 * structured result through a capture tool of its own scope (see `structured/`).
 */
import { randomUUID } from 'node:crypto';
import { ContextDisposedError } from '../context/errors.js';
import type { ParentFilter } from '../context/parent-filter.js';
import type { SystemContext } from '../context/system-context.js';
import { describeValue } from '../context/token.js';
import { groupSlot } from '../lifetime/groups.js';
import type { InFlight } from '../lifetime/work.js';
import { readField } from '../util/read-field.js';
import { Agent } from './agent.js';
import { createAgent, type AgentsView, type CreateAgentSteps } from './create-agent.js';
import type { AgentSetup, CreateAgentOptions } from './create-agent-options.js';
import { AgentError } from './errors.js';
import { AgentKind } from './kind.js';
import { installCapture } from './structured/capture-tool.js';
import { readOutput, releaseOutput, type OutputPlan, type TaskOutput } from './structured/options.js';
import { CaptureStage } from './structured/stage.js';
import { settledReason, stoppedReason } from './structured/stop.js';
import { StopLatch } from './structured/stop-latch.js';
import { StructuredTask } from './structured/task.js';

const CALL = 'Agents.runTask';

/** The create steps of a task without `output`. */
const PLAIN_STEPS: CreateAgentSteps = Object.freeze({ call: CALL });

/** The work of a task: given the task's subagent, returns the task's result (or a promise of it). */
export type TaskFn<R> = (agent: Agent) => R | Promise<R>;

/**
 * The work of a task run with `output`: given the task's subagent and the {@link StructuredTask}
 * (whether it recorded its result, the value, the stop signal), drives the model loop and
 * returns what it likes (the task's `result`).
 */
export type StructuredTaskFn<V, R> = (agent: Agent, task: StructuredTask<V>) => R | Promise<R>;

/** What a task run with `output` resolves to: the recorded value and what `fn` returned. */
export interface StructuredTaskResult<V, R> {
  /** The structured result the subagent recorded (deep-frozen, as its schema validated it). */
  readonly value: V;
  /** What `fn` returned (or resolved to). */
  readonly result: R;
}

/** What {@link Agents.runTask} takes. */
export interface RunTaskOptions<R> {
  /**
   * The work, given the task's subagent (its `ctx` is the agent's scoped context). The
   * subagent is disposed when it settles. Required.
   */
  readonly fn: TaskFn<R>;
  /**
   * The agent the task's subagent belongs to. Default: the agent of the view's context, as
   * for `agents.create` (the subagent is then owned by the view's context).
   */
  readonly parent?: Agent;
  /** The kind the subagent is made from (an {@link AgentKind} or its name). Not together with `setup`. */
  readonly kind?: AgentKind | string;
  /** Composes the subagent, as `setup` does in `agents.create`. Not together with `kind`. */
  readonly setup?: AgentSetup;
  /** The filter on what the subagent reads from its owner (replaces the kind's). */
  readonly parentFilter?: ParentFilter;
  /**
   * The subagent's id, unique among live agents. Default: `<kind>-<random UUID>` for a
   * task made from a kind, else `task-<random UUID>`.
   */
  readonly id?: string;
  /** No structured result (see {@link StructuredRunTaskOptions} for `output`). */
  readonly output?: undefined;
}

/**
 * What {@link Agents.runTask} takes to ask the subagent for a structured result: the
 * options of {@link RunTaskOptions}, `output`, and an `fn` that also receives the task.
 */
export interface StructuredRunTaskOptions<V, R> extends Omit<RunTaskOptions<R>, 'fn' | 'output'> {
  /**
   * The schema of the result the subagent must record, or `{ schema, toolName?,
   * instruction? }`. The subagent's scope gets a capture tool (`structured_output`)
   * whose parameters are that schema and a protected prompt section asking it to call it
   * once; its first successful call records the value and stops the task. Read and
   * checked when `runTask` is called.
   */
  readonly output: TaskOutput<V>;
  /** The work, given the subagent and the {@link StructuredTask}; the subagent is disposed when it settles. Required. */
  readonly fn: StructuredTaskFn<V, R>;
}

/** @internal The options of one task, read once and checked before anything is made. */
interface TaskPlan<R> {
  /** The subagent's create options (the create transaction checks them). */
  readonly create: CreateAgentOptions;
  /** The `parent` option as given (checked by the create transaction). */
  readonly parent: unknown;
  readonly fn: TaskFn<R> | StructuredTaskFn<unknown, R>;
  /** How messages name the task: `Agents.runTask({ id: "x" })`. */
  readonly label: string;
  /** How messages about `output` name the task: `Agents.runTask({ id: "x", output })`. */
  readonly outputLabel: string;
  /** The `output` option, read and checked; `undefined` without one. */
  readonly output: OutputPlan | undefined;
}

/** @internal The structured part of one running task. */
interface Capture {
  readonly plan: OutputPlan;
  readonly stage: CaptureStage;
  readonly latch: StopLatch;
  readonly task: StructuredTask;
  /** The capture tool was registered (and so holds the plan's validator reference). */
  registered: boolean;
}

/** How `fn` settled. */
type Outcome<R> = { readonly ok: true; readonly value: Awaited<R> } | { readonly ok: false; readonly error: unknown };

/** The owner's disposal started while the task ran. */
const GONE = Symbol('gone');

/** @internal One running task, as its owner's {@link TaskGroup} sees it. A class: it lives as long as the task. */
class Task {
  /** Whether the owner's disposal started. */
  gone = false;
  /** The owner's `ContextDisposedError`, once {@link Task.gone}. */
  reason: unknown = undefined;
  /** Told when the owner's disposal starts (a structured task aborts its stop signal). */
  onGone: ((reason: unknown) => void) | undefined = undefined;
  #wake: (() => void) | undefined = undefined;
  #whenGone: Promise<typeof GONE> | undefined = undefined;

  /** The owner's disposal started (the first call wins). */
  ownerGone(reason: unknown): void {
    if (this.gone) return;
    this.gone = true;
    this.reason = reason;
    this.onGone?.(reason);
    this.#wake?.();
  }

  /** Resolves when the owner's disposal starts. */
  whenGone(): Promise<typeof GONE> {
    return (this.#whenGone ??= this.gone ? Promise.resolve(GONE) : new Promise<typeof GONE>((resolve) => (this.#wake = () => resolve(GONE))));
  }
}

/**
 * @internal The running tasks owned by one context, as one tracked work of it: the
 * moment the context's disposal (or an ancestor's) starts, every task is told, with the
 * disposal's `ContextDisposedError`. It never makes the disposal wait (`idle`): each task's
 * subagent is a child of the context, closed by that same disposal.
 */
class TaskGroup implements InFlight {
  readonly label = 'tasks (agents.runTask)';
  readonly idle = true;
  readonly settled: Promise<unknown> = Promise.resolve();
  readonly #tasks = new Set<Task>();
  #reason: (() => unknown) | undefined = undefined;

  abort(reason: () => unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    if (this.#tasks.size === 0) return;
    const why = reason();
    for (const t of [...this.#tasks]) t.ownerGone(why);
  }

  join(task: Task): void {
    if (this.#reason !== undefined) task.ownerGone(this.#reason());
    else this.#tasks.add(task);
  }

  leave(task: Task): void {
    this.#tasks.delete(task);
  }

  giveUp(): void {}
}

/** The group slot of the running tasks: one {@link TaskGroup} per context that owned a task. */
const TASKS = groupSlot('tasks', () => new TaskGroup());

/**
 * @internal The behaviour of `Agents.runTask`: reads the options (and `output`), makes the
 * subagent with the create transaction (the capture registered after its setup), runs
 * `fn(agent, task?)`, disposes the subagent, and settles with `fn`'s outcome (or the
 * owner's `ContextDisposedError` when the owner's disposal started first).
 */
export function runTask<V, R>(view: AgentsView, options: StructuredRunTaskOptions<V, R>): Promise<StructuredTaskResult<V, Awaited<R>>>;
export function runTask<R>(view: AgentsView, options: RunTaskOptions<R>): Promise<Awaited<R>>;
export async function runTask(view: AgentsView, options: unknown): Promise<unknown> {
  const plan = readTask<unknown>(options, view);
  const owner: SystemContext = Agent._is(plan.parent) ? plan.parent.ctx : view.context;
  if (owner._disposalStarted()) {
    if (plan.output !== undefined) releaseOutput(plan.output);
    throw new ContextDisposedError(plan.label, owner.describe());
  }
  const task = new Task();
  const group = owner.group(TASKS);
  group.join(task);
  try {
    return await run(view, plan, task);
  } finally {
    group.leave(task);
  }
}

async function run<R>(view: AgentsView, plan: TaskPlan<R>, task: Task): Promise<unknown> {
  const capture = plan.output === undefined ? undefined : startCapture(plan.output, plan.label, task);
  try {
    return await runWith(view, plan, task, capture);
  } finally {
    if (capture !== undefined) {
      const reason = task.reason;
      capture.latch.stop(task.gone ? () => reason : () => settledReason(plan.label));
      // a tool never registered still holds the schema's validator reference
      if (!capture.registered) releaseOutput(capture.plan);
    }
  }
}

/** The structured part of a task with `output`: its stage, stop signal and `task` object. */
function startCapture(plan: OutputPlan, label: string, task: Task): Capture {
  const latch = new StopLatch();
  const stage = new CaptureStage(() => latch.stop(() => stoppedReason(label, plan.toolName)));
  const capture: Capture = { plan, stage, latch, task: new StructuredTask(stage, latch, plan.toolName), registered: false };
  task.onGone = (reason) => latch.stop(() => reason);
  return capture;
}

async function runWith<R>(view: AgentsView, plan: TaskPlan<R>, task: Task, capture: Capture | undefined): Promise<unknown> {
  let agent: Agent;
  try {
    const steps: CreateAgentSteps =
      capture === undefined
        ? PLAIN_STEPS
        : { call: CALL, signal: false, prepare: (ctx: SystemContext) => installCapture(ctx, capture.plan, capture.stage, plan.outputLabel, () => void (capture.registered = true)) };
    agent = (await createAgent(view, plan.create, steps)).agent;
  } catch (err) {
    // the create rolled the subagent back; an owner disposed meanwhile is the reason
    throw task.gone ? task.reason : err;
  }
  const outcome = task.gone ? GONE : await Promise.race([settle(plan.fn, agent, capture?.task), task.whenGone()]);
  if (outcome === GONE || task.gone) {
    // The owner's disposal disposes the subagent: wait for it. Its errors are that
    // disposal's to report (they reach the owner's own rejection).
    await agent._dispose().catch(noop);
    throw task.reason;
  }
  // the task ends with fn: its stop signal aborts before the subagent is disposed
  capture?.latch.stop(() => settledReason(plan.label));
  try {
    await agent._dispose();
  } catch (disposeError) {
    if (outcome.ok) throw disposeError;
  }
  return finish(outcome, capture, plan.label, agent.id);
}

/**
 * What the task settles with, once its subagent is disposed: `fn`'s value (with `output`,
 * `{ value, result }`, or `NO_STRUCTURED_RESULT` when nothing was recorded), or its error.
 */
function finish<R>(outcome: Outcome<R>, capture: Capture | undefined, label: string, agentId: string): unknown {
  if (!outcome.ok) throw outcome.error;
  if (capture === undefined) return outcome.value;
  if (!capture.stage.committed) {
    throw new AgentError(
      agentId,
      `${label}: the task's function settled before the subagent "${agentId}" recorded its structured result with the tool "${capture.plan.toolName}" ` +
        '(no call of it succeeded). A structured result is a requirement, not a guarantee: polestar never re-prompts; ' +
        'check the model loop calls the tool (its prompt has the instruction), or retry the task.',
      { code: 'NO_STRUCTURED_RESULT' },
    );
  }
  return Object.freeze({ value: capture.stage.value, result: outcome.value });
}

/** Runs `fn(agent, task?)`; never rejects (a synchronous throw is a failed outcome too). */
function settle<R>(fn: TaskFn<R> | StructuredTaskFn<unknown, R>, agent: Agent, task: StructuredTask | undefined): Promise<Outcome<R>> {
  try {
    return Promise.resolve(task === undefined ? (fn as TaskFn<R>)(agent) : fn(agent, task)).then(
      (value): Outcome<R> => ({ ok: true, value }),
      (error: unknown): Outcome<R> => ({ ok: false, error }),
    );
  } catch (error) {
    return Promise.resolve({ ok: false, error });
  }
}

/**
 * Reads each option once (a throwing getter is a `TypeError` naming the option) and checks
 * `fn`; the create transaction checks the rest. Everything a task needs is read here,
 * before any await.
 */
function readTask<R>(options: unknown, view: AgentsView): TaskPlan<R> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${CALL}(options): options must be an object { fn, kind? | setup?, parent?, parentFilter?, id?, output? }, got ${describeValue(options)}.`);
  }
  const fn = read(options, 'fn');
  if (typeof fn !== 'function') {
    throw new TypeError(`${CALL}({ fn }): fn must be a function (agent) => result, got ${describeValue(fn)}.`);
  }
  const parent = read(options, 'parent');
  const kind = read(options, 'kind');
  const setup = read(options, 'setup');
  const parentFilter = read(options, 'parentFilter');
  let id = read(options, 'id');
  if (id === undefined) {
    const prefix = AgentKind._is(kind) ? kind.name : typeof kind === 'string' && kind.length > 0 ? kind : 'task';
    id = `${prefix}-${randomUUID()}`;
  }
  const create: Record<string, unknown> = { id };
  if (kind !== undefined) create.kind = kind;
  if (setup !== undefined) create.setup = setup;
  if (parent !== undefined) create.parent = parent;
  if (parentFilter !== undefined) create.parentFilter = parentFilter;
  const label = typeof id === 'string' ? `${CALL}({ id: ${JSON.stringify(id)} })` : `${CALL}(options)`;
  const rawOutput = read(options, 'output');
  // last: nothing after it can refuse the task, so a refused task holds no validator reference
  const outputLabel = rawOutput === undefined ? label : withOutput(label);
  const output = rawOutput === undefined ? undefined : readOutput(rawOutput, outputLabel, view.context.server);
  return { create: create as unknown as CreateAgentOptions, parent, fn: fn as TaskFn<R>, label, outputLabel, output };
}

/** How the messages about `output` name the task: `Agents.runTask({ id: "x", output })`. */
function withOutput(label: string): string {
  return label.endsWith(' })') ? `${label.slice(0, -3)}, output })` : label;
}

/** Reads `options[field]` once; a throwing getter or trap becomes a TypeError naming the call and the field. */
function read(options: object, field: string): unknown {
  return readField(options, field, `${CALL}(options)`, 'options');
}

/** Swallows a disposal error that is reported elsewhere. */
function noop(): void {}
