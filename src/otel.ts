/**
 * `polestar-di/otel`: OpenTelemetry spans of what polestar does (turns, tool calls and
 * session-store calls) in the OpenTelemetry GenAI semantic conventions, made from
 * polestar's `node:diagnostics_channel` tracing channels. Needs the optional peer
 * `@opentelemetry/api` (1.x); nothing else in polestar imports it.
 *
 * - {@link instrumentPolestar}`({ tracerProvider?, logger? })` subscribes and returns the
 *   disposer that unsubscribes;
 * - {@link PolestarInstrumentation} is the same as an OpenTelemetry `Instrumentation`, for
 *   `registerInstrumentations` or the Node SDK's `instrumentations`.
 *
 * @packageDocumentation
 */
export { instrumentPolestar, PolestarInstrumentation, INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from './otel/instrumentation.js';
export type { InstrumentPolestarOptions, PolestarInstrumentationConfig } from './otel/instrumentation.js';
export type { Logger } from './observability/logger.js';
export {
  SEMCONV_VERSION,
  SEMCONV_SCHEMA_URL,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_ERROR_TYPE,
  GEN_AI_OPERATION_INVOKE_AGENT,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  ATTR_POLESTAR_TURN_NUMBER,
  ATTR_POLESTAR_TURN_ATTEMPT,
  ATTR_POLESTAR_TURN_DURABLE,
  ATTR_POLESTAR_STORE_OPERATION,
} from './otel/semconv.js';
