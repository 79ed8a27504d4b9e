/**
 * Issue 8 #5 / issue 9's heap row. Bug: the server's one Ajv kept every schema it ever
 * compiled (about 3 KB each, 15 MB after 5,000 distinct schemas), even after every tool
 * using it was gone. Fixed: schemas are compiled by short-lived ajv generations (a fresh
 * instance every 64 compiles, each schema removed after compiling), so what stays is the
 * live tools' validators plus the bounded LRU of released ones.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { RELEASED_VALIDATORS_MAX } from '../../src/tools/schema/validator-cache.js';

const fixture = '.build/test/fixtures/tool-schema-heap.js';

function measure(dialect: string): { tools: number; growth: number; validators: number; released: number } {
  if (!existsSync(fixture)) throw new Error(`${fixture} is missing: run \`npx tsc -p tsconfig.run.json\` (npm test does it in pretest)`);
  const out = execFileSync(process.execPath, ['--expose-gc', fixture, '5000', dialect, '1000'], { encoding: 'utf8', timeout: 120_000 });
  return JSON.parse(out.trim().split('\n').pop() as string) as { tools: number; growth: number; validators: number; released: number };
}

test.each(['draft-07', '2020-12'])('registering and disposing 5,000 tools with distinct %s schemas grows the heap by at most 2 MB', (dialect) => {
  const r = measure(dialect);
  expect(r.tools).toBe(5_000);
  expect(r.validators).toBe(0);
  expect(r.released).toBe(RELEASED_VALIDATORS_MAX);
  expect(r.growth).toBeLessThan(2 * 1024 * 1024);
});
