/**
 * The systems and execution samples the README carried before issue 13 (now taught by
 * docs/concepts.md and docs/systems-and-borrows.md), kept as an end-to-end check of both
 * system forms and of a pipeline with parallel and loop steps. The classes and tokens are
 * as in examples/systems.ts.
 */
import { loop, parallel, Out, Res, ResMut, res, resMut, Server, system, token, Unit, type SystemContext } from '../../src/index.js';

class AppConfig {
  constructor(readonly agentName: string) {}
}
class ConversationHistory {
  readonly messages: string[] = [];
}
class Scratchpad {
  readonly notes: string[] = [];
  drafts = 0;
}
const WebHits = token<string[]>('WebHits');
const DocHits = token<string[]>('DocHits');
const Answer = token<string>('Answer');

// ---- README "Systems" sample (from `const Summary` on)
const Summary = token<string>('Summary');

// Function form: each parameter's type is inferred from its descriptor.
const summarize = system([Res(AppConfig), Res(ConversationHistory)],
  async (config, history) => `${config.agentName}: ${history.messages.length} messages so far`,
  { name: 'summarize', output: Summary });

// Decorator form: a static method (or a method of an @injectable() class).
class TurnSystems {
  @system()
  static async takeNotes(@res(AppConfig) config: Res<AppConfig>,
                         @resMut(Scratchpad) scratch: ResMut<Scratchpad>) {
    scratch.notes.push(`Turn started for ${config.agentName}`);
  }
}

// ---- the systems the "Execution" sample assumes
const searchWeb = system([Res(ConversationHistory)], async (h) => h.messages.map((m) => `web:${m}`), { name: 'searchWeb', output: WebHits });
const searchDocs = system([Res(ConversationHistory)], async (h) => h.messages.map((m) => `doc:${m}`), { name: 'searchDocs', output: DocHits });
const draft = system([ResMut(Scratchpad), Out(WebHits), Out(DocHits)], (s, web, docs) => {
  s.drafts++;
  s.notes.push(`draft ${s.drafts} from ${web.length + docs.length} hits`);
});
const answer = system([Res(Scratchpad), Out(Summary)], (s, summary) => `${summary} | ${s.notes.join(' / ')}`, { name: 'answer', output: Answer });

async function turnOf(server: Server): Promise<SystemContext> {
  server.insertGlobal(new AppConfig('researcher'));
  server.registerLocal(ConversationHistory);
  await server.finish();
  const agent = server.createContext();
  agent.get(ConversationHistory).messages.push('what is polestar?');
  const turn = agent.child();
  turn.insert(new Scratchpad());
  return turn;
}

test('README: Systems sample (function and decorator form)', async () => {
  const server = new Server();
  const turnCtx = await turnOf(server);

  const text = await turnCtx.run(summarize);   // string, stored under Summary
  await turnCtx.run(TurnSystems.takeNotes);    // undefined, stored under Unit

  expect(text).toBe('researcher: 1 messages so far');
  expect(turnCtx.outputs.get(Summary)).toBe(text);
  expect(turnCtx.outputs.has(Unit)).toBe(true);
  expect(turnCtx.outputs.get(Unit)).toBeUndefined();
  expect(turnCtx.get(Scratchpad).notes).toEqual(['Turn started for researcher']);
  await server.dispose();
});

test('README: Execution sample', async () => {
  const server = new Server();
  const turn = await turnOf(server);

  const result = await turn.execute([
    summarize,
    parallel([searchWeb], [searchDocs]),                       // branches run concurrently
    loop([draft], { until: (c) => c.get(Scratchpad).drafts >= 2, maxIterations: 5 }),
    answer,
  ]);
  /* eslint-disable @typescript-eslint/no-unused-expressions -- the README lists the members as bare expressions */
  result.output(Answer); result.value; result.outputToken; result.hasOutput;
  result.systemsExecuted; result.durationMs; result.runId;
  /* eslint-enable @typescript-eslint/no-unused-expressions */

  expect(result.output(Answer)).toBe('researcher: 1 messages so far | draft 1 from 2 hits / draft 2 from 2 hits');
  expect(result.value).toBe(result.output(Answer));
  expect(result.outputToken).toBe(Answer);
  expect(result.hasOutput).toBe(true);
  expect(result.systemsExecuted).toBe(6); // summarize, two branches, two drafts, answer
  expect(typeof result.durationMs).toBe('number');
  expect(typeof result.runId).toBe('string');
  // the final output was taken; the others stay (execute never clears outputs)
  expect(turn.outputs.has(Answer)).toBe(false);
  expect(turn.outputs.get(Summary)).toBe('researcher: 1 messages so far');
  await server.dispose();
});
