/**
 * `polestar-di/adapters`: polestar's tools and conversations in the shapes of the model
 * APIs (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages) and MCP servers
 * mounted as tools. Plain JSON in and out, no runtime dependency on any SDK: the outputs
 * are typed structurally and type-check against each SDK's own types.
 *
 * @packageDocumentation
 */
export { PROVIDER_TOOL_NAME } from './wire/tool-names.js';
export {
  toOpenAIChatTools,
  fromOpenAIChatToolCall,
  toOpenAIChatToolMessage,
  toOpenAIChatMessages,
  fromOpenAIChatMessages,
} from './wire/openai-chat.js';
export type {
  OpenAIChatTool,
  OpenAIChatToolCallLike,
  OpenAIChatTextPart,
  OpenAIChatFunctionCall,
  OpenAIChatToolMessage,
  OpenAIChatMessage,
  OpenAIChatMessageLike,
} from './wire/openai-chat.js';
export {
  toOpenAIResponsesTools,
  fromOpenAIResponsesFunctionCall,
  toOpenAIResponsesFunctionOutput,
  toOpenAIResponsesInput,
  fromOpenAIResponsesInput,
} from './wire/openai-responses.js';
export type {
  OpenAIResponsesTool,
  OpenAIResponsesFunctionCallLike,
  OpenAIResponsesInputText,
  OpenAIResponsesFunctionCall,
  OpenAIResponsesFunctionOutput,
  OpenAIResponsesInputItem,
} from './wire/openai-responses.js';
export {
  toAnthropicTools,
  fromAnthropicToolUse,
  toAnthropicToolResult,
  toAnthropicMessages,
  fromAnthropicMessages,
} from './wire/anthropic.js';
export type {
  AnthropicTool,
  AnthropicToolUseLike,
  AnthropicTextBlock,
  AnthropicToolUseBlock,
  AnthropicToolResult,
  AnthropicMessage,
  AnthropicConversation,
  AnthropicMessageLike,
  AnthropicConversationLike,
} from './wire/anthropic.js';
export { prepareTurn, executeToolCall } from './wire/prepare-turn.js';
export type { PreparedTurn } from './wire/prepare-turn.js';
export { mountMcpTools, MCP_DEFAULT_SCHEMA_DIALECT } from './mcp/mount.js';
export { McpMountError } from './mcp/mount-error.js';
export type { McpMount, McpMountOptions } from './mcp/mount.js';
export { McpToolError } from './mcp/result.js';
export { fromMcpSdkClient, fromMcpSdkV2Client } from './mcp/sdk-client.js';
export type { McpSdkClientLike, McpSdkV2ClientLike } from './mcp/sdk-client.js';
export type { McpTool, McpListToolsResult, McpContentPart, McpCallToolResult, McpToolSource } from './mcp/result.js';
