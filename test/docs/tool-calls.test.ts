// Every ```ts block of the "Tool calls: the calling context, cancellation, results"
// section of docs/agents-scopes-registries.md is a complete module: it compiles against
// polestar-di and runs (its node:assert checks are real assertions).
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const blocks = extractBlocks('docs/agents-scopes-registries.md', ['Tool calls: the calling context, cancellation, results']);
writeBlocks(blocks, join(ROOT, '.build/doc-examples-tool-calls'));

test('the section has examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(1);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
