// Every ```ts block of docs/adapters-and-mcp.md is a complete module: it compiles against
// polestar-di and polestar-di/adapters and runs (its node:assert checks are real
// assertions; the MCP blocks start real server child processes, through the SDK 1.x and 2.x
// clients).
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const dir = join(ROOT, '.build/doc-examples-adapters');
const blocks = extractBlocks('docs/adapters-and-mcp.md').map((b) => ({
  ...b,
  code: b.code.replace(/from 'polestar-di\/adapters'/g, "from '../../src/adapters/index.js'"),
}));
writeBlocks(blocks, dir);

test('the guide has examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(4);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(blocks.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
