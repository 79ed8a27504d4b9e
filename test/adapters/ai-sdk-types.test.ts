/**
 * The AI SDK adapter's outputs are the SDK's own types, with no casts: this file is
 * compiled by the type check (tsconfig.json includes test/), so an assignment that stops
 * compiling fails the gate. Each block also runs a small assertion.
 */
import { generateText, streamText, type ModelMessage, type Tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Server, Tools, ToolsPlugin, type ChatMessage, type ToolResult } from '../../src/index.js';
import { fromAiSdkMessages, toAiSdkMessages, toAiSdkTools, type AiSdkTools } from '../../src/adapters/ai-sdk.js';

test('toAiSdkTools is a ToolSet that generateText and streamText accept; outputs are ToolResults', async () => {
  const server = new Server();
  server.addPlugins(new ToolsPlugin());
  await server.finish();
  const tools = server.createContext().get(Tools);
  tools.register({ name: 'search', description: 'Searches', parameters: { type: 'object' }, execute: () => 'hits' });

  const set: ToolSet = toAiSdkTools(tools);
  const one: Tool = toAiSdkTools(tools).search;
  const typed: AiSdkTools = toAiSdkTools(tools, { shown: ['search'] });
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'text', text: 'ok' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    }),
  });
  const result = await generateText({ model, prompt: 'x', tools: toAiSdkTools(tools) });
  // the SDK types a string-keyed record's outputs as unknown: they are polestar's results
  const outputs = result.toolResults.map((r) => r.output as ToolResult);
  void streamText({ model, prompt: 'x', tools: typed });
  expect(Object.keys(set)).toEqual(['search']);
  expect(typeof one.execute).toBe('function');
  expect(outputs).toEqual([]);

  // and the messages: the SDK's own message types in and out
  const messages: ModelMessage[] = toAiSdkMessages([{ role: 'user', content: 'hi' }]);
  const back: ChatMessage[] = fromAiSdkMessages([...messages, ...result.response.messages]);
  await generateText({ model, messages: toAiSdkMessages(back) });
  expect(back.map((m) => m.role)).toEqual(['user', 'assistant']);
  await server.dispose();
});

/** The bare modules `entry`'s module graph imports at run time and as types only. */
async function importsOf(entry: string): Promise<{ runtime: Set<string>; typeOnly: Set<string> }> {
  const { readFile } = await import('node:fs/promises');
  const { dirname, resolve } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
  const runtime = new Set<string>();
  const typeOnly = new Set<string>();
  const seen = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = await readFile(file, 'utf8');
    for (const m of src.matchAll(/^(import|export)\s+(type\s+)?[^'";]*?from\s+'([^']+)'/gm)) {
      const [, , type, spec] = m;
      if (spec.startsWith('.')) {
        if (type === undefined) await visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      } else (type === undefined ? runtime : typeOnly).add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  };
  await visit(resolve(root, entry));
  return { runtime, typeOnly };
}

test('each entry imports only its own optional peer, and the ai-sdk entry only as types', async () => {
  const SDKS = ['ai', '@openai/agents', 'openai', '@anthropic-ai/sdk', '@modelcontextprotocol/sdk', '@modelcontextprotocol/client', '@opentelemetry/api'];
  const sdksIn = (s: Set<string>): string[] => [...s].filter((n) => SDKS.includes(n));
  const aiSdk = await importsOf('adapters/ai-sdk.ts');
  expect(sdksIn(aiSdk.runtime)).toEqual([]);
  expect(sdksIn(aiSdk.typeOnly)).toEqual(['ai']);
  const agents = await importsOf('adapters/openai-agents.ts');
  expect(sdksIn(agents.runtime)).toEqual(['@openai/agents']);
  const adapters = await importsOf('adapters/index.ts');
  expect(sdksIn(adapters.runtime)).toEqual([]);
  const root = await importsOf('index.ts');
  expect(sdksIn(root.runtime)).toEqual([]);
});
