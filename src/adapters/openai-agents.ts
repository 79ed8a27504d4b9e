/**
 * `polestar-di/adapters/openai-agents`: the OpenAI Agents SDK (`@openai/agents`, an
 * optional peer dependency) meets polestar. `toAgentsSdkTools` turns a `Tools` view into
 * the SDK's function tools, every call running through `Tools.execute`, sent with
 * `strict: true` only where the schema allows it. This entry imports `@openai/agents`
 * (its `tool()` factory); the root entry and the other adapters never do.
 *
 * @packageDocumentation
 */
export { toAgentsSdkTools } from './wire/openai-agents/tools.js';
export type { AgentsSdkTool, AgentsSdkToolsOptions } from './wire/openai-agents/tools.js';
