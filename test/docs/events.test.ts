// Every ```ts block of docs/events.md is a complete module: it compiles against polestar-di
// (an application's `declare module 'polestar-di'` augmentation included) and runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const blocks = extractBlocks('docs/events.md');
const dir = join(ROOT, '.build/doc-examples-events');
writeBlocks(blocks, dir);
// writeBlocks points imports at the sources; point the module augmentation there too
const src = relative(dir, join(ROOT, 'src')).split('\\').join('/');
for (const b of blocks) {
  const file = b.file as string;
  writeFileSync(file, readFileSync(file, 'utf8').replace(/declare module 'polestar-di'/g, `declare module '${src}/index.js'`));
}

test('the catalog has examples', () => {
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
