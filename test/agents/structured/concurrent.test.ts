/**
 * Structured results from subagents, end to end: two concurrent tasks in one process, one
 * with a JSON Schema 2020-12 `output` and one with a zod 4 schema, each driven by the AI
 * SDK's `generateText` loop over `MockLanguageModelV3`. Each subagent is shown only its own
 * capture tool (same name, its own schema) and its own instruction, the loop stops at the
 * capture (`taskStopped`), and each task resolves with its own value.
 */
import { generateText, stepCountIs } from 'ai';
import { z } from 'zod';
import { Agents, Prompts, Tools, type StandardJsonSchema } from '../../../src/index.js';
import { prepareTurn } from '../../../src/adapters/index.js';
import { taskStopped, toAiSdkTools } from '../../../src/adapters/ai-sdk.js';
import { assertNoLeaks } from '../../../src/testing/index.js';
import { call, scripted, structuredServer, systemOf, text, toolNamesOf, type CallOptions } from './helpers.js';

const Article = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' } },
  required: ['title', 'body'],
  additionalProperties: false,
} as const;
const Score = z.object({ score: z.number().int().min(0).max(10), why: z.string() });

test('two concurrent tasks with different schemas each see only their own capture tool and instruction, and resolve with their own value', async () => {
  const server = await structuredServer();
  const app = server.createContext();
  app.get(Tools).register({ name: 'search', description: 'Searches', parameters: { type: 'object' }, execute: () => 'hits' });
  app.get(Prompts).section({ name: 'persona', order: 0, text: 'You are careful.' });
  const agents = app.get(Agents);
  const { agent: lead } = await agents.create({ id: 'lead' });

  // both models are asked once before either answers, so the tasks overlap
  let asked = 0;
  let release!: () => void;
  const bothAsked = new Promise<void>((r) => (release = r));
  const barrier = async (): Promise<void> => {
    if (++asked === 2) release();
    await bothAsked;
  };
  const writer = scripted([[text('Here it is.'), call('w1', 'structured_output', { title: 'Tides', body: 'The moon pulls the sea.' })], [text('never asked')]], barrier);
  const scorer = scripted([[call('s1', 'structured_output', { score: 7, why: 'clear' })], [text('never asked')]], barrier);

  const drive = (model: typeof writer.model) => async (agent: { ctx: import('../../../src/index.js').SystemContext }, task: { readonly stopped: boolean }) => {
    const turn = await prepareTurn(agent.ctx);
    const out = await generateText({
      model,
      system: turn.system,
      prompt: 'Do your task.',
      tools: toAiSdkTools(agent.ctx.get(Tools), { shown: turn.assembly }),
      stopWhen: [taskStopped(task), stepCountIs(5)],
    });
    return { steps: out.steps.length, stoppedInFn: task.stopped };
  };
  const [a, b] = await Promise.all([
    agents.runTask<{ title: string; body: string }, { steps: number; stoppedInFn: boolean }>({ parent: lead, output: Article, fn: drive(writer.model) }),
    agents.runTask({ parent: lead, output: { schema: Score, instruction: 'Score the draft, then call structured_output once.' }, fn: drive(scorer.model) }),
  ]);

  expect(a).toEqual({ value: { title: 'Tides', body: 'The moon pulls the sea.' }, result: { steps: 1, stoppedInFn: true } });
  expect(b).toEqual({ value: { score: 7, why: 'clear' }, result: { steps: 1, stoppedInFn: true } });
  const score: number = b.value.score; // the zod schema's input type
  expect(score).toBe(7);
  expect(Object.isFrozen(a.value)).toBe(true);
  expect(Object.isFrozen(b.value)).toBe(true);

  // each model was asked once (the loop stopped at the capture) and saw its own world
  expect(writer.seen).toHaveLength(1);
  expect(scorer.seen).toHaveLength(1);
  const [w, s] = [writer.seen[0] as CallOptions, scorer.seen[0] as CallOptions];
  expect(toolNamesOf(w)).toEqual(['search', 'structured_output']);
  expect(toolNamesOf(s)).toEqual(['search', 'structured_output']);
  const params = (o: CallOptions) => {
    const t = (o.tools ?? []).find((x) => x.name === 'structured_output');
    return t?.type === 'function' ? (t.inputSchema as Record<string, unknown>) : undefined;
  };
  expect(params(w)).toEqual(Article);
  expect(params(s)).toMatchObject({ type: 'object', properties: { score: { type: 'integer', minimum: 0, maximum: 10 }, why: { type: 'string' } } });
  expect(systemOf(w)).toMatch(/^You are careful\.\n\nWhen you have your final answer, call the tool "structured_output" exactly once/);
  expect(systemOf(w)).not.toContain('Score the draft');
  expect(systemOf(s)).toBe('You are careful.\n\nScore the draft, then call structured_output once.');

  // nothing of either task is left: no global placeholder, no scoped registration
  expect(app.get(Tools).knownNames()).toEqual(['search']);
  expect((await app.get(Prompts).assemble()).sections.map((x) => x.name)).toEqual(['persona']);
  await server.dispose();
  assertNoLeaks(server);
});

test('the zod and JSON Schema values are typed and checked by the same ajv path as any tool', async () => {
  const server = await structuredServer({ defaultDialect: '2020-12' });
  const agents = server.createContext().get(Agents);
  const schema: StandardJsonSchema<{ n: number }> = z.object({ n: z.number() });
  const out = await agents.runTask({
    output: schema,
    fn: async (agent) => {
      const bad = await agent.ctx.get(Tools).execute({ callId: 'c1', name: 'structured_output', arguments: { n: 'one' } });
      expect(bad.error?.code).toBe('INVALID_ARGS');
      const good = await agent.ctx.get(Tools).execute({ callId: 'c1', name: 'structured_output', arguments: { n: 1 } });
      expect(good.isError).toBe(false);
      return 'done';
    },
  });
  const n: number = out.value.n;
  expect(n).toBe(1);
  expect(out.result).toBe('done');
  await server.dispose();
});
