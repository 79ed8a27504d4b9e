// Observability: the tracing channels, the logger seam, and (internal) the body wrapper the
// OpenTelemetry bridge installs. The root re-exports the public names only.
export { POLESTAR_CHANNELS } from './channels.js';
export type {
  AgentTraceContext,
  PolestarChannelName,
  StoreOperation,
  StoreTraceContext,
  ToolTraceContext,
  TurnTraceContext,
} from './channels.js';
export type { Logger } from './logger.js';

// ---- internal: for polestar-di/otel (src/otel.ts), not exported from the root
export { agentChannel, loggerOfTrace, serverOfTrace, storeChannel, toolChannel, turnChannel } from './channels.js';
export { DEFAULT_LOGGER, log } from './logger.js';
export { bodyWrapper, setBodyWrapper } from './wrap.js';
export type { BodyWrapper } from './wrap.js';
