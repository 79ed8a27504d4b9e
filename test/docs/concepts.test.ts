// Every ```ts block of docs/concepts.md is a complete module: it compiles against
// polestar-di and runs (its node:assert checks are real assertions).
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const blocks = extractBlocks('docs/concepts.md');
writeBlocks(blocks, join(ROOT, '.build/doc-examples-concepts'));

test('the guide has examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(5);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
