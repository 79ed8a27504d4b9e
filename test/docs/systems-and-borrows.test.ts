// Every ```ts block of docs/systems-and-borrows.md is a complete module: it compiles
// against polestar-di and runs (its node:assert checks are real assertions).
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const blocks = extractBlocks('docs/systems-and-borrows.md');
writeBlocks(blocks, join(ROOT, '.build/doc-examples-systems'));

test('the guide has examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(9);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
