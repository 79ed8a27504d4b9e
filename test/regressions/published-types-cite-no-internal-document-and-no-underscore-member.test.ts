// The published .d.ts files carried references to documents users do not have ("SPEC
// §10.2", "issue 8 #5", "contract C1": 45 of them) and an `_`-prefixed member
// (`RegistryEntry._published`: its interface was tagged @internal, but scripts/build.cjs
// strips tagged *members*, so the untagged member stayed). `npm run check:pack` now scans
// the packed declarations with `scanDeclarations` and fails, listing file:line; this file
// tests that scan, and that the sources (which ship too) cite no internal document.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { ROOT } from '../testing/doc-blocks.js';

type Scan = (files: { file: string; text: string }[]) => string[];
const { scanDeclarations, findInternalReferences } = createRequire(import.meta.url)('../../scripts/check-pack.cjs') as {
  scanDeclarations: Scan;
  findInternalReferences: (file: string, text: string) => string[];
};

const leaky = `/**
 * The calls in flight of one context (SPEC 10.2, contract C1): one group per context.
 */
export interface RegistryEntry {
    readonly id: string;
    readonly _published: boolean;
}
/** Kept in a bounded LRU once released (issue 8 #5); see SPEC §11.1. */
export declare class Cache {
    private _size;
    get _count(): number;
    _drop(key: string): void;
    /** Section §12 says so. */
    read(options: { _raw?: boolean }): void;
}
export declare function _helper(): void;
`;

const clean = `/**
 * The calls in flight of one context: one group per context. Issues a warning when
 * a contract is broken (see the docs).
 */
export interface RegistryEntry {
    readonly id: string;
    readonly isDisposed: boolean;
}
export declare class Instrumentation {
    constructor(internal: { readonly 'polestar internal constructor': never });
    setMeterProvider(_meterProvider: unknown): void;
    /** Reads \`ctx._track(work)\`'s record (named in prose, not declared). */
    read(): string;
}
`;

test('a leaky declaration file: every reference and every _-prefixed member or name is listed with file:line', () => {
  const findings = scanDeclarations([{ file: 'dist/tools/in-flight.d.ts', text: leaky }]);
  const where = findings.map((f) => /^([^:]+:\d+): (cites|publishes) .*?"([^"]+)"/.exec(f)?.slice(1));
  expect(where).toEqual([
    ['dist/tools/in-flight.d.ts:2', 'cites', 'SPEC 1'],
    ['dist/tools/in-flight.d.ts:2', 'cites', 'contract C1'],
    ['dist/tools/in-flight.d.ts:8', 'cites', 'SPEC §'],
    ['dist/tools/in-flight.d.ts:8', 'cites', '§1'],
    ['dist/tools/in-flight.d.ts:8', 'cites', 'issue 8'],
    ['dist/tools/in-flight.d.ts:13', 'cites', '§1'],
    ['dist/tools/in-flight.d.ts:6', 'publishes', '_published'],
    ['dist/tools/in-flight.d.ts:10', 'publishes', '_size'],
    ['dist/tools/in-flight.d.ts:11', 'publishes', '_count'],
    ['dist/tools/in-flight.d.ts:12', 'publishes', '_drop'],
    ['dist/tools/in-flight.d.ts:14', 'publishes', '_raw'],
    ['dist/tools/in-flight.d.ts:16', 'publishes', '_helper'],
  ]);
  // The message says what to do.
  expect(findings.find((f) => f.includes('_published'))).toContain('tag it @internal');
  expect(findings[0]).toContain('a document users do not have');
});

test('a clean declaration file passes: prose, _-prefixed parameters and names inside comments are allowed', () => {
  expect(scanDeclarations([{ file: 'dist/otel/instrumentation.d.ts', text: clean }])).toEqual([]);
});

test('files are scanned in the order given, each finding naming its own file', () => {
  const findings = scanDeclarations([
    { file: 'dist/a.d.ts', text: clean },
    { file: 'dist/b.d.ts', text: 'export interface B {\n    _x: number;\n}\n' },
    { file: 'dist/c.d.ts', text: '/** see issue 27 */\nexport type C = 1;\n' },
  ]);
  expect(findings.map((f) => f.split(': ')[0])).toEqual(['dist/b.d.ts:2', 'dist/c.d.ts:1']);
});

test('the sources (shipped beside dist/) cite no internal document', () => {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
  const files = walk(join(ROOT, 'src'));
  expect(files.length).toBeGreaterThan(50);
  const findings = files.flatMap((f) => findInternalReferences(relative(ROOT, f), readFileSync(f, 'utf8')));
  expect(findings).toEqual([]);
});
