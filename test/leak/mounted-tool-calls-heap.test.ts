import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

// compiled by `npx tsc -p tsconfig.run.json` (npm test does it in pretest); POLESTAR_BUILD_DIR
// points at another output directory of that command
const fixture = join(process.env.POLESTAR_BUILD_DIR ?? '.build', 'test/fixtures/mounted-tool-calls-heap.js');

test('30,000 calls of a mounted MCP tool leave the heap as flat as 30,000 calls of a plain tool', () => {
  if (!existsSync(fixture)) throw new Error(`${fixture} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  const out = execFileSync(process.execPath, ['--expose-gc', fixture, '30000'], { encoding: 'utf8', timeout: 120_000 });
  const result = JSON.parse(out.trim().split('\n').pop() as string) as { calls: number; plain: number; mounted: number; signalsSeen: number };
  expect(result.calls).toBe(30_000);
  expect(result.signalsSeen).toBe(35_000);
  // 35 bytes kept per call would be about 1 MB: allow a quarter of that over the plain tool
  expect(result.mounted).toBeLessThan(Math.max(result.plain, 0) + 256 * 1024);
});
