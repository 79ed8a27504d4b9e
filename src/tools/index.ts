// Tools: the scoped tool registry and its execution pipeline.
export { Tools, ToolsPlugin } from './tools.js';
export { Approval } from './approval.js';
export { NotLosslessJsonError, snapshotJson } from './lossless-json.js';
export type { JsonValue, JsonObject } from './lossless-json.js';
export type {
  JsonSchema,
  ToolDefinition,
  Tool,
  ToolSchema,
  ToolExecutionToken,
  ToolCall,
  ToolExecution,
  ToolErrorCode,
  ToolResult,
  PreExecuteDecision,
  PostExecuteDecision,
  ToolCallFunction,
  ToolGuard,
  ToolRestriction,
} from './types.js';
