/** Shared parts of the structured-result tests: a server with every plugin, and a scripted AI SDK model. */
import { MockLanguageModelV3 } from 'ai/test';
import { AgentsPlugin, PromptsPlugin, Server, ToolsPlugin, type ToolsPluginOptions } from '../../../src/index.js';

/** A finished server with Tools, Prompts and Agents. */
export async function structuredServer(tools?: ToolsPluginOptions): Promise<Server> {
  const server = new Server();
  server.addPlugins(new ToolsPlugin(tools), new PromptsPlugin(), new AgentsPlugin());
  await server.finish();
  return server;
}

type Generate = ConstructorParameters<typeof MockLanguageModelV3>[0] extends infer O ? (O extends { doGenerate?: infer G } ? Extract<G, (...a: never[]) => unknown> : never) : never;
/** What the AI SDK sends the model in one step. */
export type CallOptions = Parameters<Generate>[0];
/** What the model answers in one step. */
export type Content = Awaited<ReturnType<Generate>>['content'];

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A model that answers each step with the next scripted content (after `delay`) and records what it was sent. */
export function scripted(steps: Content[], delay?: () => Promise<void>): { model: MockLanguageModelV3; seen: CallOptions[] } {
  const seen: CallOptions[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options);
      await delay?.();
      const content = steps[seen.length - 1];
      if (content === undefined) throw new Error(`the script has no step ${seen.length}`);
      const calls = content.some((c) => c.type === 'tool-call');
      return { content, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
  return { model, seen };
}

/** A tool call of the model. */
export const call = (toolCallId: string, toolName: string, input: unknown) => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName,
  input: typeof input === 'string' ? input : JSON.stringify(input),
});
/** A text answer of the model. */
export const text = (t: string) => ({ type: 'text' as const, text: t });

/** The system prompt the model was sent in a step. */
export function systemOf(options: CallOptions): string {
  const s = options.prompt.find((m) => m.role === 'system');
  return s?.role === 'system' ? s.content : '';
}

/** The tool names the model was shown in a step. */
export function toolNamesOf(options: CallOptions): string[] {
  return (options.tools ?? []).map((t) => t.name);
}

/** The tool results the model was sent, as `callId: type value`. */
export function toolOutputsOf(options: CallOptions): string[] {
  return options.prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).flatMap((p) =>
    p.type === 'tool-result' ? [`${p.toolCallId}: ${p.output.type} ${'value' in p.output ? String(p.output.value) : ''}`] : [],
  );
}

/** Lets pending microtasks and one macrotask run. */
export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
