/**
 * `polestar-di/adapters/ai-sdk`: the Vercel AI SDK (`ai`, an optional peer dependency)
 * meets polestar. `toAiSdkTools` turns a `Tools` view into the SDK's tool record, every
 * call running through `Tools.execute`; `toAiSdkMessages` and `fromAiSdkMessages`
 * convert conversations between `ChatMessage[]` and the SDK's `ModelMessage[]`, lossless
 * both ways. This entry imports `ai` for its types only.
 *
 * @packageDocumentation
 */
export { toAiSdkTools } from './wire/ai-sdk/tools.js';
export type { AiSdkTool, AiSdkTools, AiSdkToolsOptions } from './wire/ai-sdk/tools.js';
export { toAiSdkMessages, fromAiSdkMessages } from './wire/ai-sdk/messages.js';
