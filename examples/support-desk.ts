/**
 * Support desk: a triage agent delegates to its billing and tech subagents through one
 * global `delegate` tool whose body reads the calling turn (its agent, its conversation).
 *
 * - one shared fake model (a few rules per agent, no network), a global;
 * - per-agent memory (`registerLocal(Memory, ..., { per: 'agent' })`), and triage's case
 *   file, which a parent filter keeps from the subagents;
 * - sessions: the customer talks to triage; each delegation is a session of a subagent;
 * - an approval policy: a refund over $100 asks the supervisor, who approves up to $300;
 * - a conversation closed mid-turn leaves nothing running;
 * - `--trace`: OpenTelemetry spans of every turn and tool call (`polestar-di/otel`), printed
 *   as a tree: each delegation's subagent turn nests under the `delegate` call that made it.
 *
 * Run: `npm run build:run && node .build/examples/support-desk.js [--self-test] [--trace]`
 */
import assert from 'node:assert/strict';
import {
  Agent, Agents, AgentsPlugin, Approval, ConversationHistory, Events, ParamError, ParentFilter, Server, Tools, ToolsPlugin, openSession, token,
  type ChatMessage, type JsonObject, type Session,
} from 'polestar-di';
import { assertNoLeaks } from 'polestar-di/testing';
import { startTracing } from './support/trace.js';

type Step = { reply: string } | { call: string; args: JsonObject };
/** What the desk needs from a language model: the next step of an agent's conversation. */
interface Model {
  next(agent: string, history: readonly ChatMessage[]): Promise<Step>;
}
const Model = token<Model>('Model');

/** What one agent remembers; every agent gets its own. */
class Memory {
  readonly notes: string[] = [];
}
/** Triage's private notes about the customer; the subagents must not read them. */
class CaseFile {
  constructor(readonly flags: string[]) {}
}

/** The shared fake model: each agent's behaviour as a few rules over the last message. */
const fakeModel: Model = {
  async next(agent, history): Promise<Step> {
    const last = history.at(-1);
    if (last?.role === 'tool') return { reply: `[${agent}] ${last.content}` };
    const text = last?.content ?? '';
    const refund = /refund (\S+) \$(\d+)/.exec(text);
    if (agent === 'triage' && refund) return { call: 'delegate', args: { to: 'billing' } };
    if (agent === 'triage' && /router|internet/.test(text)) return { call: 'delegate', args: { to: 'tech' } };
    if (agent === 'billing' && refund) return { call: 'refund', args: { order: refund[1], amount: Number(refund[2]) } };
    if (agent === 'tech' && /router/.test(text)) return { call: 'restart_router', args: {} };
    if (agent === 'tech') return { call: 'run_diagnostics', args: {} };
    return { reply: `[${agent}] How can I help?` };
  },
};

/** One user message to a session: a turn that runs the model until it replies. */
async function ask(session: Session, text: string): Promise<string> {
  return session.turn(async (turn) => {
    session.history.append({ role: 'user', content: text });
    const agent = turn.get(Agent);
    for (let step = 0; step < 5; step++) {
      const next = await turn.get(Model).next(agent.id, session.history.messages);
      if ('reply' in next) {
        session.history.append({ role: 'assistant', content: next.reply });
        return next.reply;
      }
      const callId = `${agent.id}-${session.history.length}`;
      session.history.append({ role: 'assistant', content: '', toolCalls: [{ callId, name: next.call, arguments: next.args }] });
      const result = await turn.get(Tools).execute({ callId, name: next.call, arguments: next.args });
      session.history.append({ role: 'tool', callId, content: result.content, isError: result.isError });
    }
    throw new Error(`${agent.id} did not reply within 5 steps`);
  });
}

// ------------------------------------------------------------------ the desk

const audit: string[] = [];
const supervisor: Approval = {
  // ctx is the calling context: the turn of the agent whose call needs approval
  approve: (execution, reason, ctx) => {
    const granted = (execution.arguments as { amount: number }).amount <= 300;
    audit.push(`${ctx.get(Agent).id}: ${reason} ${granted ? 'approved' : 'refused'}`);
    return granted;
  },
};

// --trace: spans of every turn and tool call, kept in memory and printed at the end
const tracing = process.argv.includes('--trace') ? startTracing() : undefined;

const server = new Server().addPlugins(new ToolsPlugin(), new AgentsPlugin());
server.insertGlobal(Model, fakeModel);
server.insertGlobal(Approval, supervisor);
server.registerLocal(Memory, () => new Memory(), { per: 'agent' });
await server.finish();
const app = server.createContext();

// A global tool: every agent sees it, and its body works for whichever agent calls it.
app.get(Tools).register({
  name: 'delegate',
  description: 'Hand the conversation to one of your subagents',
  parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
  execute: async (args: { to: string }, execution, ctx) => {
    const caller = ctx.get(Agent); // the agent whose turn called the tool
    const sub = ctx.get(Agents).get(args.to);
    if (sub?.parent !== caller) return `${caller.id} has no subagent "${args.to}"`;
    const request = ctx.get(ConversationHistory).messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    await caller.ctx.withMut(Memory, (memory) => memory.notes.push(`delegated to ${sub.id}`));
    const session = openSession(sub); // a conversation of the subagent, for this request only
    const hangUp = () => void session.dispose();
    execution.signal.addEventListener('abort', hangUp, { once: true }); // the caller's turn ended
    try {
      return await ask(session, request);
    } finally {
      execution.signal.removeEventListener('abort', hangUp);
      await session.dispose();
    }
  },
});

// Refunds over $100 need the supervisor.
app.get(Events).on('tools/pre-execute', (decision, execution) => {
  const amount = (execution.arguments as { amount?: number }).amount ?? 0;
  return execution.name === 'refund' && amount > 100 ? { kind: 'ask', reason: `refund of $${amount}` } : decision;
});

const agents = app.get(Agents);
const triage = (await agents.create({ id: 'triage' })).agent;
triage.ctx.insert(new CaseFile(['customer 4711 is under fraud investigation']));
const privateParent = ParentFilter.allowOnly([]); // a subagent reads nothing its parent holds

const billing = (await agents.create({ id: 'billing', parent: triage, parentFilter: privateParent, setup: (ctx) => {
  ctx.get(Tools).register({
    name: 'refund',
    description: 'Refund an order',
    parameters: { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number' } }, required: ['order', 'amount'] },
    execute: async (args: { order: string; amount: number }, _execution, turn) => {
      await turn.get(Agent).ctx.withMut(Memory, (memory) => memory.notes.push(`refunded ${args.order} $${args.amount}`));
      return `refunded $${args.amount} for ${args.order}`;
    },
  });
} })).agent;

let diagnosticsRunning = 0;
let diagnosticsStarted!: () => void;
const started = new Promise<void>((resolve) => (diagnosticsStarted = resolve));
const tech = (await agents.create({ id: 'tech', parent: triage, parentFilter: privateParent, setup: (ctx) => {
  ctx.get(Tools).register({
    name: 'restart_router',
    description: "Restart the customer's router",
    parameters: { type: 'object' },
    execute: (_args, _execution, turn) => turn.get(Agent).ctx.withMut(Memory, (memory) => memory.notes.push('restarted router')).then(() => 'router restarted'),
  });
  ctx.get(Tools).register({
    name: 'run_diagnostics',
    description: 'Check the line (takes minutes)',
    parameters: { type: 'object' },
    execute: (_args, execution) => new Promise<string>((resolve, reject) => {
      diagnosticsRunning++;
      diagnosticsStarted();
      const done = setTimeout(() => resolve('the line is fine'), 600_000);
      execution.signal.addEventListener('abort', () => (clearTimeout(done), reject(execution.signal.reason)), { once: true });
    }).finally(() => diagnosticsRunning--),
  });
} })).agent;

// ------------------------------------------------------------------ a conversation

const chat = openSession(triage);
const transcript: string[] = [];
for (const message of ['Hello', 'Please refund A-1 $40', 'Please refund A-2 $250', 'Please refund A-3 $900', 'My router is down']) {
  transcript.push(`customer: ${message}`, `desk:     ${await ask(chat, message)}`);
}
if (!process.argv.includes('--self-test')) console.log(transcript.join('\n'));

assert.deepEqual(transcript.filter((_, i) => i % 2 === 1), [
  'desk:     [triage] How can I help?',
  'desk:     [triage] [billing] refunded $40 for A-1',
  'desk:     [triage] [billing] refunded $250 for A-2',
  'desk:     [triage] [billing] Error: not approved: refund of $900',
  'desk:     [triage] [tech] router restarted',
]);
assert.deepEqual(audit, ['billing: refund of $250 approved', 'billing: refund of $900 refused']);
assert.deepEqual(billing.ctx.get(Memory).notes, ['refunded A-1 $40', 'refunded A-2 $250']);
assert.deepEqual(tech.ctx.get(Memory).notes, ['restarted router']);
assert.deepEqual(triage.ctx.get(Memory).notes, ['delegated to billing', 'delegated to billing', 'delegated to billing', 'delegated to tech']);
assert.throws(() => billing.ctx.get(CaseFile), (e) => e instanceof ParamError && e.kind === 'ResourceOutOfScope');

// ------------------------------------------------------------------ hanging up mid-turn

const call = openSession(triage);
const pending = ask(call, 'My internet is slow');
await started; // tech is running diagnostics for this conversation
assert.equal(diagnosticsRunning, 1);
await call.dispose(); // the customer hangs up: aborts the delegation, which hangs up tech's session
await assert.rejects(pending);
assert.equal(diagnosticsRunning, 0); // a resolved dispose() means nothing is still running

await chat.dispose();
await app.dispose();
assertNoLeaks(server); // every agent, session, turn and registration is gone
await server.dispose();

// ------------------------------------------------------------------ the span tree (--trace)

if (tracing) {
  const spans = tracing.spans();
  const named = (name: string) => spans.filter((s) => s.name === name);
  const parentName = (span: (typeof spans)[number]) => spans.find((p) => p.spanContext().spanId === span.parentSpanContext?.spanId)?.name;
  assert.equal(named('invoke_agent triage').length, 6); // five messages and the call hung up
  // each subagent turn runs inside the delegate call that made it, each refund inside billing's turn
  for (const sub of [...named('invoke_agent billing'), ...named('invoke_agent tech')]) assert.equal(parentName(sub), 'execute_tool delegate');
  for (const delegate of named('execute_tool delegate')) assert.equal(parentName(delegate), 'invoke_agent triage');
  const refunds = named('execute_tool refund');
  assert.equal(refunds.length, 3);
  for (const refund of refunds) assert.equal(parentName(refund), 'invoke_agent billing');
  assert.deepEqual(refunds.map((r) => r.attributes['error.type'] ?? 'ok'), ['ok', 'ok', 'DENIED']); // $900 was refused
  console.log(`\n${tracing.tree({ durations: !process.argv.includes('--self-test') })}`);
  await tracing.stop();
}
console.log('support desk: ok');
