/**
 * A throwaway PostgreSQL cluster for tests that stop, crash or restart the server: its own
 * data directory in a temp dir, its own free port on 127.0.0.1, its own socket directory.
 * The machine's shared server is never touched.
 *
 * ```ts
 * const avail = pgClusterAvailability();
 * describeCluster(avail)('survives a restart', () => {
 *   let cluster: PgCluster;
 *   beforeAll(async () => { cluster = await startPgCluster(); });
 *   afterAll(async () => { await cluster.destroy(); });
 *   test('…', async () => {
 *     await cluster.stop({ mode: 'immediate' });   // a crash: no shutdown checkpoint
 *     await cluster.start();                        // the same port and data again
 *   });
 * });
 * ```
 *
 * Run as root, the `initdb`/`pg_ctl` commands run as the `postgres` user (`runuser`),
 * since PostgreSQL refuses to run as root. A cluster still running when the test process
 * exits is stopped (`-m immediate`) by an exit hook, so a crashed test leaves no server
 * behind; its directory is removed by {@link PgCluster.destroy} only.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a throwaway cluster can be made here, and if not why. */
export type PgClusterAvailability =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** True when CI is set: the tests must fail rather than skip. */
      readonly required: boolean;
      /** A line saying what is missing. */
      readonly reason: string;
    };

/** Options of {@link startPgCluster}. */
export interface PgClusterOptions {
  /**
   * Extra server settings, passed as `-c name=value` at every start (e.g.
   * `{ max_connections: '40' }`). Defaults keep the cluster small: `shared_buffers=16MB`,
   * `max_connections=50`, `fsync` left on so a crash test is a real crash.
   */
  readonly settings?: Readonly<Record<string, string>>;
}

/** How {@link PgCluster.stop} shuts the server down (`pg_ctl stop -m <mode>`). */
export interface PgClusterStopOptions {
  /**
   * `'immediate'` (default): every backend is killed at once with no shutdown checkpoint,
   * like a crash; the next start runs crash recovery. `'fast'`: sessions are disconnected
   * and the server shuts down cleanly.
   */
  readonly mode?: 'immediate' | 'fast';
}

/** A running (or stopped) throwaway PostgreSQL cluster. */
export interface PgCluster {
  /** The TCP port on 127.0.0.1; the same across stop/start. */
  readonly port: number;
  /** The temp directory holding the data directory, the socket and the server log. */
  readonly dir: string;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth). */
  readonly url: string;
  /** The URL of another database on this cluster (create it first, e.g. with {@link PgCluster.createDatabase}). */
  urlFor(database: string): string;
  /** Creates a database on the running cluster and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Whether the server is running (as far as this object knows). */
  readonly running: boolean;
  /** Starts the server again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server (`'immediate'` by default: a crash); resolves once it is down. */
  stop(options?: PgClusterStopOptions): Promise<void>;
  /** Stops the server if it runs (`-m immediate`) and removes its directory. Idempotent. */
  destroy(): Promise<void>;
  /** The server log so far (for a failing test's message). */
  log(): string;
}

const isCi = (): boolean => {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

const asRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** The command line that runs a PostgreSQL binary as a user that may run it. */
function command(bin: string, args: readonly string[]): [string, string[]] {
  return asRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, [...args]];
}

let availability: PgClusterAvailability | undefined;

/**
 * Checks once (synchronously) that `initdb` and `pg_ctl` are on the PATH and, when running
 * as root, that `runuser` and a `postgres` user exist.
 */
export function pgClusterAvailability(): PgClusterAvailability {
  if (availability !== undefined) return availability;
  const missing: string[] = [];
  for (const bin of ['initdb', 'pg_ctl']) {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (r.error !== undefined || r.status !== 0) missing.push(`${bin} is not on the PATH`);
  }
  if (asRoot()) {
    const r = spawnSync('runuser', ['-u', 'postgres', '--', 'true'], { encoding: 'utf8' });
    if (r.error !== undefined || r.status !== 0) missing.push('running as root needs runuser and a postgres user');
  }
  if (missing.length === 0) availability = { ok: true };
  else {
    const required = isCi();
    availability = {
      ok: false,
      required,
      reason: required
        ? `a throwaway PostgreSQL cluster is required (CI is set) but ${missing.join('; ')}`
        : `throwaway-cluster tests skipped: ${missing.join('; ')} (install the PostgreSQL server binaries; CI=true makes these tests mandatory)`,
    };
  }
  return availability;
}

/**
 * `describe` when a cluster can be made; otherwise `describe.skip` with the reason printed,
 * or, when CI is set, one failing test naming the reason.
 */
export function describeCluster(avail: PgClusterAvailability): (name: string, fn: () => void) => void {
  if (avail.ok) return describe;
  if (!avail.required) {
    console.warn(avail.reason);
    return describe.skip;
  }
  return (name: string) =>
    describe(name, () => {
      test('a throwaway PostgreSQL cluster can be made', () => {
        throw new Error(avail.reason);
      });
    });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function run(bin: string, args: readonly string[]): Promise<string> {
  const [file, argv] = command(bin, args);
  return new Promise((resolve, reject) => {
    execFile(file, argv, { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}

const live = new Set<{ data: string }>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const c of live) {
      const [file, argv] = command('pg_ctl', ['-D', c.data, '-m', 'immediate', '-w', 'stop']);
      spawnSync(file, argv, { stdio: 'ignore', timeout: 10_000 });
    }
  });
}

/**
 * Makes a fresh cluster (`initdb -U postgres --auth=trust`) in a temp dir and starts it on
 * a free port. Rejects when initdb or the first start fails (with the server log).
 */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  mkdirSync(data, { mode: 0o700 });
  if (asRoot()) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    const uid = Number(id.stdout.trim());
    const g = Number(gid.stdout.trim());
    chownSync(dir, uid, g);
    chownSync(data, uid, g);
  }
  await run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    shared_buffers: '16MB',
    max_connections: '50',
    ...(options.settings ?? {}),
  };
  const serverOpts = [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const entry = { data };
  let running = false;
  let destroyed = false;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const urlFor = (database: string): string => `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`;

  const cluster: PgCluster = {
    port,
    dir,
    url,
    urlFor,
    get running() {
      return running;
    },
    async start() {
      if (destroyed) throw new Error(`the PostgreSQL cluster in ${dir} was destroyed`);
      if (running) return;
      hookExit();
      live.add(entry);
      try {
        await run('pg_ctl', ['-D', data, '-l', logFile, '-o', serverOpts, '-w', '-t', '60', 'start']);
      } catch (err) {
        live.delete(entry);
        throw new Error(`${(err as Error).message}\n--- server log ---\n${cluster.log()}`);
      }
      running = true;
    },
    async stop(stopOptions = {}) {
      if (!running) return;
      await run('pg_ctl', ['-D', data, '-m', stopOptions.mode ?? 'immediate', '-w', '-t', '60', 'stop']);
      running = false;
      live.delete(entry);
    },
    async createDatabase(name) {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      } finally {
        await c.end();
      }
      return urlFor(name);
    },
    async destroy() {
      if (destroyed) return;
      if (running) await cluster.stop({ mode: 'immediate' }).catch(() => undefined);
      destroyed = true;
      rmSync(dir, { recursive: true, force: true });
    },
    log() {
      return existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    },
  };
  try {
    await cluster.start();
  } catch (err) {
    await cluster.destroy();
    throw err;
  }
  return cluster;
}
