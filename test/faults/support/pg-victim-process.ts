/**
 * Runs test/faults/support/pg-victim.ts in a child process (through ts-node's ESM loader,
 * transpile only: the current sources, no build) and talks to it line by line.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const VICTIM = fileURLToPath(new URL('./pg-victim.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** How the victim process ended. */
export interface VictimExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** A running victim. */
export interface Victim {
  /** Sends one command line (`renew`, `exit`). */
  send(cmd: string): void;
  /** The next JSON line it prints (rejects when it exits first or after `timeoutMs`). */
  next(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves when it has exited. */
  readonly exited: Promise<VictimExit>;
  /** Its pid. */
  readonly pid: number;
  /** Kills it (SIGKILL) if it still runs. */
  kill(): void;
}

/** Starts a victim with `config` (see pg-victim.ts). */
export function spawnVictim(config: { url: string; pool: 'own' | 'user'; sessionId: string; bounds?: { callTimeoutMs: number; leaseTtlMs: number }; ttlMs?: number }): Victim {
  const child = spawn(process.execPath, ['--no-warnings', '--loader', 'ts-node/esm', VICTIM, JSON.stringify(config)], {
    cwd: ROOT,
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1', NODE_OPTIONS: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr += d));
  const queue: Record<string, unknown>[] = [];
  const waiters: ((v: Record<string, unknown> | Error) => void)[] = [];
  let ended: Error | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const w = waiters.shift();
    if (w !== undefined) w(v);
    else queue.push(v);
  });
  const exited = new Promise<VictimExit>((resolve) => {
    child.on('exit', (code, signal) => {
      ended = new Error(`the victim exited (code ${String(code)}, signal ${String(signal)}): ${stderr}`);
      for (const w of waiters.splice(0)) w(ended);
      resolve({ code, signal, stderr });
    });
  });
  return {
    pid: child.pid as number,
    exited,
    send(cmd: string) {
      child.stdin.write(cmd + '\n');
    },
    next(timeoutMs = 30_000) {
      const queued = queue.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      if (ended !== undefined) return Promise.reject(ended);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`the victim printed nothing within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        waiters.push((v) => {
          clearTimeout(t);
          if (v instanceof Error) reject(v);
          else resolve(v);
        });
      });
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
