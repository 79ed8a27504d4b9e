/**
 * polestar: hierarchical dependency-injection contexts for multi-agent AI backends.
 *
 * Importing this module loads `reflect-metadata`.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export * from './context/index.js';
export * from './disposal/index.js';
export * from './scope/index.js';
export * from './system/index.js';
export * from './execution/index.js';
export * from './container/index.js';
export * from './events/index.js';
export * from './tools/index.js';
export * from './prompts/index.js';
export * from './agents/index.js';
export * from './sessions/index.js';
export { inspect, formatInspection } from './observability/inspect.js';
export type { InspectNode, InspectNodeKind, InspectAgent, InspectLease, InspectSession, InspectionFormat } from './observability/inspect.js';
export { POLESTAR_CHANNELS } from './observability/index.js';
export type { AgentTraceContext, Logger, PolestarChannelName, StoreOperation, StoreTraceContext, ToolTraceContext, TurnTraceContext } from './observability/index.js';
