import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const fixture = '.build/test/fixtures/context-leak.js';

test('creating and disposing 100,000 agent/session/turn trees grows the heap by less than 2 MB', () => {
  if (!existsSync(fixture)) throw new Error(`${fixture} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  const out = execFileSync(process.execPath, ['--expose-gc', fixture, '100000'], { encoding: 'utf8', timeout: 120_000 });
  const result = JSON.parse(out.trim().split('\n').pop() as string) as { trees: number; growth: number; liveContexts: number };
  expect(result.trees).toBe(100_000);
  expect(result.liveContexts).toBe(0);
  expect(result.growth).toBeLessThan(2 * 1024 * 1024);
});
