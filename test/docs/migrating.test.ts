// Every ```ts block of docs/migrating.md (polestar's side and inversify's, tsyringe's and awilix's,
// all installed as devDependencies) is a complete module: it compiles and runs.
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const blocks = extractBlocks('docs/migrating.md');
writeBlocks(blocks, join(ROOT, '.build/doc-examples-migrating'));

test('the guide has examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(7);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
