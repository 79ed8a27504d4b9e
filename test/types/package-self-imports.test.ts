/**
 * The examples import polestar by its package name ('polestar-di', 'polestar-di/testing',
 * ...), as a user who copies them does. At run time Node resolves those names through
 * package.json "exports" to dist/; type-checking (tsconfig.json "paths") and Jest
 * (moduleNameMapper) read them from the sources, so a clean clone type-checks without a
 * build. These tests keep the three in step: every "exports" entry, and nothing else, is
 * mapped to the source file its dist/ target is compiled from.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as root from '../../src/index.js';
import * as testing from '../../src/testing/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, { types: string; default: string }>;
};

/** Each exported specifier with the source file its dist/ JavaScript target is built from. */
const entries = Object.entries(pkg.exports).map(([key, target]) => {
  const js = target.default;
  if (!/^\.\/dist\/.+\.js$/.test(js)) throw new Error(`package.json exports["${key}"].default is ${js}, not ./dist/<file>.js`);
  return {
    spec: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`,
    source: `./src/${js.slice('./dist/'.length, -'.js'.length)}.ts`,
  };
});

const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
if (parsed === undefined) throw new Error('tsconfig.json could not be read');

test('tsconfig.json "paths" maps exactly the "exports" entries, each to its source file', () => {
  const paths = parsed.options.paths ?? {};
  expect(Object.keys(paths).sort()).toEqual(entries.map((e) => e.spec).sort());
  for (const e of entries) expect({ spec: e.spec, to: paths[e.spec] }).toEqual({ spec: e.spec, to: [e.source] });
});

test('TypeScript resolves every package name an example imports to the source file', () => {
  const from = join(ROOT, 'examples', 'quickstart.ts');
  for (const e of entries) {
    const r = ts.resolveModuleName(e.spec, from, parsed.options, ts.sys, undefined, undefined, ts.ModuleKind.ESNext);
    const got = r.resolvedModule === undefined ? undefined : `./${relative(ROOT, r.resolvedModule.resolvedFileName).split('\\').join('/')}`;
    expect({ spec: e.spec, resolved: got }).toEqual({ spec: e.spec, resolved: e.source });
  }
});

test('under Jest the package names load the same modules as the sources', async () => {
  expect(await import('polestar-di')).toBe(root);
  expect(await import('polestar-di/testing')).toBe(testing);
});

test('every example imports polestar by its package name, never from ../src', () => {
  const examples = ts.sys.readDirectory(join(ROOT, 'examples'), ['.ts']);
  expect(examples.length).toBeGreaterThan(0);
  for (const file of examples) {
    const text = readFileSync(file, 'utf8');
    const relativeSrc = [...text.matchAll(/from '(\.\.?\/[^']*)'/g)].map((m) => m[1]).filter((s) => /(^|\/)src\//.test(s));
    expect({ file: relative(ROOT, file), relativeSrc }).toEqual({ file: relative(ROOT, file), relativeSrc: [] });
  }
});
