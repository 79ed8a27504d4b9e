/**
 * `events/` is generic machinery below the features: each feature (tools, prompts, agents,
 * sessions, …) declares its own events by declaration merging and reserves its own prefixes,
 * so no file under src/events/ imports a feature. This test reads every import of every file
 * there (value and type imports, side-effect imports, export-from, dynamic `import()`,
 * `declare module` augmentations, triple-slash references) with the TypeScript API and
 * refuses any module outside the folders events/ may build on.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const EVENTS = join(SRC, 'events');

/**
 * What events/ may import besides itself, each with why it sits below the features. Folders
 * end in `/`; anything else names one file.
 */
const ALLOWED: ReadonlyArray<readonly [string, string]> = [
  ['util/', 'the leaf helpers'],
  ['context/', 'contexts, tokens, the server and its plugin contract'],
  ['lifetime/', 'the lifetime kernel contexts embed'],
  ['disposal/', 'ownership of a registration by its context (the lifetime layer)'],
  ['scope/', 'scope keys, layers and the context-view base (the registry layer below the features)'],
  ['observability/logger.ts', "the logger seam (context/server.ts reports through it too); not the rest of observability/, which reads the features"],
];

/** The `// moved: …` marker of a re-export left behind for callers that are not updated yet (removed by the lead). */
const SHIM = '// moved: shim (remove once imports are updated)';

/** Every module specifier `text` refers to, by the TypeScript pre-processor (imports, export-from, import(), augmentations, references). */
function specifiers(text: string): { spec: string; line: string }[] {
  const info = ts.preProcessFile(text, true, true);
  const lines = text.split('\n');
  const lineOf = (pos: number) => lines[text.slice(0, pos).split('\n').length - 1] ?? '';
  return [...info.importedFiles, ...info.referencedFiles, ...(info.ambientExternalModules ?? []).map((fileName) => ({ fileName, pos: text.indexOf(fileName), end: 0 }))].map((f) => ({
    spec: f.fileName,
    line: lineOf(f.pos),
  }));
}

/** The src/-relative path (`tools/events.ts`) a relative specifier of `file` names, `undefined` for a package. */
function target(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return relative(SRC, resolve(dirname(file), spec)).split(sep).join('/').replace(/\.js$/, '.ts');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('src/events/ imports no feature', () => {
  test('the import reader sees every form of import', () => {
    const text = [
      '/// <reference path="../observability/i.ts" />',
      "import { a } from '../tools/a.js';",
      "import type { B } from '../prompts/b.js';",
      "import '../agents/c.js';",
      "export { d } from '../sessions/d.js';",
      "export type { E } from '../conversation/e.js';",
      "export * from '../adapters/f.js';",
      "const g = () => import('../otel.js');",
      "declare module '../testing/h.js' { interface H { x: 1 } }",
    ].join('\n');
    expect(specifiers(text).map((s) => s.spec).sort()).toEqual(
      ['../adapters/f.js', '../agents/c.js', '../conversation/e.js', '../observability/i.ts', '../otel.js', '../prompts/b.js', '../sessions/d.js', '../testing/h.js', '../tools/a.js'].sort(),
    );
  });

  test('every file under src/events/ imports only events/ and the layers below the features', () => {
    const files = filesUnder(EVENTS);
    expect(files.map((f) => relative(SRC, f).split(sep).join('/'))).toEqual(expect.arrayContaining(['events/bus.ts', 'events/event-map.ts', 'events/events.ts', 'events/reserved.ts']));
    const refused: string[] = [];
    let seen = 0;
    for (const file of files) {
      for (const { spec, line } of specifiers(readFileSync(file, 'utf8'))) {
        const to = target(file, spec);
        if (to === undefined) continue;
        seen++;
        if (to.startsWith('events/')) continue;
        if (ALLOWED.some(([allowed]) => (allowed.endsWith('/') ? to.startsWith(allowed) : to === allowed))) continue;
        if (line.trimEnd().endsWith(SHIM)) continue;
        refused.push(`${relative(ROOT, file)} imports ${spec} (src/${to})`);
      }
    }
    expect(seen).toBeGreaterThan(5);
    expect(refused).toEqual([]);
  });

  test('EventMap in src/events/ lists no event: the features add theirs by declaration merging', () => {
    const file = join(EVENTS, 'event-map.ts');
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const decl = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'EventMap');
    expect(decl).toBeDefined();
    expect(decl?.members.map((m) => m.name?.getText(sf))).toEqual([]);
  });
});
