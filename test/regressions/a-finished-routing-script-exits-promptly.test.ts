/**
 * A fault hunt of the cross-process routing: a program that opens sessions (with waits,
 * handoffs, cancels), disposes its servers and closes its stores must exit by itself at once:
 * no ref'd timer, socket or LISTEN connection of the routing may keep it alive. Checked in a
 * child process over the compiled sources, on the memory, SQLite and PostgreSQL stores.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, pgTarget } from '../sessions/pg-target.js';

const SCRIPT = fileURLToPath(new URL('./finished-routing-script.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'polestar-exit-'));
const target = await pgTarget();
const dbs: { url: string; drop(): Promise<void> }[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const db of dbs) await db.drop();
});

let n = 0;
async function storeConfig(kind: string): Promise<object> {
  if (kind === 'memory') return { kind };
  if (kind === 'sqlite') return { kind, path: join(dir, `exit-${++n}.db`) };
  const db = await createTestDatabase(target.ok ? target.adminUrl : '', 'exitscript');
  dbs.push(db);
  return { kind: 'pg', url: db.url };
}

/** Runs the script; resolves how long it took to exit after printing "done". */
function run(config: object): Promise<{ code: number | null; afterDoneMs: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', SCRIPT, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let doneAt: number | undefined;
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (doneAt === undefined && out.includes('done\n')) doneAt = performance.now();
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, afterDoneMs: doneAt === undefined ? Infinity : performance.now() - doneAt, stderr });
    });
  });
}

const kinds = ['memory', 'sqlite', ...(target.ok ? ['pg'] : [])];
const scenarios = ['open-turn-close', 'reopen-while-closing', 'open-turn-no-close', 'handoff', 'cancel', 'wait-times-out'];

test.each(kinds.flatMap((k) => scenarios.map((s) => [k, s] as const)))('on the %s store, a script (%s) exits by itself once everything is disposed', async (kind, scenario) => {
  if (!existsSync(fileURLToPath(new URL('../../.build/src/index.js', import.meta.url)))) throw new Error('.build is missing: run `npx tsc -p tsconfig.run.json`');
  const r = await run({ store: await storeConfig(kind), scenario });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.afterDoneMs).toBeLessThan(1_000);
}, 30_000);
