// Agents: the create/dispose transaction, subagents, sessions and turns.
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
export { Scratchpad, Session, openSession } from '../conversation/session.js';
export type { SessionOptions } from '../conversation/session.js';
export { ConversationHistory } from '../conversation/conversation-history.js';
export type { ChatMessage, ChatSystemMessage, ChatUserMessage, ChatAssistantMessage, ChatToolMessage, ChatToolCall } from '../conversation/chat-message.js';
