// The README's tutorial, run the way a reader runs it. Every ```ts block names the file it
// belongs to on its first line (`// desk.ts`; `// desk.ts (continued)` appends to it). The
// files are type-checked with the README's own tsconfig.json block (against polestar's
// sources), then compiled and run with `node --test` in a child process, against the
// compiled polestar in .build/src (made by `npm test`'s pretest, `npm run build:run`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT, extractBlocks, type DocBlock } from '../testing/doc-blocks.js';

const DIR = join(ROOT, '.build/readme'); // under .build: ignored by git, eslint and tsc
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's ```json block: the tsconfig.json a reader copies. */
function readerTsconfig(): ts.CompilerOptions {
  const json = /```json\n([\s\S]*?)\n```/.exec(readme);
  if (json === null) throw new Error('README.md has no ```json tsconfig block');
  const config = JSON.parse(json[1]) as { compilerOptions: object };
  const parsed = ts.convertCompilerOptionsFromJson(config.compilerOptions, DIR);
  if (parsed.errors.length > 0) throw new Error(ts.flattenDiagnosticMessageText(parsed.errors[0].messageText, '\n'));
  return parsed.options;
}

/** The ```ts blocks grouped into the files they name, in order. */
function readerFiles(): Map<string, DocBlock[]> {
  const files = new Map<string, DocBlock[]>();
  for (const block of extractBlocks('README.md')) {
    const named = /^\/\/ ([\w.-]+\.ts)( \(continued\))?\n/.exec(block.code);
    if (named === null) throw new Error(`${block.where}: a README block must start with "// <file>.ts"`);
    const [, name, continued] = named;
    if ((continued !== undefined) !== files.has(name)) {
      throw new Error(`${block.where}: "${name}" ${continued ? 'is continued before it starts' : 'starts twice (mark later blocks "(continued)")'}`);
    }
    files.set(name, [...(files.get(name) ?? []), block]);
  }
  return files;
}

const options = readerTsconfig();
const files = readerFiles();
rmSync(DIR, { recursive: true, force: true });
mkdirSync(join(DIR, 'run'), { recursive: true });

/** Writes `name` with its polestar imports pointing at `target` (a directory holding index.js and testing/index.js). */
function write(dir: string, name: string, target: string): string {
  const rel = relative(dir, target).split('\\').join('/');
  const code = (files.get(name) ?? [])
    .map((b) => b.code)
    .join('')
    .replace(/from 'polestar-di\/testing'/g, `from '${rel}/testing/index.js'`)
    .replace(/from 'polestar-di'/g, `from '${rel}/index.js'`);
  const file = join(dir, name);
  writeFileSync(file, code);
  return code;
}

/** `README.md:<line>` of line `line` (0-based) of a generated file; other files as they are. */
function readmeLine(file: string, line: number): string {
  const blocks = files.get(relative(DIR, file));
  if (blocks === undefined) return `${relative(ROOT, file)}:${line + 1}`;
  for (const b of blocks) {
    const lines = b.code.split('\n').length - 1;
    if (line < lines) return `README.md:${Number(b.where.split(':')[1]) + 1 + line}`;
    line -= lines;
  }
  return `${relative(ROOT, file)}:?`;
}

test('the tutorial has an app and a test file', () => {
  expect([...files.keys()]).toEqual(['desk.ts', 'desk.test.ts']);
  expect(files.get('desk.ts')?.length).toBeGreaterThanOrEqual(4);
});

test("the tutorial type-checks with the README's tsconfig.json", () => {
  for (const name of files.keys()) write(DIR, name, join(ROOT, 'src'));
  const roots = [...files.keys()].map((n) => join(DIR, n));
  const program = ts.createProgram(roots, { ...options, noEmit: true });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file === undefined || d.start === undefined ? '' : `${readmeLine(d.file.fileName, d.file.getLineAndCharacterOfPosition(d.start).line)}: `;
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
  expect(errors).toEqual([]);
});

test('the tutorial passes under node --test', () => {
  const compiled = join(ROOT, '.build/src');
  expect(existsSync(join(compiled, 'index.js'))).toBe(true); // run `npm run build:run` first
  const run = join(DIR, 'run');
  for (const name of files.keys()) {
    const code = write(run, name, compiled);
    const js = ts.transpileModule(code, {
      compilerOptions: { ...options, module: ts.ModuleKind.ESNext, moduleResolution: undefined, sourceMap: false },
      fileName: name,
    });
    writeFileSync(join(run, name.replace(/\.ts$/, '.js')), js.outputText);
  }
  const tests = [...files.keys()].filter((n) => n.endsWith('.test.ts')).map((n) => n.replace(/\.ts$/, '.js'));
  const child = spawnSync(process.execPath, ['--test', ...tests], { cwd: run, encoding: 'utf8', timeout: 60_000 });
  const report = `${child.stdout}\n${child.stderr}`;
  expect({ status: child.status, report }).toEqual({ status: 0, report: expect.stringMatching(/# pass [1-9]/) });
  expect(report).toMatch(/# fail 0/);
});
