/**
 * Systems example: decorator and function systems, a pipeline with a parallel step and
 * a bounded loop, the ExecutionResult, and a BorrowConflict caught while a system holds
 * a write borrow.
 *
 * Run: `npx tsc -p tsconfig.run.json && node .build/examples/systems.js`
 * (it finishes by itself; `--self-test` is accepted and changes nothing).
 */
import 'reflect-metadata';
import {
  loop,
  Out,
  parallel,
  ParamError,
  Res,
  res,
  ResMut,
  resMut,
  Server,
  system,
  SystemError,
  token,
  tokenName,
  validate,
} from 'polestar-di';

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
const Summary = token<string>('Summary');
const WebHits = token<string[]>('WebHits');
const DocHits = token<string[]>('DocHits');
const Answer = token<string>('Answer');

// --- a decorator system ------------------------------------------------------------
class TurnSystems {
  @system()
  static async takeNotes(@res(AppConfig) config: Res<AppConfig>, @resMut(Scratchpad) scratch: ResMut<Scratchpad>) {
    scratch.notes.push(`Turn started for ${config.agentName}`);
  }
}

// --- function systems (parameter types inferred from the descriptors) ----------------
const summarize = system(
  [Res(AppConfig), Res(ConversationHistory)],
  async (config, history) => `${config.agentName}: ${history.messages.length} messages so far`,
  { name: 'summarize', output: Summary },
);
const searchWeb = system([Res(ConversationHistory)], async (h) => h.messages.map((m) => `web:${m}`), { name: 'searchWeb', output: WebHits });
const searchDocs = system([Res(ConversationHistory)], async (h) => h.messages.map((m) => `doc:${m}`), { name: 'searchDocs', output: DocHits });
const draft = system([ResMut(Scratchpad), Out(WebHits), Out(DocHits)], (s, web, docs) => {
  s.drafts++;
  s.notes.push(`draft ${s.drafts} from ${web.length + docs.length} hits`);
});
const answer = system([Res(Scratchpad), Out(Summary)], (s, summary) => `${summary} | ${s.notes.join(' / ')}`, { name: 'answer', output: Answer });

async function main(): Promise<void> {
  const server = new Server();
  server.insertGlobal(new AppConfig('researcher'));
  server.registerLocal(ConversationHistory);
  await server.finish();

  const agentCtx = server.createContext();
  agentCtx.get(ConversationHistory).messages.push('what is polestar?', 'and inversify?');
  const turn = agentCtx.child();
  turn.insert(new Scratchpad());

  // 1. decorator system
  await turn.run(TurnSystems.takeNotes);
  console.log('takeNotes ->', turn.get(Scratchpad).notes);

  // 2. validate before running: every missing parameter at once
  console.log('validate(answer) on a fresh child ->', validate(answer, turn.child()).map((m) => `${m.access}:${tokenName(m.token)}`));

  // 3. a pipeline: summarize, two searches in parallel branches, a bounded drafting loop, answer
  const result = await turn.execute([
    summarize,
    parallel([searchWeb], [searchDocs]),
    loop([draft], { until: (c) => c.get(Scratchpad).drafts >= 2, maxIterations: 5 }),
    answer,
  ]);
  console.log('ExecutionResult:', {
    runId: result.runId,
    systemsExecuted: result.systemsExecuted,
    durationMs: Number(result.durationMs.toFixed(2)),
    hasOutput: result.hasOutput,
    answer: result.output(Answer),
  });
  console.log('outputs left on the turn (execute never clears them):', [...turn.outputs.entries()].map(([t]) => tokenName(t)));

  // 4. a BorrowConflict: a system holds ResMut<Scratchpad> across an await, another reads it
  let release!: () => void;
  const holding = turn.run(system([ResMut(Scratchpad)], async (s) => {
    s.notes.push('long edit started');
    await new Promise<void>((r) => (release = r));
    s.notes.push('long edit done');
  }, { name: 'longEdit' }));
  try {
    await turn.run(system([Res(Scratchpad)], (s) => s.notes.length, { name: 'peek' }));
  } catch (err) {
    if (err instanceof SystemError && err.cause instanceof ParamError && err.cause.kind === 'BorrowConflict') {
      console.log('caught:', err.message);
    } else throw err;
  }
  release();
  await holding;
  console.log('after the writer settled, peek sees', await turn.run(system([Res(Scratchpad)], (s) => s.notes.length, { name: 'peek' })), 'notes');

  // 5. a loop that never ends fails with a SystemError instead of spinning forever
  const never = await turn.execute([loop([draft], { until: () => false, maxIterations: 3 })]).catch((e: unknown) => e);
  console.log('runaway loop ->', (never as Error).message.split(';')[0]);

  await server.dispose();
  console.log('disposed; live contexts:', server.liveContexts);
}

await main();
