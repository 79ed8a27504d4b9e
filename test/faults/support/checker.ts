/**
 * The fault suite's checker: reads the store through the public API (a fresh server:
 * `sessions.list`, `resume`, the history, `events`, `checkpoints`) and compares it with what
 * the workers logged (turn-worker.mjs), then counts what must be 0:
 *
 * - `lost`: a message whose turn the worker saw resolve (or resolved `'committed'` after
 *   `COMMIT_UNKNOWN`) that is not in the committed history;
 * - `doubled`: a message id more than once in the history, or a turn holding more than one
 *   message pair (one attempt committed twice);
 * - `failedButCommitted`: a try the worker saw rejected (with anything but a `COMMIT_UNKNOWN`
 *   left unresolved) whose message is in the history anyway, not as the acknowledged retry;
 * - `crashed`: a worker that did not exit 0 and was not ended by the signal the test sent;
 * - `unresumable`: a session a fresh server could not resume, or whose events or
 *   checkpoints could not be read;
 * - `inconsistent`: the store disagreeing with itself or with an acknowledgement (the
 *   persisted counter local ≠ `committedTurn`, turns not numbered 1…n, a message stored
 *   under another turn than the one its `turn()` reported, no checkpoint of the last turn);
 * - `overlaps`: two workers holding one session's lease at the same time (one's hold, from
 *   its resume to its close, or to the last turn it saw commit when a turn was rejected
 *   meanwhile, intersects another's).
 */
import { readFileSync, existsSync } from 'node:fs';
import { AgentsPlugin, Server, Sessions, SessionsPlugin, type LocalSerializer, type SessionStore } from '../../../src/index.js';
import type { ProcessEnd } from './procs.js';

/** The workers' persisted counter (same key as in turn-worker.mjs). */
export class Counter {
  n = 0;
}
/** Its serializer (key `faults.counter`, agent scope). */
export const counterSerializer: LocalSerializer<Counter> = {
  key: 'faults.counter',
  version: 1,
  scope: 'agent',
  serialize: (c) => ({ n: c.n }),
  deserialize: (j) => Object.assign(new Counter(), { n: (j as { n: number }).n }),
};

/** What the checker counts; every field but the informative ones must be 0. */
export interface FaultCounts {
  lost: number;
  doubled: number;
  failedButCommitted: number;
  crashed: number;
  unresumable: number;
  inconsistent: number;
  overlaps: number;
}

/** The checker's result. */
export interface CheckReport {
  readonly counts: FaultCounts;
  /** Turns acknowledged (resolved, or resolved 'committed' after COMMIT_UNKNOWN). */
  readonly acked: number;
  /** Rejections seen by the workers, by code. */
  readonly rejections: Readonly<Record<string, number>>;
  /** Tries whose outcome stayed unknown (COMMIT_UNKNOWN not resolved, or a process killed in the turn). */
  readonly unknown: number;
  /** Committed turns in the store, over all sessions. */
  readonly committedTurns: number;
  /** One line per problem found. */
  readonly problems: readonly string[];
  /** The one-line summary the scenario prints. */
  readonly line: string;
}

type Line = Record<string, unknown> & { t: string; sid?: string; mid?: string; try?: number };

/** Reads a worker log; a torn last line (a kill -9 mid-write) is ignored. */
export function readLog(path: string): Line[] {
  if (!existsSync(path)) return [];
  const out: Line[] = [];
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    try {
      out.push(JSON.parse(text) as Line);
    } catch {
      // a torn final line
    }
  }
  return out;
}

/** What the checker reads. */
export interface CheckInput {
  /** A scenario name for the summary line. */
  readonly scenario: string;
  /** The store (any store object on the same backend as the workers'). */
  readonly store: SessionStore;
  /** The sessions the workers drove. */
  readonly sessions: readonly { readonly sessionId: string; readonly agentId: string }[];
  /** Every worker log file of the scenario. */
  readonly logs: readonly string[];
  /** How every worker process ended. */
  readonly ends: readonly ProcessEnd[];
  /** The workers' lease TTL: a live lease of a dead worker is waited out (up to 3 TTLs + 5 s). */
  readonly ttlMs: number;
}

const isCrash = (e: ProcessEnd): boolean => !((e.code === 0 && e.signal === null) || (e.signal !== null && e.signal === e.expectedSignal && !e.capped));

/** Resumes with a fresh server (waiting out live leases), reads everything, compares with the logs. */
export async function check(input: CheckInput): Promise<CheckReport> {
  const counts: FaultCounts = { lost: 0, doubled: 0, failedButCommitted: 0, crashed: 0, unresumable: 0, inconsistent: 0, overlaps: 0 };
  const problems: string[] = [];
  const rejections: Record<string, number> = {};
  let unknown = 0;
  let acked = 0;
  let committedTurns = 0;

  for (const e of input.ends) {
    if (isCrash(e)) {
      counts.crashed++;
      problems.push(`crashed: ${e.name} ended with code ${e.code}, signal ${e.signal}${e.capped ? ' (killed by the wall-clock cap)' : ''}; stderr: ${e.stderr.slice(0, 1500)}`);
    }
  }

  // What the workers saw, per message id.
  interface Try {
    sid: string;
    outcome: 'ack' | 'failed' | 'unknown';
    code?: string;
    turn?: number;
  }
  const tries = new Map<string, Map<number, Try>>();
  const held = new Map<string, { worker: string; from: number; to: number }[]>();
  for (const path of input.logs) {
    const worker = path;
    for (const l of readLog(path)) {
      if (l.t === 'held' && typeof l.sid === 'string') {
        const list = held.get(l.sid) ?? [];
        // A hold closed with no turn rejected meanwhile had the lease until its close() (which
        // releases it). Otherwise it is proven by its commits only: from the resume to the last
        // turn it saw commit (a holder frozen past its TTL learns only later that it lost the
        // lease; what matters is that it committed nothing once another owner had taken over).
        const from = l.from as number;
        const to = l.clean === true ? (l.to as number) : typeof l.lastAck === 'number' ? l.lastAck : from;
        list.push({ worker, from, to });
        held.set(l.sid, list);
        continue;
      }
      if (typeof l.mid !== 'string' || typeof l.try !== 'number') continue;
      const perMid = tries.get(l.mid) ?? new Map<number, Try>();
      tries.set(l.mid, perMid);
      const t: Try = perMid.get(l.try) ?? { sid: l.sid as string, outcome: 'unknown' };
      perMid.set(l.try, t);
      if (l.t === 'ack') {
        t.outcome = 'ack';
        t.turn = l.turn as number;
      } else if (l.t === 'reject') {
        const code = String(l.code);
        rejections[code] = (rejections[code] ?? 0) + 1;
        t.code = code;
        t.outcome = code === 'COMMIT_UNKNOWN' ? 'unknown' : 'failed';
      } else if (l.t === 'resolved') {
        if (l.outcome === 'committed') {
          t.outcome = 'ack';
          t.turn = l.turn as number;
        } else if (l.outcome === 'not-committed') t.outcome = 'failed';
        else t.outcome = 'unknown';
      }
    }
  }
  for (const perMid of tries.values()) {
    for (const t of perMid.values()) {
      if (t.outcome === 'ack') acked++;
      else if (t.outcome === 'unknown') unknown++;
    }
  }

  // What the store holds.
  const server = new Server();
  server.registerLocal(Counter, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store: input.store, leaseTtlMs: Math.max(1000, input.ttlMs), serializers: [[Counter, counterSerializer]] }));
  await server.finish();
  const sessions = server.createContext().get(Sessions);
  /** mid → every (sid, turn) it was committed under. */
  const stored = new Map<string, { sid: string; turn: number }[]>();
  try {
    const listed = new Map<string, number>();
    let cursor: string | undefined;
    do {
      const page = await sessions.list({ limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
      for (const item of page.items) listed.set(item.sessionId, item.committedTurn);
      cursor = page.cursor;
    } while (cursor !== undefined);

    for (const target of input.sessions) {
      const sid = target.sessionId;
      let durable: Awaited<ReturnType<Sessions['resume']>> | undefined;
      const until = Date.now() + 3 * input.ttlMs + 5000;
      for (;;) {
        try {
          durable = await sessions.resume({ agentId: target.agentId, sessionId: sid });
          break;
        } catch (err) {
          const code = (err as { code?: string }).code;
          if ((code === 'SESSION_BUSY' || code === 'STORE_LOCKED') && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 100));
            continue;
          }
          counts.unresumable++;
          problems.push(`unresumable: ${sid}: ${(err as Error).message}`);
          break;
        }
      }
      if (durable === undefined) continue;
      try {
        const committed = durable.committedTurn;
        committedTurns += committed;
        const messages = durable.session.history.messages;
        const n = durable.agent.ctx.get(Counter).n;
        if (listed.get(sid) !== committed) {
          counts.inconsistent++;
          problems.push(`inconsistent: ${sid}: list() says committedTurn ${listed.get(sid)}, resume says ${committed}`);
        }
        if (n !== committed) {
          counts.inconsistent++;
          problems.push(`inconsistent: ${sid}: the persisted counter is ${n} after ${committed} committed turns (a commit built on a stale checkpoint)`);
        }
        // The committed history events, by turn.
        const byTurn = new Map<number, string[]>();
        for await (const e of sessions.events(sid)) {
          if (e.status !== 'committed' || e.kind !== 'history/append') continue;
          const m = e.body as { role?: string; content?: string };
          const list = byTurn.get(e.turn) ?? [];
          list.push(`${m.role}:${m.content}`);
          byTurn.set(e.turn, list);
        }
        for (let turn = 1; turn <= committed; turn++) {
          const pair = byTurn.get(turn) ?? [];
          const users = pair.filter((p) => p.startsWith('user:')).map((p) => p.slice(5));
          if (users.length > 1) {
            counts.doubled += users.length - 1;
            problems.push(`doubled: ${sid} turn ${turn} holds ${users.length} messages (${users.join(', ')}): one attempt committed more than once`);
          }
          if (pair.length !== 2 * users.length || users.length === 0 || pair.some((p, i) => i % 2 === 1 && p !== `assistant:ok ${users[(i - 1) / 2]}`)) {
            counts.inconsistent++;
            problems.push(`inconsistent: ${sid} turn ${turn} holds ${JSON.stringify(pair)} (expected one user message and its reply)`);
          }
          for (const mid of users) {
            const list = stored.get(mid) ?? [];
            list.push({ sid, turn });
            stored.set(mid, list);
          }
        }
        for (const turn of byTurn.keys()) {
          if (turn > committed) {
            counts.inconsistent++;
            problems.push(`inconsistent: ${sid}: committed history events of turn ${turn} beyond committedTurn ${committed}`);
          }
        }
        const replayed = messages.filter((m) => m.role === 'user').map((m) => m.content);
        const fromEvents = [...byTurn.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, p]) => p.filter((x) => x.startsWith('user:')).map((x) => x.slice(5)));
        if (JSON.stringify(replayed) !== JSON.stringify(fromEvents)) {
          counts.inconsistent++;
          problems.push(`inconsistent: ${sid}: the resumed history differs from the committed events`);
        }
        const checkpoints = await durable.checkpoints();
        if (!checkpoints.some((c) => c.turn === committed)) {
          counts.inconsistent++;
          problems.push(`inconsistent: ${sid}: no checkpoint of the last committed turn ${committed}`);
        }
      } catch (err) {
        counts.unresumable++;
        problems.push(`unresumable: ${sid}: reading it failed: ${(err as Error).message}`);
      } finally {
        await durable.close().catch(() => undefined);
      }
    }
  } finally {
    await server.dispose().catch(() => undefined);
  }

  // Compare.
  for (const [mid, list] of stored) {
    if (list.length > 1) {
      counts.doubled += list.length - 1;
      problems.push(`doubled: ${mid} is stored ${list.length} times (${list.map((s) => `${s.sid}#${s.turn}`).join(', ')})`);
    }
  }
  for (const [mid, perMid] of tries) {
    const where = stored.get(mid) ?? [];
    const acks = [...perMid.entries()].filter(([, t]) => t.outcome === 'ack');
    for (const [n, t] of acks) {
      const at = where.find((w) => w.sid === t.sid && w.turn === t.turn);
      if (where.length === 0) {
        counts.lost++;
        problems.push(`lost: ${mid} (try ${n}) was acknowledged as turn ${t.turn} of ${t.sid} but is not in its history`);
      } else if (at === undefined) {
        counts.inconsistent++;
        problems.push(`inconsistent: ${mid} (try ${n}) was acknowledged as turn ${t.turn} of ${t.sid} but is stored as ${where.map((s) => `${s.sid}#${s.turn}`).join(', ')}`);
      }
    }
    const failed = [...perMid.entries()].filter(([, t]) => t.outcome === 'failed');
    if (failed.length === 0 || where.length === 0) continue;
    // Stored copies not explained by an acknowledged try were committed by a try reported failed.
    const explained = acks.filter(([, t]) => where.some((w) => w.sid === t.sid && w.turn === t.turn)).length;
    const unknownTries = [...perMid.values()].filter((t) => t.outcome === 'unknown').length;
    const extra = where.length - explained - unknownTries;
    if (extra > 0) {
      counts.failedButCommitted += Math.min(extra, failed.length);
      problems.push(
        `failedButCommitted: ${mid}: ${failed.map(([n, t]) => `try ${n} rejected with ${t.code ?? 'not-committed'}`).join('; ')}, yet it is stored as ${where.map((s) => `${s.sid}#${s.turn}`).join(', ')}`,
      );
    }
  }

  // Ownership: no two workers' hold intervals of one session intersect.
  for (const [sid, list] of held) {
    const sorted = [...list].sort((a, b) => a.from - b.from);
    for (let i = 1; i < sorted.length; i++) {
      for (let j = 0; j < i; j++) {
        const a = sorted[j];
        const b = sorted[i];
        if (a.worker !== b.worker && b.from < a.to && a.from < b.to) {
          counts.overlaps++;
          problems.push(`overlap: ${sid} held by ${a.worker} [${a.from}, ${a.to}] and ${b.worker} [${b.from}, ${b.to}]`);
        }
      }
    }
  }

  const codes = Object.entries(rejections)
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
  const line =
    `faults[${input.scenario}] lost=${counts.lost} doubled=${counts.doubled} failedButCommitted=${counts.failedButCommitted} crashed=${counts.crashed} ` +
    `unresumable=${counts.unresumable} inconsistent=${counts.inconsistent} overlaps=${counts.overlaps} | acked=${acked} rejected={${codes}} unknown=${unknown} committedTurns=${committedTurns}`;
  return { counts, acked, rejections, unknown, committedTurns, problems, line };
}

/** The counts every scenario expects. */
export const ZERO: FaultCounts = { lost: 0, doubled: 0, failedButCommitted: 0, crashed: 0, unresumable: 0, inconsistent: 0, overlaps: 0 };

/** Prints the summary line (and the problems) and returns the report, for `expect(report.counts).toEqual(ZERO)`. */
export function print(report: CheckReport): CheckReport {
  process.stdout.write(`${report.line}\n`);
  if (report.problems.length > 0) process.stdout.write(`${report.problems.slice(0, 30).map((p) => `  ${p}`).join('\n')}\n`);
  return report;
}

/** Creates the sessions the workers will drive (committed turn 0, lease released), with the checker's serializers. */
export async function createSessions(store: SessionStore, targets: readonly { readonly sessionId: string; readonly agentId: string }[]): Promise<void> {
  const server = new Server();
  server.registerLocal(Counter, { per: 'agent' });
  server.addPlugins(new AgentsPlugin(), new SessionsPlugin({ store, serializers: [[Counter, counterSerializer]] }));
  await server.finish();
  const sessions = server.createContext().get(Sessions);
  try {
    for (const t of targets) await (await sessions.create({ agentId: t.agentId, sessionId: t.sessionId })).close();
  } finally {
    await server.dispose();
  }
}
