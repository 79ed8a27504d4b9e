/**
 * `node .build/examples/agent-service.js --self-test` (`npm run demo`): two service processes
 * on one store, driven over HTTP the way a load balancer without sticky routing would.
 *
 * 1. Several conversations at once, each message sent to the other process than the one
 *    before (so every message but the first is a handoff), then two messages to the holder
 *    (served live).
 * 2. A retried message (same `messageId`) through the other process: answered as a duplicate.
 * 3. A burst: two messages of one conversation sent at the same moment, one to each process.
 * 4. A slow turn cancelled through the process that does not run it: `TURN_CANCELLED`.
 * 5. A process killed with SIGKILL mid-turn and restarted with the same owner id: it serves
 *    its conversations again at once (no wait for its old leases to expire).
 * 6. Every stored history: each message that was answered exactly once, in order; nothing
 *    of the cancelled or the killed turn.
 *
 * It prints what each request added over the model call (the service measures both) for a
 * conversation served live, after a handoff and after a restart, and resolves `true` when
 * every check passed. The store is an SQLite file in a temporary directory, or, given a
 * PostgreSQL URL, a temporary database created on that server and dropped at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of {@link runSelfTest}. */
export interface SelfTestOptions {
  /** The compiled service script to start as the two processes. */
  readonly entry: string;
  /** A PostgreSQL URL to create the temporary database on; an SQLite file when omitted. */
  readonly pg?: string;
  /** Where the report goes (console.log by default). */
  readonly print?: (line: string) => void;
}

/** A service child process. */
interface Proc {
  readonly name: string;
  readonly owner: string;
  readonly url: string;
  readonly child: ChildProcess;
}

/** What the service answers (the fields the self-test reads). */
interface Answer {
  status: number;
  json: any;
}

/** How a request is expected to find its conversation. */
type Path = 'created' | 'live' | 'handoff' | 'restart';

const SCRIPT = ['What is the weather in Oslo?', 'calculate 6*7', 'remember "window seat"', 'hello again', 'remember "no onions"', 'calculate (2+3)*4'];

/** Runs the two-process self-test; resolves `true` when every check passed. */
export async function runSelfTest(options: SelfTestOptions): Promise<boolean> {
  const print = options.print ?? ((line: string) => console.log(line));
  const started = performance.now();
  const failures: string[] = [];
  const check = (what: string, ok: boolean): void => {
    print(`${ok ? '  ok  ' : '  FAIL'} ${what}`);
    if (!ok) failures.push(what);
  };

  const store = options.pg !== undefined ? await temporaryDatabase(options.pg) : temporarySqliteFile();
  print(`store: ${store.describe}`);
  const procs: Proc[] = [];
  const watchdog = setTimeout(() => {
    print('self-test timed out after 120 s');
    for (const p of procs) p.child.kill('SIGKILL');
    process.exit(1);
  }, 120_000);
  watchdog.unref();
  try {
    const [a, b] = [await startProcess(options.entry, 'A', 'service-a', store.args), await startProcess(options.entry, 'B', 'service-b', store.args)];
    procs.push(a, b);
    for (const p of procs) print(`process ${p.name} (owner ${p.owner}, pid ${p.child.pid}) on ${p.url}`);
    const other = (p: Proc): Proc => (p.owner === a.owner ? b : a);

    /** The user messages each conversation should hold, in order. */
    const expected = new Map<string, string[]>();
    /** Which process holds each conversation after its last answered message. */
    const holder = new Map<string, Proc>();
    /** Each conversation's last answered message, to retry it. */
    const last = new Map<string, { text: string; messageId: string }>();
    const overhead: Record<Path, number[]> = { created: [], live: [], handoff: [], restart: [] };
    let seq = 0;

    /** Sends one message and checks it was served the expected way. */
    const send = async (p: Proc, conv: string, text: string, path: Path | undefined, messageId = `msg-${++seq}`): Promise<Answer> => {
      const r = await post(p, `/conversations/${conv}/messages`, { text, messageId });
      const served = r.json.served as string | undefined;
      const t = r.json.timing as { overheadMs: number; modelMs: number } | undefined;
      print(`  ${p.name} ${conv} ${JSON.stringify(text)} -> ${r.status} ${r.json.duplicate ? 'duplicate' : (served ?? r.json.error?.code)}${t ? ` (+${t.overheadMs} ms over a ${t.modelMs} ms model call)` : ''}`);
      if (r.status === 200 && r.json.duplicate !== true) {
        expected.set(conv, [...(expected.get(conv) ?? []), text]);
        holder.set(conv, p);
        last.set(conv, { text, messageId });
        if (path !== undefined && t !== undefined) overhead[path].push(t.overheadMs);
        if (path !== undefined) check(`${conv} "${text}" through ${p.name}: served ${path}`, served === (path === 'handoff' || path === 'restart' ? 'resumed' : path));
      } else if (path !== undefined) {
        check(`${conv} "${text}" through ${p.name}: answered (got ${r.status} ${JSON.stringify(r.json.error ?? r.json)})`, false);
      }
      return r;
    };

    // 1. Several conversations at once, each alternating between the processes, then live.
    print('\n1. four conversations at once, each message to the other process (no sticky routing), then two to the holder');
    const convs = ['c1', 'c2', 'c3', 'c4'];
    await Promise.all(
      convs.map(async (conv, ci) => {
        for (let i = 0; i < SCRIPT.length; i++) {
          const r = await send(procs[(ci + i) % 2], conv, `[${conv} #${i + 1}] ${SCRIPT[i]}`, i === 0 ? 'created' : 'handoff');
          if (i === 4) check(`${conv}: the notes moved with the conversation`, r.json.toolCalls?.[0]?.content === 'noted (2 note(s): window seat; no onions)');
        }
        for (let i = 0; i < 2; i++) await send(holder.get(conv) ?? a, conv, `[${conv} live ${i + 1}] calculate ${ci}+${i}`, 'live');
      }),
    );

    // 2. A retry of an answered message, through the other process.
    print('\n2. the last message of c1 sent again (same messageId) through the other process');
    const retried = last.get('c1') ?? { text: '', messageId: '' };
    const retry = await send(other(holder.get('c1') ?? a), 'c1', retried.text, undefined, retried.messageId);
    check('the retried message is answered as a duplicate, not run again', retry.status === 200 && retry.json.duplicate === true);

    // 3. A burst: one conversation, two messages at the same moment, one to each process.
    print('\n3. c5: three bursts of two messages at the same moment, one to each process');
    for (let round = 1; round <= 3; round++) {
      const answers = await Promise.all([a, b].map((p) => send(p, 'c5', `[c5 burst ${round}] hello from ${p.name}`, undefined)));
      check(`burst ${round}: both messages answered`, answers.every((r) => r.status === 200));
    }

    // 4. Cancel a slow turn through the process that does not run it.
    print('\n4. a slow turn on c2, cancelled through the other process');
    const runner = holder.get('c2') ?? a;
    const slow = post(runner, '/conversations/c2/messages', { text: '[c2] please be slow', messageId: `msg-${++seq}` });
    let cancelled = false;
    for (let i = 0; i < 100 && !cancelled; i++) {
      await new Promise((r) => setTimeout(r, 50));
      cancelled = (await post(other(runner), '/conversations/c2/cancel', { reason: 'the user pressed stop' })).json.cancelled === true;
    }
    const cancelledAt = performance.now();
    check(`cancel through ${other(runner).name} found the turn running in ${runner.name}`, cancelled);
    const slowAnswer = await slow;
    const cancelMs = Math.round(performance.now() - cancelledAt);
    print(`  ${runner.name} c2 "[c2] please be slow" -> ${slowAnswer.status} ${JSON.stringify(slowAnswer.json.error ?? slowAnswer.json)} (${cancelMs} ms after the cancel)`);
    check('the slow request got 409 TURN_CANCELLED with the reason', slowAnswer.status === 409 && slowAnswer.json.error?.code === 'TURN_CANCELLED' && slowAnswer.json.error?.reason === 'the user pressed stop');
    await send(other(runner), 'c2', '[c2] after the cancel: calculate 1+1', 'handoff');

    // 5. Kill a process mid-turn (SIGKILL) and restart it with the same owner id.
    const victim = a;
    const held = [...holder].filter(([, p]) => p === victim).map(([conv]) => conv);
    print(`\n5. process ${victim.name} killed (SIGKILL) mid-turn while it holds ${held.join(', ')}; restarted with owner ${victim.owner}`);
    check(`${victim.name} holds conversations when it is killed`, held.length > 0);
    const doomed = post(victim, `/conversations/${held[0]}/messages`, { text: `[${held[0]}] slow, and the process dies`, messageId: `msg-${++seq}` }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 300));
    await stopProcess(victim, 'SIGKILL');
    check('the request in flight on the killed process got no answer', (await doomed) instanceof Error);
    const revived = await startProcess(options.entry, 'A2', victim.owner, store.args);
    procs.splice(procs.indexOf(victim), 1, revived);
    print(`process A2 (owner ${revived.owner}, pid ${revived.child.pid}) on ${revived.url}`);
    for (const conv of held) {
      const r = await send(revived, conv, `[${conv}] back after the restart: weather in Rome?`, 'restart');
      check(`${conv}: served at once after the restart (${r.json.timing?.openMs} ms to open, not the 30 s lease)`, r.status === 200 && r.json.timing?.openMs < 5_000);
    }
    for (const conv of held) await send(b, conv, `[${conv}] and then through B again`, 'handoff');

    // 6. Every stored history, read from the store through B.
    print('\n6. the stored histories');
    for (const conv of [...convs, 'c5']) {
      const r = await get(b, `/conversations/${conv}`);
      const messages = (r.json.messages ?? []) as { role: string; content: string }[];
      const users = messages.map((m, i) => [m, i] as const).filter(([m]) => m.role === 'user');
      const wellFormed = users.every(([, i]) => messages[i + 1]?.role === 'assistant');
      const texts = users.map(([m]) => m.content);
      const want = expected.get(conv) ?? [];
      const same = conv === 'c5' ? [...texts].sort().join('\n') === [...want].sort().join('\n') : texts.join('\n') === want.join('\n');
      check(`${conv}: ${want.length} messages stored exactly once${conv === 'c5' ? '' : ', in order'}, each answered (${messages.length} history entries)`, r.status === 200 && same && wellFormed);
    }

    // The latency report.
    print("\nwhat each request added over the model call (ms, measured in the service: the request's time minus the model's)");
    for (const path of ['created', 'live', 'handoff', 'restart'] as const) print(`  ${path.padEnd(8)} ${stats(overhead[path])}`);
    print(`  a cancel through the other process ended the turn ${cancelMs} ms after cancel() answered true`);
    print('  (a handoff waits for the holder to see the request, then for the waiter to see the release: where the store');
    print('   polls, each is up to pollMs, 250 ms by default; the service takes --poll-ms)');

    for (const p of [...procs]) {
      const code = await stopProcess(p, 'SIGTERM');
      check(`process ${p.name} stops cleanly on SIGTERM (exit code ${code})`, code === 0);
      procs.splice(procs.indexOf(p), 1);
    }
  } catch (err) {
    failures.push(`the self-test threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    clearTimeout(watchdog);
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await store.remove();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (failures.length > 0) {
    print(`\nself-test FAILED in ${seconds} s:\n- ${failures.join('\n- ')}`);
    return false;
  }
  print(`\nself-test passed in ${seconds} s: two processes served every message once, handed conversations over, cancelled across processes and survived a SIGKILL`);
  return true;
}

// ------------------------------------------------------------------ processes and requests

/** Starts the service script as a child process; resolves once it prints its URL. */
function startProcess(entry: string, name: string, owner: string, storeArgs: readonly string[]): Promise<Proc> {
  const child = spawn(process.execPath, [entry, '--owner', owner, ...storeArgs, '--quiet'], {
    env: { ...process.env, AGENT_SERVICE_PORT: '0', POLESTAR_PG_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve({ name, owner, url: m[1], child });
    });
    child.once('exit', (code) => reject(new Error(`service process ${name} exited early (${code}): ${out}`)));
  });
}

/** Sends `signal` to a child and resolves with its exit code once it has exited. */
function stopProcess(p: Proc, signal: NodeJS.Signals): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return Promise.resolve(p.child.exitCode);
  const exited = new Promise<number | null>((resolve) => p.child.once('exit', (code) => resolve(code)));
  p.child.kill(signal);
  return exited;
}

async function post(p: Proc, path: string, body: unknown): Promise<Answer> {
  const res = await fetch(p.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  return { status: res.status, json: await res.json() };
}

async function get(p: Proc, path: string): Promise<Answer> {
  const res = await fetch(p.url + path, { signal: AbortSignal.timeout(20_000) });
  return { status: res.status, json: await res.json() };
}

/** `n=…  min …  median …  max …` of a list of milliseconds. */
function stats(ms: readonly number[]): string {
  if (ms.length === 0) return 'n=0';
  const s = [...ms].sort((x, y) => x - y);
  const median = s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  const f = (x: number): string => x.toFixed(1).padStart(7);
  return `n=${String(s.length).padEnd(3)} min ${f(s[0])}  median ${f(median)}  max ${f(s[s.length - 1])}`;
}

// ------------------------------------------------------------------ the temporary store

interface TemporaryStore {
  /** The service's command-line arguments naming it. */
  readonly args: readonly string[];
  readonly describe: string;
  remove(): Promise<void>;
}

function temporarySqliteFile(): TemporaryStore {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-agent-service-'));
  const file = join(dir, 'conversations.db');
  return { args: ['--db', file], describe: `SQLite file ${file}`, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** What the self-test uses of a `pg.Client`. */
interface AdminClient {
  connect(): Promise<unknown>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
}

/** A fresh database on the server of `adminUrl`, dropped (with its connections) by `remove`. */
async function temporaryDatabase(adminUrl: string): Promise<TemporaryStore> {
  const name = `polestar_service_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string): Promise<void> => {
    // pg is only needed with --pg (an optional peer): loaded then, typed by what is used.
    const pg = (await import('pg' as string)) as { default: { Client: new (o: { connectionString: string }) => AdminClient } };
    const client = new pg.default.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    args: ['--pg', url.toString()],
    describe: `PostgreSQL database ${name} (temporary)`,
    remove: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
