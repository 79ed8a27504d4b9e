// The inspect part of docs/observability.md and the TSDoc examples of inspect: every ```ts
// block is a complete module that compiles against polestar-di and runs (its node:assert
// checks are real assertions), and the text tree and the Mermaid diagram the guide shows
// for the support desk are exactly what its example prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { ROOT, extractBlocks, typeCheck, writeBlocks } from '../testing/doc-blocks.js';

const GUIDE = 'docs/observability.md';
const SECTION = 'The live tree: `inspect` and `formatInspection`';
const sources = extractBlocks('src/observability/inspect.ts');
const guide = extractBlocks(GUIDE, [SECTION]);
const blocks = [...sources, ...guide];
writeBlocks(blocks, join(ROOT, '.build/doc-examples-observability'));

/** The bodies of the ```<lang> fences of the section, in order. */
function fences(lang: string): string[] {
  const out: string[] = [];
  let section = '';
  let open: string[] | undefined;
  for (const line of readFileSync(join(ROOT, GUIDE), 'utf8').split('\n')) {
    if (open !== undefined) {
      if (/^```\s*$/.test(line)) {
        out.push(open.join('\n'));
        open = undefined;
      } else open.push(line);
      continue;
    }
    if (line.startsWith('## ')) section = line.slice(3).trim();
    else if (section === SECTION && line === '```' + lang) open = [];
  }
  return out;
}

test('the section and the sources have examples', () => {
  expect(sources.length).toBeGreaterThanOrEqual(2);
  expect(guide.length).toBeGreaterThanOrEqual(1);
});

test('every example type-checks', () => {
  expect(typeCheck(blocks)).toEqual([]);
});

describe('every example runs', () => {
  test.each(sources.map((b) => [b.where, b] as const))('%s', async (_where, block) => {
    await import(block.file as string);
  });
});

test('the support desk prints the text tree and the Mermaid diagram the guide shows', async () => {
  const desk = guide.find((b) => b.code.includes('examples/support-desk.ts'));
  expect(desk).toBeDefined();
  const printed: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')));
  try {
    await import((desk as { file: string }).file);
  } finally {
    log.mockRestore();
  }
  expect(printed).toHaveLength(2);
  expect(printed[0]).toBe(fences('text')[0]);
  expect(printed[1]).toBe(fences('mermaid')[0]);
});
