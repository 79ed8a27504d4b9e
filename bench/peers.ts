/**
 * The same workloads on other containers: raw inversify (what polestar is built on) and
 * the peers a reader would compare with, tsyringe, awilix and typed-inject, each used the
 * way its documentation suggests for a per-request child scope.
 *
 * - Turn workload: a root holding the global, {@link RESIDENT} agent containers each with an
 *   agent-level value and a session child; per turn a child of a session, a value bound in
 *   it, three lookups (global 4 levels up, agent value, turn value), then its disposal awaited.
 * - Agent lifecycle: per agent a child of the app root with five tool values, a session
 *   child, a turn child, one tool looked up and its body called (awaited), then all three
 *   disposed (awaited).
 */
import 'reflect-metadata';
import { Container } from 'inversify';
import { container as tsyringeRoot, type DependencyContainer } from 'tsyringe';
import { asValue, createContainer, type AwilixContainer } from 'awilix';
import { createInjector } from 'typed-inject';

/** The global every turn reads. */
export class AppConfig {
  constructor(readonly agentName: string) {}
}
/** The agent-level local. */
export class AgentMemory {
  readonly facts: string[] = [];
}
/** The turn local. */
export class Scratchpad {
  readonly notes: string[] = [];
}

/** How many agent trees each contender keeps alive while it is measured. */
export const RESIDENT = 4;

/** One peer of the turn workload. */
export interface TurnPeer {
  readonly name: string;
  readonly label: string;
  /** Builds the resident trees and returns the batch runner. */
  turns(): Promise<(n: number) => Promise<number>>;
}

const scratch = new Scratchpad();

const inversifyTurns: TurnPeer = {
  name: 'inversify',
  label: 'raw inversify 8 (new Container({ parent }) per context, bind().toConstantValue, get, await unbindAll())',
  async turns() {
    const root = new Container();
    root.bind(AppConfig).toConstantValue(new AppConfig('researcher'));
    const sessions: Container[] = [];
    for (let i = 0; i < RESIDENT; i++) {
      const agent = new Container({ parent: root });
      agent.bind(AgentMemory).toConstantValue(new AgentMemory());
      sessions.push(new Container({ parent: agent }));
    }
    let k = 0;
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const turn = new Container({ parent: sessions[k++ % RESIDENT] });
        turn.bind(Scratchpad).toConstantValue(scratch);
        sink += turn.get(AppConfig).agentName.length;
        sink += turn.get(AgentMemory).facts.length;
        sink += turn.get(Scratchpad).notes.length;
        await turn.unbindAll();
      }
      return sink;
    };
  },
};

const tsyringeTurns: TurnPeer = {
  name: 'tsyringe',
  label: 'tsyringe 4.10 (createChildContainer, registerInstance, resolve, await dispose())',
  async turns() {
    const root = tsyringeRoot.createChildContainer();
    root.registerInstance(AppConfig, new AppConfig('researcher'));
    const sessions: DependencyContainer[] = [];
    for (let i = 0; i < RESIDENT; i++) {
      const agent = root.createChildContainer();
      agent.registerInstance(AgentMemory, new AgentMemory());
      sessions.push(agent.createChildContainer());
    }
    let k = 0;
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const turn = sessions[k++ % RESIDENT].createChildContainer();
        turn.registerInstance(Scratchpad, scratch);
        sink += turn.resolve(AppConfig).agentName.length;
        sink += turn.resolve(AgentMemory).facts.length;
        sink += turn.resolve(Scratchpad).notes.length;
        await turn.dispose();
      }
      return sink;
    };
  },
};

interface Cradle {
  appConfig: AppConfig;
  agentMemory: AgentMemory;
  scratchpad: Scratchpad;
}

const awilixTurns: TurnPeer = {
  name: 'awilix',
  label: 'awilix 13 (createScope, register asValue, resolve, await dispose())',
  async turns() {
    const root = createContainer<Cradle>();
    root.register({ appConfig: asValue(new AppConfig('researcher')) });
    const sessions: AwilixContainer<Cradle>[] = [];
    for (let i = 0; i < RESIDENT; i++) {
      const agent = root.createScope();
      agent.register({ agentMemory: asValue(new AgentMemory()) });
      sessions.push(agent.createScope());
    }
    let k = 0;
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const turn = sessions[k++ % RESIDENT].createScope();
        turn.register({ scratchpad: asValue(scratch) });
        sink += turn.resolve('appConfig').agentName.length;
        sink += turn.resolve('agentMemory').facts.length;
        sink += turn.resolve('scratchpad').notes.length;
        await turn.dispose();
      }
      return sink;
    };
  },
};

const typedInjectTurns: TurnPeer = {
  name: 'typed-inject',
  label: 'typed-inject 5 (provideValue child injector, resolve, await dispose())',
  async turns() {
    const root = createInjector().provideValue('appConfig', new AppConfig('researcher'));
    const session = (): ReturnType<ReturnType<typeof root.provideValue<'agentMemory', AgentMemory>>['createChildInjector']> =>
      root.provideValue('agentMemory', new AgentMemory()).createChildInjector();
    const sessions = Array.from({ length: RESIDENT }, session);
    let k = 0;
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const turn = sessions[k++ % RESIDENT].provideValue('scratchpad', scratch);
        sink += turn.resolve('appConfig').agentName.length;
        sink += turn.resolve('agentMemory').facts.length;
        sink += turn.resolve('scratchpad').notes.length;
        await turn.dispose();
      }
      return sink;
    };
  },
};

/** Every peer of the turn workload, in table order. */
export const TURN_PEERS: readonly TurnPeer[] = [inversifyTurns, tsyringeTurns, awilixTurns, typedInjectTurns];

// ------------------------------------------------------------------ agent lifecycle

/** One peer of the agent-lifecycle workload. */
export interface LifecyclePeer {
  readonly name: string;
  readonly label: string;
  /** Builds the app root and returns the batch runner (one agent lifecycle per op). */
  lifecycles(tools: readonly LifecycleTool[]): (n: number) => Promise<number>;
}

/** A tool as the lifecycle peers hold it: a plain value with a body. */
export interface LifecycleTool {
  readonly name: string;
  readonly execute: (args: { q: string }) => unknown;
}

const ARGS = Object.freeze({ q: 'x' });

/** Calls the tool's body as a turn's tool call would (awaited), returning a number to sink. */
async function callTool(tool: LifecycleTool): Promise<number> {
  return String(await tool.execute(ARGS)).length;
}

const inversifyLifecycle: LifecyclePeer = {
  name: 'inversify',
  label: 'raw inversify (agent, session and turn child containers, 5 bindings, unbindAll)',
  lifecycles(tools) {
    const root = new Container();
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const agent = new Container({ parent: root });
        for (const t of tools) agent.bind(t.name).toConstantValue(t);
        const session = new Container({ parent: agent });
        const turn = new Container({ parent: session });
        sink += await callTool(turn.get<LifecycleTool>('search'));
        await turn.unbindAll();
        await session.unbindAll();
        await agent.unbindAll();
      }
      return sink;
    };
  },
};

const tsyringeLifecycle: LifecyclePeer = {
  name: 'tsyringe',
  label: 'tsyringe (agent, session and turn child containers, 5 registerInstance, dispose)',
  lifecycles(tools) {
    const root = tsyringeRoot.createChildContainer();
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const agent = root.createChildContainer();
        for (const t of tools) agent.registerInstance(t.name, t);
        const session = agent.createChildContainer();
        const turn = session.createChildContainer();
        sink += await callTool(turn.resolve<LifecycleTool>('search'));
        await turn.dispose();
        await session.dispose();
        await agent.dispose();
      }
      return sink;
    };
  },
};

const awilixLifecycle: LifecyclePeer = {
  name: 'awilix',
  label: 'awilix (agent, session and turn scopes, 5 asValue, dispose)',
  lifecycles(tools) {
    const root = createContainer();
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const agent = root.createScope();
        for (const t of tools) agent.register(t.name, asValue(t));
        const session = agent.createScope();
        const turn = session.createScope();
        sink += await callTool(turn.resolve<LifecycleTool>('search'));
        await turn.dispose();
        await session.dispose();
        await agent.dispose();
      }
      return sink;
    };
  },
};

/** typed-inject's injector with its type-level context erased (the tool names are data here). */
interface LooseInjector {
  provideValue(token: string, value: unknown): LooseInjector;
  createChildInjector(): LooseInjector;
  resolve(token: string): unknown;
  dispose(): Promise<void>;
}

const typedInjectLifecycle: LifecyclePeer = {
  name: 'typed-inject',
  label: 'typed-inject (a provideValue chain of 5 tools, session and turn child injectors, dispose)',
  lifecycles(tools) {
    const root = createInjector();
    return async (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        // typed-inject holds one value per injector: five tools are a chain of five,
        // under one child injector whose disposal disposes the whole chain.
        const head = root.createChildInjector() as unknown as LooseInjector;
        let agent = head;
        for (const t of tools) agent = agent.provideValue(t.name, t);
        const session = agent.createChildInjector();
        const turn = session.createChildInjector();
        sink += await callTool(turn.resolve('search') as LifecycleTool);
        await turn.dispose();
        await session.dispose();
        await head.dispose();
      }
      return sink;
    };
  },
};

/** Every peer of the lifecycle workload, in table order. */
export const LIFECYCLE_PEERS: readonly LifecyclePeer[] = [inversifyLifecycle, tsyringeLifecycle, awilixLifecycle, typedInjectLifecycle];
