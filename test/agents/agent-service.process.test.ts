/**
 * The compiled agent service as CI and `npm run service` run it: `--self-test` exits 0 by
 * itself; without it, the service keeps running on AGENT_SERVICE_PORT until SIGTERM (its SQLite
 * file in a temporary directory here, not the default ./agent-service.db).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const compiled = '.build/examples/agent-service.js';

beforeAll(() => {
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  // The example imports 'polestar-di', which Node resolves through package.json "exports" to dist/.
  if (!existsSync('dist/index.js')) throw new Error('dist/index.js is missing: run `npm run build` (the compiled example imports polestar-di, which resolves to dist/)');
});

test('--self-test drives the service over HTTP, prints what happened and exits 0', async () => {
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = execFile(process.execPath, [compiled, '--self-test'], { timeout: 60_000 }, (err, out) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: out }),
    );
    child.stdin?.end();
  });
  expect(stdout).toMatch(/agent service listening on http:\/\/127\.0\.0\.1:\d+/);
  expect(stdout).toMatch(/DELETE \/agents\/researcher\n {2}-> 200/);
  expect(stdout).toMatch(/process 1 killed \(SIGKILL\) mid-conversation/);
  expect(stdout).toMatch(/Bergen.*"historyLength":9/);
  expect(stdout).toMatch(/self-test passed/);
  expect(code).toBe(0);
});

test('without --self-test it keeps serving on AGENT_SERVICE_PORT until SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'polestar-agent-service-test-'));
  const child = spawn(process.execPath, [compiled, '--db', join(dir, 'serve.db')], {
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
    await new Promise((r) => setTimeout(r, 200));
    expect(child.exitCode).toBeNull();
    const created = await fetch(`${url}/agents`, { method: 'POST', body: JSON.stringify({ id: 'live' }) });
    expect(created.status).toBe(201);
    const listed = (await (await fetch(`${url}/agents`)).json()) as { agents: { id: string }[] };
    expect(listed.agents.map((a) => a.id)).toEqual(['live']);
  } finally {
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
