// Agents: the create/dispose transaction, subagents and their handles (sessions and turns live in conversation/).
import './events.js'; // the agents feature's events and reserved prefixes
export { Agents } from './agents.js';
export type { AgentSetup, CreateAgentOptions, DefineAgentKindOptions, RunTaskOptions, StructuredRunTaskOptions, StructuredTaskFn, StructuredTaskResult, TaskFn } from './agents.js';
export type { StructuredTask } from './structured/task.js';
export type { TaskOutput, TaskOutputOptions, TaskOutputSchema } from './structured/options.js';
export { AgentKind } from './kind.js';
export { Agent, AgentHandle } from './agent.js';
export type { AgentState } from './agent.js';
export { AgentsPlugin } from './plugin.js';
export { AgentError } from './errors.js';
export type { AgentErrorCode } from './errors.js';
