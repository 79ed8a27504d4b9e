import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const fixture = '.build/test/fixtures/agents-load.js';

interface LoadResult {
  ok: boolean;
  agents: number;
  published: number;
  rejectedAsPlanned: number;
  unexpectedErrors: string[];
  leaks: string[];
  heapGrowth: number;
  createMs: number;
  disposeMs: number;
}

test('10,000 agents (five scoped tools, a session and a turn each), created and disposed concurrently with racing disposals, leave nothing behind', () => {
  if (!existsSync(fixture)) throw new Error(`${fixture} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  let out: string;
  try {
    out = execFileSync(process.execPath, ['--expose-gc', fixture, '10000'], { encoding: 'utf8', timeout: 60_000 });
  } catch (e) {
    const f = e as { stdout?: string; stderr?: string; status?: number };
    throw new Error(`the load fixture failed (status ${f.status}): ${f.stdout ?? ''}\n${f.stderr ?? String(e)}`);
  }
  const r = JSON.parse(out.trim().split('\n').pop() as string) as LoadResult;
  expect(r.unexpectedErrors).toEqual([]);
  expect(r.leaks).toEqual([]);
  expect(r.agents).toBe(10_000);
  // 1 in 97 setups fails on purpose (104 of 10,000) and one duplicate create per group (100) is refused.
  expect(r.published).toBe(10_000 - 104);
  expect(r.rejectedAsPlanned).toBe(104 + 100);
  expect(Math.abs(r.heapGrowth)).toBeLessThan(5 * 1024 * 1024);
  expect(r.ok).toBe(true);
});
