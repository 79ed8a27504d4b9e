// Every ```ts block of docs/packaging.md and of the TSDoc of the re-exported decorators is
// a complete module: it compiles against polestar-di and runs (its assertions are real).
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const blocks = [...extractBlocks('docs/packaging.md'), ...extractBlocks('src/container/decorators.ts')];
writeBlocks(blocks, join(ROOT, '.build/doc-examples-packaging'));

test('the guide and the decorators have examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(2);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
