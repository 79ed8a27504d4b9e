/**
 * The compiled agent service as `npm run demo` and `npm run service` run it: `--self-test`
 * (two child processes on one SQLite file) exits 0 by itself; without it, the service keeps
 * running until SIGTERM (its SQLite file in a temporary directory here).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const compiled = '.build/examples/agent-service.js';

beforeAll(() => {
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  if (!existsSync('dist/index.js')) throw new Error('dist/index.js is missing: run `npm run build` (the compiled example imports polestar-di, which resolves to dist/)');
});

test('--self-test drives two processes, prints what each request cost and exits 0', async () => {
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(process.execPath, [compiled, '--self-test'], { timeout: 90_000, env: { ...process.env, POLESTAR_PG_URL: '' } }, (err, out) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: out }),
    );
  });
  expect(stdout).toMatch(/process A \(owner service-a, pid \d+\) on http:\/\/127\.0\.0\.1:\d+/);
  expect(stdout).toMatch(/TURN_CANCELLED/);
  expect(stdout).toMatch(/killed \(SIGKILL\) mid-turn/);
  expect(stdout).toMatch(/^ {2}live {5}n=\d+/m);
  expect(stdout).toMatch(/^ {2}handoff {2}n=\d+/m);
  expect(stdout).toMatch(/^ {2}restart {2}n=\d+/m);
  expect(stdout).not.toMatch(/FAIL/);
  expect(stdout).toMatch(/self-test passed/);
  expect(code).toBe(0);
});

test('without --self-test it keeps serving until SIGTERM, then exits 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-agent-service-test-'));
  const child = spawn(process.execPath, [compiled, '--db', join(dir, 'serve.db'), '--owner', 'test-1'], {
    env: { ...process.env, AGENT_SERVICE_PORT: '0', POLESTAR_PG_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
        if (m) resolve(m[1]);
      });
      child.once('exit', (c) => reject(new Error(`exited early with ${c}: ${out}`)));
    });
    const r = await fetch(`${url}/conversations/live/messages`, { method: 'POST', body: JSON.stringify({ text: 'hi' }) });
    expect(r.status).toBe(200);
    const listed = (await (await fetch(`${url}/conversations`)).json()) as { conversations: { id: string }[] };
    expect(listed.conversations.map((c) => c.id)).toEqual(['live']);
  } finally {
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
