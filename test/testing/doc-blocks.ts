/**
 * Extracts the ```ts code blocks of TSDoc comments and Markdown guides, turns each into a
 * module importing polestar from the sources, type-checks them all with the project's
 * compiler options, and writes them where a test can import (run) them.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** One code block: where it came from and its text. */
export interface DocBlock {
  /** `path:line` of the opening fence. */
  readonly where: string;
  readonly code: string;
  /** The generated module (absolute path), set by {@link writeBlocks}. */
  file?: string;
}

/**
 * The ```ts blocks of a source file's doc comments (or of a Markdown file). For a Markdown
 * file shared between rooms, `sections` keeps only the blocks under those `## ` headings.
 */
export function extractBlocks(path: string, sections?: readonly string[]): DocBlock[] {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const markdown = path.endsWith('.md');
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  let open: { line: number; body: string[] } | undefined;
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = markdown ? lines[i] : lines[i].replace(/^\s*\* ?/, '');
    if (open === undefined) {
      if (markdown && line.startsWith('## ')) section = line.slice(3).trim();
      const wanted = sections === undefined || sections.includes(section);
      if (wanted && /^```ts\s*$/.test(line)) open = { line: i + 1, body: [] };
    } else if (/^```\s*$/.test(line)) {
      blocks.push({ where: `${path}:${open.line}`, code: open.body.join('\n') + '\n' });
      open = undefined;
    } else {
      open.body.push(line);
    }
  }
  if (open !== undefined) throw new Error(`${path}:${open.line}: unterminated code block`);
  return blocks;
}

/** Writes each block as a module under `dir` (imports of polestar-di point at the sources). */
export function writeBlocks(blocks: DocBlock[], dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const src = relative(dir, join(ROOT, 'src')).split('\\').join('/');
  blocks.forEach((b, i) => {
    const file = join(dir, `block${i}.ts`);
    const code = b.code
      .replace(/from 'polestar-di\/testing'/g, `from '${src}/testing/index.js'`)
      .replace(/from 'polestar-di'/g, `from '${src}/index.js'`);
    writeFileSync(file, `// ${b.where}\n${code}\nexport {};\n`);
    b.file = file;
  });
}

/** Type-checks the written blocks with the project's compiler options; returns one message per error. */
export function typeCheck(blocks: DocBlock[]): string[] {
  const configPath = join(ROOT, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(
    blocks.map((b) => b.file as string),
    { ...parsed.options, noEmit: true, rootDir: ROOT },
  );
  const byFile = new Map(blocks.map((b) => [b.file as string, b]));
  const out: string[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const msg = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const file = d.file?.fileName;
    const block = file === undefined ? undefined : byFile.get(resolve(file));
    if (block !== undefined && d.file !== undefined && d.start !== undefined) {
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      out.push(`${block.where} (+${line} lines): ${msg}`);
    } else {
      out.push(`${file ?? 'config'}: ${msg}`);
    }
  }
  return out;
}
