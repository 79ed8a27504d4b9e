// Tools: the scoped tool registry, its execution pipeline and tool systems.
import './events.js'; // the tools feature's events and reserved prefixes
export { Tools, ToolsPlugin } from './tools.js';
export { Approval } from './approval.js';
export { toolSystem } from './tool-system.js';
export type { ToolSystem, ToolSystemOptions, SchemaArgs } from './tool-system.js';
export { ToolSchemaError } from './schema/tool-schema-error.js';
export type { ToolsPluginOptions, ToolsRegExp, ToolsRegExpEngine } from './schema/plugin-options.js';
export type { JsonSchemaDialect, DefaultJsonSchemaDialect } from './schema/dialects.js';
export type { StandardJsonSchema } from './schema/standard-schema.js';
export { NotLosslessJsonError, snapshotJson } from '../util/lossless-json.js';
export type { JsonValue, JsonObject } from '../util/lossless-json.js';
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
  ToolAnnotations,
  ShownTools,
  ShownAssembly,
  ShownTool,
  ExecuteOptions,
  PreExecuteListener,
  ExecuteListener,
  PostExecuteListener,
  ResultObserver,
} from './types.js';
