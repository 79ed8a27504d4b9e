/**
 * Child processes of the fault suite: spawns turn-worker.mjs (or another worker script)
 * over the compiled sources, follows its stdout lines, caps its wall-clock time, and
 * records how it ended so the checker can count crashes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Where the workers' compiled polestar lives: POLESTAR_FAULTS_BUILD, or the project's .build. */
export const BUILD_DIR = process.env.POLESTAR_FAULTS_BUILD !== undefined && process.env.POLESTAR_FAULTS_BUILD !== '' ? process.env.POLESTAR_FAULTS_BUILD : fileURLToPath(new URL('../../../.build/', import.meta.url));

/** Throws a clear error when the compiled sources the workers import are missing. */
export function assertBuilt(): void {
  const entry = join(BUILD_DIR, 'src', 'index.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build:run\` (npm test does it in pretest), or point POLESTAR_FAULTS_BUILD at a build.`);
}

/** The worker script that runs durable turns (see its header for the log lines it writes). */
export const TURN_WORKER = fileURLToPath(new URL('./turn-worker.mjs', import.meta.url));
/** The script that holds a SQLite file's write lock for a while. */
export const SQLITE_LOCKER = fileURLToPath(new URL('./sqlite-locker.mjs', import.meta.url));

/** A store as a worker opens it. */
export type WorkerStore =
  | { readonly kind: 'sqlite'; readonly path: string; readonly busyTimeoutMs?: number }
  | { readonly kind: 'postgres'; readonly url: string; readonly max?: number; readonly pool?: 'own' | 'user' };

/** The config of one turn-worker.mjs process. */
export interface WorkerConfig {
  /** Worker id: the prefix of its message ids, unique in a scenario. */
  readonly id: string;
  /** Its log file (one JSON line per event, fsync'd). */
  readonly log: string;
  readonly store: WorkerStore;
  readonly ttlMs: number;
  readonly storeTimeoutMs?: number;
  readonly owner?: string;
  /** The sessions it drives (created beforehand by the test). */
  readonly sessions: readonly { readonly sessionId: string; readonly agentId: string }[];
  /** `hold`: keep each session open across turns; `cycle`: resume → turn → close per message. */
  readonly mode: 'hold' | 'cycle';
  /** Messages to send (each retried once on failure). */
  readonly turns: number;
  /** Start no new message after this many ms. */
  readonly deadlineMs: number;
  /** How long one open keeps retrying refusals (default 30 s). */
  readonly openTimeoutMs?: number;
  /** `random` picks the session of each message at random (default: round-robin). */
  readonly pick?: 'random' | 'round-robin';
  /** Pause after each message (ms). */
  readonly pauseMs?: number;
  /** `cycle` mode: keep the session this long after its turn before closing it (more contention). */
  readonly holdMs?: number;
  /** Wall-clock time (ms since the epoch) to start turning at, so racing workers start together. */
  readonly startAt?: number;
  /** PostgreSQL only: SIGSTOP itself right before the COMMIT of its n-th turn commit. */
  readonly stopAtCommit?: number;
  /** Pause before retrying a failed message and before the next one after a failure (default 150 ms). */
  readonly retryDelayMs?: number;
  /** Every n-th message's first try throws in the turn (an application failure, so the attempt is aborted). */
  readonly failEvery?: number;
  /** How long resolvePending() is retried after COMMIT_UNKNOWN (default 15 s). */
  readonly resolveTimeoutMs?: number;
}

/** One line a worker printed. */
export type WorkerLine = Record<string, unknown> & { readonly t: string };

/** How a process ended. */
export interface ProcessEnd {
  readonly name: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The signal the test sent on purpose (so that end is not a crash). */
  readonly expectedSignal: NodeJS.Signals | undefined;
  /** True when the wall-clock cap killed it. */
  readonly capped: boolean;
  readonly stderr: string;
}

/** A running child. */
export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with the first line (from now on or already seen) that matches. */
  waitFor(match: (line: WorkerLine) => boolean, timeoutMs?: number): Promise<WorkerLine>;
  /** Every line seen so far. */
  readonly lines: readonly WorkerLine[];
  /** Sends a signal the test means (SIGKILL of a kill -9 scenario is then not a crash). */
  signal(sig: NodeJS.Signals, expected?: boolean): void;
  /** Resolves when the process has exited. */
  readonly ended: Promise<ProcessEnd>;
}

const live = new Set<ChildProcess>();

/** Kills every child still running (afterEach / afterAll). */
export function killAll(): void {
  for (const c of live) {
    c.kill('SIGCONT');
    c.kill('SIGKILL');
  }
  live.clear();
}

/** Spawns a node script with a JSON config argument; killed with SIGKILL after `capMs`. */
export function spawnScript(name: string, script: string, config: unknown, capMs: number): Proc {
  const child = spawn(process.execPath, [script, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, POLESTAR_FAULTS_BUILD: BUILD_DIR },
  });
  live.add(child);
  const lines: WorkerLine[] = [];
  const waiters: { match: (l: WorkerLine) => boolean; resolve: (l: WorkerLine) => void }[] = [];
  let stderr = '';
  let expectedSignal: NodeJS.Signals | undefined;
  let capped = false;
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 20_000) stderr += d.toString();
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (text) => {
    let line: WorkerLine;
    try {
      line = JSON.parse(text) as WorkerLine;
    } catch {
      return;
    }
    lines.push(line);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].match(line)) {
        waiters[i].resolve(line);
        waiters.splice(i, 1);
      }
    }
  });
  const cap = setTimeout(() => {
    capped = true;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }, capMs);
  cap.unref();
  const ended = new Promise<ProcessEnd>((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(cap);
      live.delete(child);
      // Let the last stdout/stderr chunks arrive.
      setImmediate(() => resolve({ name, code, signal, expectedSignal, capped, stderr }));
    });
  });
  return {
    name,
    child,
    lines,
    ended,
    waitFor(match, timeoutMs = 20_000) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<WorkerLine>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no matching line within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        timer.unref();
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
        void ended.then((e) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (code ${e.code}, signal ${e.signal}) before a matching line; stderr: ${e.stderr}`));
        });
      });
    },
    signal(sig, expected = true) {
      if (expected) expectedSignal = sig;
      child.kill(sig);
    },
  };
}

/** Spawns turn-worker.mjs. */
export function spawnWorker(config: WorkerConfig, capMs: number): Proc {
  return spawnScript(config.id, TURN_WORKER, config, capMs);
}

/** A seeded PRNG (mulberry32): the same seed gives the same kill points. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Removes a scenario's temp directory, unless FAULTS_KEEP is set (then says where it is, to read the worker logs). */
export function removeScratch(dir: string): void {
  if (process.env.FAULTS_KEEP !== undefined && process.env.FAULTS_KEEP !== '') {
    process.stdout.write(`faults: worker logs kept in ${dir}\n`);
    return;
  }
  rmSync(dir, { recursive: true, force: true });
}
