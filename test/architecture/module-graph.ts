/**
 * The module graph of `src/`, read from the sources with the TypeScript API (no build):
 * every file, its line count, and the files of `src/` it names in an import, an
 * `import type`, an `export … from`, an `import('…')` call or an `import('…')` type.
 * Specifiers are resolved with the project's compiler options, so `'./util/index.js'` is an
 * edge to `util/index.ts`; a specifier that resolves outside `src/` (a package) has no target.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The sources' root. */
export const SRC = join(ROOT, 'src');

/** How a module names another. */
export type EdgeKind = 'import' | 'import type' | 'side-effect import' | 'export from' | 'dynamic import' | 'import type()';

/** One import-like statement of a module. */
export interface ModuleEdge {
  /** The specifier as written (`'../util/index.js'`). */
  readonly specifier: string;
  /** The file it resolves to, relative to `src/` (`'util/index.ts'`), or undefined outside `src/`. */
  readonly target: string | undefined;
  readonly kind: EdgeKind;
  /**
   * The names it takes from the target, as the target exports them (`import { a as b }`
   * gives `a`); `'default'` for a default import, `'*'` for a namespace import, an
   * `export *`, a dynamic import or an `import('…')` type without a qualifier.
   */
  readonly names: readonly string[];
  /** 1-based line of the statement. */
  readonly line: number;
}

/** One module of `src/`. */
export interface ModuleNode {
  /** Path relative to `src/`, with forward slashes (`'context/server.ts'`). */
  readonly file: string;
  /** Number of lines (a trailing newline does not start a line). */
  readonly lines: number;
  readonly edges: readonly ModuleEdge[];
  /** The parsed source, for rules that look at its statements. */
  readonly source: ts.SourceFile;
}

/** The module graph: every `.ts` file of `src/` by its path relative to `src/`. */
export type ModuleGraph = ReadonlyMap<string, ModuleNode>;

function toSrcPath(absolute: string): string {
  return relative(SRC, absolute).split('\\').join('/');
}

/** Every `.ts` file under `dir`, relative to `src/`, sorted. */
function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(full));
    else if (entry.isFile() && entry.name.endsWith('.ts')) out.push(toSrcPath(full));
  }
  return out.sort();
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  if (config.error !== undefined) {
    throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(config.error.messageText, '\n')}`);
  }
  return ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
}

/** Lines of a text, as an editor numbers them. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

interface RawEdge {
  readonly specifier: string;
  readonly kind: EdgeKind;
  readonly names: readonly string[];
  readonly node: ts.Node;
}

function importNames(clause: ts.ImportClause | undefined): string[] {
  if (clause === undefined) return [];
  const names: string[] = [];
  if (clause.name !== undefined) names.push('default');
  const bindings = clause.namedBindings;
  if (bindings !== undefined && ts.isNamespaceImport(bindings)) names.push('*');
  if (bindings !== undefined && ts.isNamedImports(bindings)) {
    for (const el of bindings.elements) names.push((el.propertyName ?? el.name).text);
  }
  return names;
}

function exportNames(decl: ts.ExportDeclaration): string[] {
  const clause = decl.exportClause;
  if (clause === undefined || ts.isNamespaceExport(clause)) return ['*'];
  return clause.elements.map((el) => (el.propertyName ?? el.name).text);
}

/** The import-like statements of one parsed file, unresolved. */
function collectSpecifiers(source: ts.SourceFile): RawEdge[] {
  const found: RawEdge[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const kind: EdgeKind = clause === undefined ? 'side-effect import' : clause.isTypeOnly ? 'import type' : 'import';
      found.push({ specifier: node.moduleSpecifier.text, kind, names: importNames(clause), node });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, kind: 'export from', names: exportNames(node), node });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, kind: 'import', names: ['*'], node });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, kind: 'dynamic import', names: ['*'], node });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const q = node.qualifier;
      const first = q === undefined ? '*' : ts.isIdentifier(q) ? q.text : leftmost(q);
      found.push({ specifier: node.argument.literal.text, kind: 'import type()', names: [first], node });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function leftmost(name: ts.QualifiedName): string {
  let at: ts.EntityName = name;
  while (ts.isQualifiedName(at)) at = at.left;
  return at.text;
}

/** Reads every module of `src/` and resolves its imports. */
export function readModuleGraph(): ModuleGraph {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const graph = new Map<string, ModuleNode>();
  for (const file of listSources(SRC)) {
    const absolute = join(SRC, file);
    const text = readFileSync(absolute, 'utf8');
    const source = ts.createSourceFile(absolute, text, ts.ScriptTarget.ES2022, true);
    const edges = collectSpecifiers(source).map(({ specifier, kind, names, node }): ModuleEdge => {
      const resolved = ts.resolveModuleName(specifier, absolute, options, host).resolvedModule;
      let target: string | undefined;
      if (resolved !== undefined && resolved.isExternalLibraryImport !== true) {
        const inSrc = toSrcPath(resolve(resolved.resolvedFileName));
        if (!inSrc.startsWith('..')) target = inSrc;
      }
      if (specifier.startsWith('.') && target === undefined) {
        throw new Error(`src/${file}: the relative import '${specifier}' does not resolve to a file of src/`);
      }
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      return { specifier, target, kind, names, line };
    });
    graph.set(file, { file, lines: countLines(text), edges, source });
  }
  return graph;
}

/** The folder of a module relative to `src/` (`'context'`), or `''` for a file at the root of `src/`. */
export function folderOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? '' : file.slice(0, slash);
}

/** The distinct files of `src/` a module imports. */
export function targetsOf(graph: ModuleGraph, file: string): string[] {
  const out = new Set<string>();
  for (const e of graph.get(file)?.edges ?? []) if (e.target !== undefined) out.add(e.target);
  return [...out];
}

/**
 * The strongly connected components of the graph that are cycles: more than one module, or
 * one module that imports itself. Each is a set of modules that all reach each other through
 * imports; its modules are sorted, and the components are sorted by their first module.
 */
export function importCycles(graph: ModuleGraph): string[][] {
  // Tarjan's algorithm, with an explicit stack so a deep graph cannot overflow the call stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const numberOf = (m: Map<string, number>, file: string): number => m.get(file) ?? Number.POSITIVE_INFINITY;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const frames: { file: string; succ: string[]; i: number }[] = [];
    const open = (file: string): void => {
      index.set(file, next);
      low.set(file, next);
      next++;
      stack.push(file);
      onStack.add(file);
      frames.push({ file, succ: targetsOf(graph, file), i: 0 });
    };
    open(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      if (frame.i < frame.succ.length) {
        const to = frame.succ[frame.i++];
        if (!index.has(to)) open(to);
        else if (onStack.has(to)) low.set(frame.file, Math.min(numberOf(low, frame.file), numberOf(index, to)));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent !== undefined) low.set(parent.file, Math.min(numberOf(low, parent.file), numberOf(low, frame.file)));
      if (numberOf(low, frame.file) !== numberOf(index, frame.file)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
        if (member === frame.file) break;
      }
      const selfLoop = component.length === 1 && targetsOf(graph, component[0]).includes(component[0]);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  }
  return components.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * The shortest import path inside a component that leaves `from` and comes back to it
 * (`['a.ts', 'b.ts', 'a.ts']`), found by a breadth-first walk that stays in the component.
 */
export function cyclePath(graph: ModuleGraph, component: readonly string[], from: string = component[0]): string[] {
  const members = new Set(component);
  const previous = new Map<string, string>();
  const queue: string[] = [from];
  for (let q = 0; q < queue.length; q++) {
    const file = queue[q];
    for (const to of targetsOf(graph, file)) {
      if (!members.has(to)) continue;
      if (to === from) {
        const inner: string[] = [];
        for (let at: string | undefined = file; at !== undefined && at !== from; at = previous.get(at)) inner.unshift(at);
        return [from, ...inner, from];
      }
      if (!previous.has(to) && to !== from) {
        previous.set(to, file);
        queue.push(to);
      }
    }
  }
  return [from];
}

/** `src/a.ts:3 → src/b.ts` for each edge of `file` whose target `bad` accepts. */
export function offendingImports(graph: ModuleGraph, file: string, bad: (edge: ModuleEdge) => boolean): string[] {
  const node = graph.get(file);
  if (node === undefined) return [];
  return node.edges.filter(bad).map((e) => `src/${file}:${e.line} ${e.kind} ${e.target === undefined ? `'${e.specifier}'` : `src/${e.target}`}`);
}
