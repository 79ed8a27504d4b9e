// Every ```ts example in the TSDoc of the testing kit and of the agents API, in the
// testing guide and in the agents sections of docs/agents-scopes-registries.md, compiles against polestar and runs (issue 13: the runSystem example did
// not compile and, at run time, silently dropped its argument; examples nobody compiles
// rot unseen). Each block is a complete module importing from 'polestar-di' and
// 'polestar-di/testing'; its `expect` calls are real assertions.
import { join } from 'node:path';
import { ROOT, extractBlocks, typeCheck, writeBlocks, type DocBlock } from './doc-blocks.js';

const SOURCES = [
  'src/testing/create-test-server.ts',
  'src/testing/run-system.ts',
  'src/testing/create-test-agent.ts',
  'src/testing/fake-agent.ts',
  'src/testing/assert-no-leaks.ts',
  'src/agents/agents.ts',
  'src/agents/agent.ts',
  'src/conversation/session.ts',
  'docs/testing.md',
];

// The agents room's sections of the guide it shares with the registries room.
const AGENT_SECTIONS = ['Agents', 'Subagents', 'Composition', 'Lifetimes'];

const blocks: DocBlock[] = [
  ...SOURCES.flatMap((s) => extractBlocks(s)),
  ...extractBlocks('docs/agents-scopes-registries.md', AGENT_SECTIONS),
];
writeBlocks(blocks, join(ROOT, '.build/doc-examples'));

test('the documented files have examples to check', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(5);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

// A block that declares its own tests (the guide's blocks are complete test files) is
// imported now, while Jest collects tests, so its tests run as tests of this file; any
// other block (a TSDoc example) runs as one test.
const declaresTests = (b: DocBlock): boolean => /^test\(/m.test(b.code);
for (const b of blocks.filter(declaresTests)) await import(b.file as string);

describe('every example runs', () => {
  test.each(blocks.filter((b) => !declaresTests(b)).map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});
