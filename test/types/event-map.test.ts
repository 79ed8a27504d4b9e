/**
 * Type-level tests of the typed events (SPEC 10.6), compiled by `npm run typecheck`.
 * Every `@ts-expect-error` line fails the typecheck if it stops being an error. An
 * application's own event is added to `EventMap` by declaration merging, as a user would
 * (`declare module 'polestar-di'`); here the module is the source entry point.
 */
import {
  Events,
  Server,
  ToolsPlugin,
  type Agent,
  type EventListener,
  type PreExecuteDecision,
  type PromptAssembly,
  type SessionEventInfo,
  type SessionLeaseLostInfo,
  type ToolExecution,
} from '../../src/index.js';

declare module '../../src/index.js' {
  interface EventMap {
    /** An application event added by declaration merging (test only). */
    'typetest/refund-requested': (refund: { amount: number; customerId: string }, reason: string) => unknown;
  }
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assertType = <T extends true>(): T => true as T;

async function typeChecks(events: Events, agent: Agent): Promise<void> {
  // built-in events: listeners are typed by name
  events.on('tools/pre-execute', (decision, execution) => {
    assertType<Equal<typeof decision, PreExecuteDecision>>();
    assertType<Equal<typeof execution, ToolExecution>>();
    return execution.name === 'refund' ? { kind: 'ask', reason: 'refunds need approval' } : decision;
  });
  events.on('agent/created', (a) => a.id.length);
  events.on('session/lease-lost', (info) => {
    assertType<Equal<typeof info, SessionLeaseLostInfo>>();
    return info.error.message + info.sessionId + info.agentId + info.turn;
  });
  events.on('session/turn-committed', (info: SessionEventInfo) => info.turn);
  events.on('prompt/assemble', async (assembly, { scope, ctx }) => {
    void scope;
    void ctx.get(Events);
    return { ...assembly, sections: assembly.sections.filter((s) => s.name !== 'debug') };
  });
  // @ts-expect-error a pre-execute listener must return a decision
  events.on('tools/pre-execute', () => 'allow');
  // @ts-expect-error a prompt/assemble listener must return an assembly
  events.on('prompt/assemble', (assembly: PromptAssembly) => assembly.sections);
  // @ts-expect-error an agent/created listener receives an Agent, not a string
  events.on('agent/created', (id: string) => id);

  // declaration merging: the application's own event is typed like a built-in
  events.on('typetest/refund-requested', (refund, reason) => {
    assertType<Equal<typeof refund, { amount: number; customerId: string }>>();
    return reason.length + refund.amount;
  });
  await events.emit(agent, 'typetest/refund-requested', { amount: 500, customerId: 'c-4711' }, 'duplicate charge');
  // @ts-expect-error a wrong listener signature for a merged event does not compile
  events.on('typetest/refund-requested', (refund: { amount: string }) => refund.amount);
  // @ts-expect-error emit must pass the merged event's arguments
  await events.emit(agent, 'typetest/refund-requested', { amount: '500' }, 'x');
  // @ts-expect-error and all of them
  await events.emit(agent, 'typetest/refund-requested', { amount: 500, customerId: 'c' });

  // emit and waterfall of built-ins
  await events.emit(agent, 'agent/created', agent);
  // @ts-expect-error agent/created is emitted with an Agent
  await events.emit(agent, 'agent/created', 'researcher');
  const assembly: PromptAssembly = { sections: [], tools: [], variables: {} };
  const _out = await events.waterfall(agent, 'prompt/assemble', assembly, { scope: agent, ctx: agent.ctx });
  assertType<Equal<typeof _out, PromptAssembly>>();
  // @ts-expect-error the seed of prompt/assemble is an assembly
  await events.waterfall(agent, 'prompt/assemble', 'text', { scope: agent, ctx: agent.ctx });

  // names not in the map stay free: unknown arguments, any seed
  events.on('metrics/tick', (..._args) => {
    assertType<Equal<typeof _args, unknown[]>>();
  });
  events.on('metrics/tick', (n: number) => n); // a free listener may annotate its parameters
  await events.emit(undefined, 'metrics/tick', 1, 'two', { three: 3 });
  const _n = await events.waterfall(undefined, 'metrics/sum', 0, 'anything');
  assertType<Equal<typeof _n, number>>();
  const name: string = 'tools/pre-execute';
  events.on(name, (x: unknown) => x); // a name only known as a string is free (checked at run time)
  assertType<Equal<EventListener<'not/in-the-map'>, EventListener<string>>>();
}

test('typed events compile as the type checks above say (and the file runs)', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  expect(typeof typeChecks).toBe('function');
  expect(server.createContext().get(Events)).toBeInstanceOf(Events);
  await server.dispose();
});
