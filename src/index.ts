/**
 * polestar: hierarchical dependency-injection contexts for multi-agent AI backends.
 *
 * This entry holds what an application uses. The contract a session store of your own
 * implements (its method types, the input checks, the SQL driver port) is in
 * `polestar-di/sessions`; the test kit is in `polestar-di/testing`.
 *
 * Importing this module loads `reflect-metadata`.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

// Tokens: the keys values are stored under, and the global/local markers.
export { token, tokenName, isToken, globalResource, localResource, roleOf } from './context/index.js';
export type { Class, Token, TokenSymbol, TokenValue, ResourceRole } from './context/index.js';

// The server and its contexts: building, children, outputs, parent filters, plugins, errors.
export { Server, SystemContext, Outputs, ParentFilter } from './context/index.js';
export { ParamError, ContextDisposedError, DisposeTimeoutError, ServerError, ServerBuildError } from './context/index.js';
export type {
  BorrowMode,
  ChildOptions,
  LocalFactory,
  LocalLifetime,
  ParamErrorKind,
  ParentFilterKind,
  Plugin,
  RegisterLocalOptions,
  ResolvedServerOptions,
  ServerOptions,
  TakenOutput,
} from './context/index.js';

// Ownership: whether a value is disposable, and cleanups tied to a context.
export { isDisposable } from './disposal/index.js';
export type { Cleanup, CleanupOptions } from './disposal/index.js';

// Registration scopes, and the base of the views `ctx.get(Tools)` and the like return.
export { createScope, scopeOf, RegistrationError, ContextView } from './scope/index.js';
export type { Scope, ScopeOptions } from './scope/index.js';

// Systems: parameters, decorators, running, borrows, validation.
export { Res, ResMut, Out, res, resMut, out, System, system, systemOf, Unit, SystemError, validate } from './system/index.js';
export type {
  AnySystem,
  BorrowWaitOptions,
  MissingParam,
  OwnClass,
  Param,
  ParamAccess,
  ParamDecorator,
  ParamOptions,
  ParamValue,
  ParamValues,
  SystemAccess,
  SystemDecorator,
  SystemErrorKind,
  SystemFn,
  SystemOptions,
} from './system/index.js';

// Execution: `ctx.execute(steps)` with parallel branches and bounded loops.
export { parallel, loop, ParallelStep, LoopStep, DEFAULT_MAX_ITERATIONS, ExecutionResult } from './execution/index.js';
export type { Step, LoopOptions, ExecutionResultJson } from './execution/index.js';

// The inversify bridge: the class decorators `ctx.resolve` builds with.
export { inject, injectable } from './container/index.js';

// Events: the scope-filtered event bus, typed by `EventMap`.
export { Events } from './events/index.js';
export type {
  EventArgs,
  EventListener,
  EventMap,
  FreeListener,
  FreeName,
  ListenOptions,
  Listener,
  WaterfallArgs,
  WaterfallValue,
} from './events/index.js';

// Lossless JSON: the values tool arguments, results and stored session data are made of.
export { NotLosslessJsonError, snapshotJson } from './util/lossless-json.js';
export type { JsonObject, JsonValue } from './util/lossless-json.js';

// Tools: the scoped tool registry, its execution pipeline, approval and tool systems.
export { Tools, ToolsPlugin, Approval, toolSystem, ToolSchemaError } from './tools/index.js';
export type {
  DefaultJsonSchemaDialect,
  ExecuteListener,
  ExecuteOptions,
  JsonSchema,
  JsonSchemaDialect,
  PostExecuteDecision,
  PostExecuteListener,
  PreExecuteDecision,
  PreExecuteListener,
  ResultObserver,
  SchemaArgs,
  ShownAssembly,
  ShownTool,
  ShownTools,
  StandardJsonSchema,
  Tool,
  ToolAnnotations,
  ToolCall,
  ToolCallFunction,
  ToolDefinition,
  ToolErrorCode,
  ToolExecution,
  ToolExecutionToken,
  ToolGuard,
  ToolRestriction,
  ToolResult,
  ToolSchema,
  ToolSystem,
  ToolSystemOptions,
  ToolsPluginOptions,
  ToolsRegExp,
  ToolsRegExpEngine,
} from './tools/index.js';

// Prompts: scoped sections, variables and owner-final protection.
export { Prompts, PromptsPlugin, PromptError } from './prompts/index.js';
export type {
  AssembleOptions,
  AssembledSection,
  PromptAssembly,
  PromptContext,
  PromptProtection,
  SectionDefinition,
  SectionText,
  VariableProvider,
} from './prompts/index.js';

// Agents: the create/dispose transaction, subagents and their handles.
export { Agents, Agent, AgentHandle, AgentKind, AgentsPlugin, AgentError } from './agents/index.js';
export type {
  AgentErrorCode,
  AgentSetup,
  AgentState,
  CreateAgentOptions,
  DefineAgentKindOptions,
  RunTaskOptions,
  StructuredRunTaskOptions,
  StructuredTask,
  StructuredTaskFn,
  StructuredTaskResult,
  TaskFn,
  TaskOutput,
  TaskOutputOptions,
  TaskOutputSchema,
} from './agents/index.js';

// Conversations: chat messages, the history a session keeps, sessions and their turns.
export { Scratchpad, Session, openSession, ConversationHistory } from './conversation/index.js';
export type {
  ChatAssistantMessage,
  ChatMessage,
  ChatSystemMessage,
  ChatToolCall,
  ChatToolMessage,
  ChatUserMessage,
  SessionOptions,
} from './conversation/index.js';

// Durable sessions: the plugin, the view, sessions, their turns, log and events, the
// in-memory store, and the error. A store of your own implements the contract in `polestar-di/sessions`.
export { SessionsPlugin, Sessions, DurableSession, TurnLog, MemorySessionStore, SessionError, SESSION_ERROR_CODES } from './sessions/index.js';
export type {
  CreateSessionOptions,
  DurableTurnOptions,
  InterruptedHandler,
  InterruptedTurn,
  LeaseHolder,
  LocalSerializer,
  MemorySessionStoreOptions,
  OneshotOptions,
  OneshotResult,
  OpenSessionOptions,
  ResumeSessionOptions,
  SerializerEntry,
  SessionCheckpoint,
  TurnSlotOptions,
  SessionErrorCode,
  SessionErrorOptions,
  SessionEventInfo,
  SessionEventRecord,
  SessionEventStatus,
  SessionListItem,
  SessionLeaseLostInfo,
  SessionListPage,
  SessionStore,
  SessionsPluginOptions,
  TurnFn,
} from './sessions/index.js';

// Observability: the inspection snapshot, the tracing channels and the logger seam.
export { inspect, formatInspection } from './observability/inspect.js';
export type { InspectNode, InspectNodeKind, InspectAgent, InspectLease, InspectSession, InspectionFormat } from './observability/inspect.js';
export { POLESTAR_CHANNELS } from './observability/index.js';
export type { AgentTraceContext, Logger, PolestarChannelName, StoreOperation, StoreTraceContext, ToolTraceContext, TurnTraceContext } from './observability/index.js';
