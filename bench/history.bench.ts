/**
 * Long conversations benchmark: does a message cost more when the conversation is long?
 *
 * - `append.<n>`: one `ConversationHistory.append` on a history already holding `n`
 *   messages (100, 1,000, 10,000), ns per append (100 appends timed per round, on a fresh
 *   history each round, so the size stays about `n`);
 * - `append-read.<n>`: the same append followed by a read of `messages` (what a loop that
 *   sends the whole conversation after every message pays);
 * - `build.10000`: appending 10,000 messages to an empty history, ms (linear when append
 *   is amortized O(1), quadratic when each append copies the array);
 * - `turn.<n>`: one `DurableSession.turn` appending one message, on the memory store, to a
 *   session already holding `n` messages, µs;
 * - `resume.10000`: resuming a session of 10,000 messages on the memory store, ms.
 *
 * Figures are min / median over rounds (harness rule 6); the clock only runs around the
 * measured operations (fresh state is built untimed by `timeOnce`'s `prepare`).
 *
 * Run alone: `npm run build:run && node .build/bench/history.bench.js [--quick] [--json]`.
 */
import 'reflect-metadata';
import { AgentsPlugin, ConversationHistory, MemorySessionStore, Server, Sessions, SessionsPlugin, type ChatMessage, type DurableSession } from '../src/index.js';
import { budget, now, timeOnce } from './harness.js';
import { header, printTable, row, withLoad, type BenchReport, type BenchRow } from './report.js';

const SIZES = [100, 1_000, 10_000] as const;
/** Appends timed per round at each size. */
const OPS = 100;

function message(i: number): ChatMessage {
  return i % 2 === 0 ? { role: 'user', content: `message ${i}` } : { role: 'assistant', content: `answer ${i}` };
}

/** A history of `n` messages (built untimed) and `OPS` fresh message objects to append. */
function prepared(n: number): { history: ConversationHistory; next: ChatMessage[] } {
  const history = new ConversationHistory(Array.from({ length: n }, (_, i) => message(i)));
  void history.messages;
  return { history, next: Array.from({ length: OPS }, (_, i) => message(n + i)) };
}

async function historyRows(rounds: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const n of SIZES) {
    const s = await timeOnce(
      rounds,
      () => prepared(n),
      ({ history, next }) => {
        const t0 = now();
        for (const m of next) history.append(m);
        return (now() - t0) / OPS;
      },
    );
    rows.push(row(`append.${n}`, `append to a history of ${n.toLocaleString('en-US')} messages`, 'ns', s));
  }
  for (const n of SIZES) {
    const s = await timeOnce(
      rounds,
      () => prepared(n),
      ({ history, next }) => {
        let sink = 0;
        const t0 = now();
        for (const m of next) {
          history.append(m);
          sink += history.messages.length;
        }
        const dt = (now() - t0) / OPS;
        if (sink === 0) throw new Error('unreachable');
        return dt;
      },
    );
    rows.push(row(`append-read.${n}`, `append, then read messages, at ${n.toLocaleString('en-US')} messages`, 'ns', s));
  }
  const build = await timeOnce(
    Math.max(3, rounds >> 1),
    () => Array.from({ length: 10_000 }, (_, i) => message(i)),
    (msgs) => {
      const t0 = now();
      const h = new ConversationHistory();
      for (const m of msgs) h.append(m);
      const dt = (now() - t0) / 1e6;
      if (h.messages.length !== 10_000) throw new Error('bench: lost messages');
      return dt;
    },
  );
  rows.push(row('build.10000', 'append 10,000 messages to an empty history', 'ms', build));
  return rows;
}

async function sessionRows(rounds: number): Promise<BenchRow[]> {
  const server = new Server().addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: new MemorySessionStore() }));
  await server.finish();
  const sessions = server.createContext().get(Sessions);
  const rows: BenchRow[] = [];
  const turnsPerRound = 20;
  for (const n of SIZES) {
    const id = `turn-${n}`;
    const durable: DurableSession = await sessions.create({ agentId: id, sessionId: id });
    // Reach n messages in turns of up to 1,000 appends (the setup is untimed).
    for (let done = 0; done < n; ) {
      const k = Math.min(1_000, n - done);
      await durable.turn((_c, session) => {
        for (let j = 0; j < k; j++) session.history.append(message(done + j));
      });
      done += k;
    }
    const samples = await timeOnce(
      rounds,
      () => undefined,
      async () => {
        const t0 = now();
        for (let i = 0; i < turnsPerRound; i++) await durable.turn((_c, session) => void session.history.append(message(i)));
        return (now() - t0) / turnsPerRound / 1e3;
      },
    );
    rows.push(row(`turn.${n}`, `durable turn appending 1 message, memory store, at ${n.toLocaleString('en-US')} messages`, 'µs', samples));
    await durable.close();
  }
  // a session of 10,000 messages, resumed
  const big = await sessions.create({ agentId: 'big', sessionId: 'big' });
  for (let t = 0; t < 10; t++) {
    await big.turn((_c, session) => {
      for (let j = 0; j < 1_000; j++) session.history.append(message(t * 1_000 + j));
    });
  }
  await big.close();
  const resume = await timeOnce(
    Math.max(3, rounds >> 1),
    () => undefined,
    async () => {
      const t0 = now();
      const s = await sessions.resume({ agentId: 'big', sessionId: 'big' });
      const dt = (now() - t0) / 1e6;
      if (s.session.history.length !== 10_000) throw new Error(`bench: resumed ${s.session.history.length} messages`);
      await s.close();
      return dt;
    },
  );
  rows.push(row('resume.10000', 'resume a session of 10,000 messages, memory store', 'ms', resume));
  await server.dispose();
  return rows;
}

/** Runs the bench and returns its report. */
export async function run(): Promise<BenchReport> {
  const rounds = budget().rounds;
  return withLoad('long conversations (history)', async () => [...(await historyRows(rounds)), ...(await sessionRows(rounds))]);
}

if (process.argv[1]?.endsWith('history.bench.js')) {
  const report = await run();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ ...header(), reports: [report] }, null, 2));
  } else {
    printTable(report);
    console.log(JSON.stringify({ ...header(), reports: [report] }));
  }
}
