// Every ```ts block of docs/durable-sessions.md and of the sessions API's TSDoc is a complete module: it compiles against
// polestar-di (and polestar-di/sessions/sqlite) and runs (its node:assert checks are real
// assertions).
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const dir = join(ROOT, '.build/doc-examples-durable-sessions');
// The guide, and the TSDoc examples of the sessions API.
const blocks = [
  ...extractBlocks('docs/durable-sessions.md'),
  ...['sessions', 'durable/durable-session', 'plugin', 'serializers', 'turn-log'].flatMap((f) => extractBlocks(`src/sessions/${f}.ts`)),
];
writeBlocks(blocks, dir);
// The SQL stores' entry points point at the sources too.
const src = relative(dir, join(ROOT, 'src')).split('\\').join('/');
for (const b of blocks) {
  const file = b.file as string;
  writeFileSync(file, readFileSync(file, 'utf8').replace(/from 'polestar-di\/sessions\/(sqlite|postgres)'/g, `from '${src}/sessions/$1.js'`));
}

test('the guide has examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(11);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
