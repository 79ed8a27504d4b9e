/**
 * Regression: a `SqliteSessionStore` that was made and never called (or whose watcher was the
 * only use) kept the process alive for ever: its worker thread was unref'd before its message
 * listener was added, which refs the worker's port again. A jest run that made such a store
 * never exited.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR, assertBuilt } from '../faults/support/procs.js';

const CHILD = `
const [build, path, watch] = JSON.parse(process.argv[1]);
const { SqliteSessionStore } = await import(build + 'src/sessions/sqlite.js');
const store = new SqliteSessionStore({ path });
if (watch) store.watch(() => undefined);
console.log('made');
`;

function run(path: string, watch: boolean): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const build = pathToFileURL(BUILD_DIR.endsWith('/') ? BUILD_DIR : `${BUILD_DIR}/`).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify([build, path, watch])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout: stdout.trim(), stderr: stderr.trim() });
    }),
  );
}

beforeAll(() => assertBuilt());

test.each([
  ['made and never called', false],
  ['watched and never called', true],
])('a SQLite store %s lets the process exit', async (_label, watch) => {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-idle-sqlite-'));
  try {
    expect(await run(join(dir, 's.db'), watch)).toEqual({ code: 0, signal: null, stdout: 'made', stderr: '' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 20_000);
