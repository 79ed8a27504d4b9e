/**
 * The OpenTelemetry semantic-convention names the bridge writes, as constants (no
 * dependency on `@opentelemetry/semantic-conventions`). They follow the GenAI agent and
 * tool-execution spans of semantic conventions {@link SEMCONV_VERSION}: a backend that
 * reads those conventions (the GenAI views of Jaeger, Grafana, Datadog, Langfuse and the
 * like) shows polestar's spans as agent invocations and tool executions.
 */

/**
 * The version of the OpenTelemetry semantic conventions the spans follow (the GenAI
 * conventions are still marked "Development" upstream; this pins the names used).
 */
export const SEMCONV_VERSION = '1.37.0';

/** The schema URL of {@link SEMCONV_VERSION}, given to the tracer. */
export const SEMCONV_SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

/** `gen_ai.operation.name`: `invoke_agent` on a turn's span, `execute_tool` on a tool call's. */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** `gen_ai.agent.id`: the agent's id. */
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id';
/** `gen_ai.agent.name`: the agent's kind, else its id. */
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
/** `gen_ai.conversation.id`: the durable session's id. */
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
/** `gen_ai.tool.name`: the tool name the model asked for. */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** `gen_ai.tool.call.id`: the model's call id. */
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** `gen_ai.tool.type`: always `function` for a polestar tool. */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** `error.type`: the low-cardinality class of a failure (a polestar error code, else the error's name). */
export const ATTR_ERROR_TYPE = 'error.type';

/** `gen_ai.operation.name` of a turn. */
export const GEN_AI_OPERATION_INVOKE_AGENT = 'invoke_agent';
/** `gen_ai.operation.name` of a tool call. */
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';

/** `polestar.turn.number`: a durable turn's number (once its attempt began). */
export const ATTR_POLESTAR_TURN_NUMBER = 'polestar.turn.number';
/** `polestar.turn.attempt`: a durable turn's attempt (once it began). */
export const ATTR_POLESTAR_TURN_ATTEMPT = 'polestar.turn.attempt';
/** `polestar.turn.durable`: whether the turn is a durable session's. */
export const ATTR_POLESTAR_TURN_DURABLE = 'polestar.turn.durable';
/** `polestar.store.operation`: the session store method called. */
export const ATTR_POLESTAR_STORE_OPERATION = 'polestar.store.operation';
