// Conventions of the code base that a reviewer would otherwise check by hand, read from the
// sources with the TypeScript API: every public error class is branded, tests reach
// internals only through the probe, util/'s small pieces exist once, comments carry no
// benchmark figures, and docs/architecture.md names every folder and only files that exist.
// As in layers.test.ts, a breach the code has today is pinned by a `test.failing` naming
// it: fix the code, then remove the entry (the rule's own test holds everything else to it).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT, SRC, readModuleGraph } from './module-graph.js';

const graph = readModuleGraph();

/** `describe.each` over a list of known breaches, which may be empty (Jest refuses an empty table). */
function describeEach<T>(table: readonly T[], name: string, fn: (row: T) => void): void {
  if (table.length > 0) describe.each(table.map((row) => [row] as const))(name, fn);
}

/** Throws one error naming the rule and every offender, one a line. */
function assertNone(rule: string, offenders: readonly string[]): void {
  if (offenders.length > 0) throw new Error(`${rule}\n  ${offenders.join('\n  ')}`);
}

const where = (source: ts.SourceFile, node: ts.Node, root = SRC): string =>
  `${relative(root, source.fileName).split('\\').join('/')}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (c) => walk(c, visit));
}

// ---------------------------------------------------------------------------------------------
// Every error class an entry exports has `static readonly is = branded(this, '<its name>')`.

/** The files behind the `package.json` "exports" entries. */
const ENTRIES = ['index.ts', 'sessions.ts', 'otel.ts', 'testing/index.ts', 'adapters/index.ts', 'adapters/ai-sdk.ts', 'adapters/openai-agents.ts', 'sessions/sqlite.ts', 'sessions/postgres.ts'];

interface ExportedError {
  readonly name: string;
  readonly decl: ts.ClassDeclaration;
  readonly entries: string[];
}

/** The classes the entries export whose instances are `Error`s, by name, with the entries that export each. */
function exportedErrorClasses(): Map<string, ExportedError> {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
  const program = ts.createProgram(
    ENTRIES.map((e) => join(SRC, e)),
    { ...options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const isError = (type: ts.Type): boolean => {
    const seen = new Set<ts.Type>();
    const stack = [type];
    while (stack.length > 0) {
      const t = stack.pop() as ts.Type;
      if (seen.has(t)) continue;
      seen.add(t);
      if (t.symbol?.name === 'Error' && t.symbol.declarations?.some((d) => d.getSourceFile().isDeclarationFile)) return true;
      if (t.isClassOrInterface()) stack.push(...(checker.getBaseTypes(t) ?? []));
    }
    return false;
  };
  const found = new Map<string, ExportedError>();
  for (const entry of ENTRIES) {
    const source = program.getSourceFile(join(SRC, entry));
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`src/${entry}: not read as a module`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const decl = symbol.declarations?.find(ts.isClassDeclaration);
      if (decl === undefined || !(symbol.flags & ts.SymbolFlags.Class)) continue;
      if (!isError(checker.getDeclaredTypeOfSymbol(symbol))) continue;
      const known = found.get(exported.name);
      if (known !== undefined) known.entries.push(entry);
      else found.set(exported.name, { name: exported.name, decl, entries: [entry] });
    }
  }
  return found;
}

/** What is wrong with the brand of an exported error class, or `undefined` when it is right. */
function brandProblem(e: ExportedError): string | undefined {
  const member = e.decl.members.find(
    (m): m is ts.PropertyDeclaration =>
      ts.isPropertyDeclaration(m) && ts.isIdentifier(m.name) && m.name.text === 'is' && (ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static) !== 0,
  );
  const at = `src/${where(e.decl.getSourceFile(), e.decl)} ${e.name} (exported by ${e.entries.map((x) => `src/${x}`).join(', ')})`;
  if (member === undefined) return `${at}: no \`static readonly is = branded(this, '${e.name}')\``;
  const init = member.initializer;
  const brandedCall =
    init !== undefined && ts.isCallExpression(init) && ts.isIdentifier(init.expression) && init.expression.text === 'branded' && init.arguments.length === 2;
  if (!brandedCall) return `${at}: its static is is not \`branded(this, '${e.name}')\``;
  const [self, label] = init.arguments;
  if (self.kind !== ts.SyntaxKind.ThisKeyword || !ts.isStringLiteral(label) || label.text !== e.name) {
    return `${at}: its brand must be branded(this, '${e.name}') (a string literal of the public name), got branded(${init.arguments.map((a) => a.getText()).join(', ')})`;
  }
  return undefined;
}

/** Exported error classes without their brand today, each with a failing test. */
const KNOWN_UNBRANDED: readonly string[] = [];

const errorClasses = exportedErrorClasses();

test('every error class an entry exports is branded: static readonly is = branded(this, its name)', () => {
  // The brand test of test/util/brand.test.ts lists classes by hand; this one finds them.
  expect(errorClasses.size).toBeGreaterThanOrEqual(15);
  expect([...errorClasses.keys()]).toEqual(expect.arrayContaining(['ParamError', 'SessionError', 'McpMountError', 'LeakError']));
  const offenders = [...errorClasses.values()].filter((e) => !KNOWN_UNBRANDED.includes(e.name)).flatMap((e) => brandProblem(e) ?? []);
  assertNone("rule: every exported error class has `static readonly is = branded(this, '<Name>')` (src/util/brand.ts), so is() works across copies of the package:", offenders);
});

describeEach(KNOWN_UNBRANDED, 'known unbranded error class %s', (name) => {
  test.failing('is branded', () => {
    const e = errorClasses.get(name);
    assertNone('rule: every exported error class is branded', e === undefined ? [`${name} is no longer exported`] : [brandProblem(e) ?? []].flat());
  });
});

// ---------------------------------------------------------------------------------------------
// Tests reach internals only through src/testing/probe.ts.

/** Every test source file (relative to the repository root), sorted. */
function testFiles(dir = join(ROOT, 'test')): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(relative(ROOT, full).split('\\').join('/'));
  }
  return out.sort();
}

/** The `x._name` and `x['_name']` reads of a source file: places that reach a member named with `_`. */
function underscoreReaches(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, file.endsWith('ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found: string[] = [];
  walk(source, (n) => {
    let name: string | undefined;
    if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.name)) name = n.name.text;
    else if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression)) name = n.argumentExpression.text;
    // `_` and `__x` are the names of throwaway parameters and generated helpers, not members.
    if (name !== undefined && /^_[a-zA-Z]/.test(name)) found.push(`${where(source, n, ROOT)} .${name}`);
  });
  return found;
}

/** Test files that reach `_` members today (relative to the repository root), each with a failing test. */
const KNOWN_INTERNAL_REACHES: readonly string[] = [];

test('no test reaches a `_` member; what the public API can not show goes through src/testing/probe.ts', () => {
  const files = testFiles();
  expect(files.length).toBeGreaterThan(100);
  const offenders = files.filter((f) => !KNOWN_INTERNAL_REACHES.includes(f)).flatMap(underscoreReaches);
  assertNone('rule: tests use the public API, or a function of `probe` (src/testing/probe.ts) when they must read an internal; these reach `_` members:', offenders);
});

test('the internal-reach check sees property and element reads, not throwaway names', () => {
  const source = ts.createSourceFile('x.ts', 'f((..._args) => a._b + a["_c"] + a.__d + a._);', ts.ScriptTarget.ES2022, true);
  const names: string[] = [];
  walk(source, (n) => {
    if (ts.isPropertyAccessExpression(n) && /^_[a-zA-Z]/.test(n.name.text)) names.push(n.name.text);
    if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression) && /^_[a-zA-Z]/.test(n.argumentExpression.text)) names.push(n.argumentExpression.text);
  });
  expect(names).toEqual(['_b', '_c']);
});

describeEach(KNOWN_INTERNAL_REACHES, 'known reach into internals by %s', (file) => {
  test.failing('is gone (use the public API or add a function to the probe)', () => {
    assertNone('rule: tests reach internals only through the probe', underscoreReaches(file));
  });
});

// ---------------------------------------------------------------------------------------------
// util/'s small pieces exist once: the thenable test, the text of a caught error, the field reader.

interface Piece {
  /** What the rule is about, in the message. */
  readonly what: string;
  /** The one module allowed to hold it (relative to src/). */
  readonly home: string;
  /** Whether a node is a hand-written copy of the piece. */
  readonly is: (n: ts.Node) => boolean;
}

/** `typeof <x>.then === 'function'` (or `!==`): a thenable test written out. */
function isThenableTest(n: ts.Node): boolean {
  if (!ts.isBinaryExpression(n)) return false;
  const op = n.operatorToken.kind;
  if (op !== ts.SyntaxKind.EqualsEqualsEqualsToken && op !== ts.SyntaxKind.ExclamationEqualsEqualsToken) return false;
  const sides = [n.left, n.right];
  const typeOfThen = sides.find((s): s is ts.TypeOfExpression => ts.isTypeOfExpression(s));
  if (typeOfThen === undefined || !sides.some((s) => ts.isStringLiteral(s) && s.text === 'function')) return false;
  let e: ts.Expression = typeOfThen.expression;
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) e = e.expression;
  return ts.isPropertyAccessExpression(e) && e.name.text === 'then';
}

/** `<e> instanceof Error ? <e>.message : …`: the text of a caught error written out. */
function isErrorTextCopy(n: ts.Node): boolean {
  if (!ts.isConditionalExpression(n)) return false;
  const c = n.condition;
  return (
    ts.isBinaryExpression(c) &&
    c.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword &&
    ts.isIdentifier(c.right) &&
    c.right.text === 'Error' &&
    ts.isPropertyAccessExpression(n.whenTrue) &&
    n.whenTrue.name.text === 'message'
  );
}

/** `try { return <obj>[key] } catch …` or `try { return <obj>.field } catch …`: a field reader written out. */
function isFieldReaderCopy(n: ts.Node): boolean {
  if (!ts.isTryStatement(n) || n.catchClause === undefined || n.tryBlock.statements.length !== 1) return false;
  const only = n.tryBlock.statements[0];
  if (!ts.isReturnStatement(only) || only.expression === undefined) return false;
  let e: ts.Expression = only.expression;
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) e = e.expression;
  if (!ts.isElementAccessExpression(e) && !ts.isPropertyAccessExpression(e)) return false;
  let target: ts.Expression = e.expression;
  while (ts.isParenthesizedExpression(target) || ts.isAsExpression(target)) target = target.expression;
  return ts.isIdentifier(target);
}

const PIECES: readonly Piece[] = [
  { what: 'the thenable test (isThenable)', home: 'util/is-thenable.ts', is: isThenableTest },
  { what: 'the text of a caught error (errorText)', home: 'util/error-text.ts', is: isErrorTextCopy },
  { what: 'the field reader that names the field (readField)', home: 'util/read-field.ts', is: isFieldReaderCopy },
];

/** The copies of `piece` in src/ outside its home, as `file:line`. */
function copiesOf(piece: Piece): string[] {
  const out: string[] = [];
  for (const [file, node] of graph) {
    if (file === piece.home) continue;
    walk(node.source, (n) => {
      if (piece.is(n)) out.push(where(node.source, n));
    });
  }
  return out;
}

/**
 * Copies in src/ today, by the piece's home, each file with a failing test: import the
 * piece instead, then remove the file here. (A hot path that must keep an inline copy for
 * speed would say why in a comment there and get an allowed list of its own here, with
 * the measurement.)
 */
const KNOWN_COPIES: Readonly<Record<string, readonly string[]>> = {
  'util/is-thenable.ts': [],
  'util/error-text.ts': ['sessions/store/sql/pg-driver.ts'],
  'util/read-field.ts': ['context/plugin.ts', 'sessions/durable/turn.ts'],
};

const fileOf = (at: string): string => at.slice(0, at.lastIndexOf(':'));

describe.each(PIECES.map((p) => [p.what, p] as const))('%s is written once', (_what, piece) => {
  test(`in src/${piece.home}, and nowhere else`, () => {
    const known = KNOWN_COPIES[piece.home] ?? [];
    const offenders = copiesOf(piece).filter((at) => !known.includes(fileOf(at)));
    assertNone(`rule: ${piece.what} lives in src/${piece.home}; import it instead of writing it again:`, offenders.map((at) => `src/${at}`));
  });
});

describeEach(
  PIECES.flatMap((p) => (KNOWN_COPIES[p.home] ?? []).map((file) => [p, file] as const)),
  'known copy',
  ([piece, file]) => {
    test.failing(`of ${piece.what} in src/${file} is gone`, () => {
      assertNone(`rule: ${piece.what} lives in src/${piece.home}`, copiesOf(piece).filter((at) => fileOf(at) === file));
    });
  },
);

test('the copy detectors recognize the shapes they look for, and not the helper calls', () => {
  const nodes = (code: string): ts.Node[] => {
    const out: ts.Node[] = [];
    walk(ts.createSourceFile('x.ts', code, ts.ScriptTarget.ES2022, true), (n) => out.push(n));
    return out;
  };
  expect(nodes("if (v !== null && typeof (v as any).then === 'function') {}").some(isThenableTest)).toBe(true);
  expect(nodes('if (isThenable(v)) {}').some(isThenableTest)).toBe(false);
  expect(nodes("const t = err instanceof Error ? err.message : String(err);").some(isErrorTextCopy)).toBe(true);
  expect(nodes('const t = errorText(err);').some(isErrorTextCopy)).toBe(false);
  expect(nodes('function r(o: object, k: string) { try { return (o as Record<string, unknown>)[k]; } catch { return undefined; } }').some(isFieldReaderCopy)).toBe(true);
  expect(nodes("const v = readField(o, 'k', 'f()');").some(isFieldReaderCopy)).toBe(false);
});

// ---------------------------------------------------------------------------------------------
// Benchmark history lives in docs/performance.md, not in comments of src/.

/** A measured figure: a time in ns or µs, a ratio said faster or slower, or a before → after time. */
const MEASURED = /\b\d[\d.,]*\s*(ns|µs|μs)\b|\b\d[\d.]*\s*[x×]\s+(faster|slower)\b|\b\d[\d.]*\s*(->|→)\s*\d[\d.]*\s*(ns|µs|μs|us|ms)\b/;

/** The comments of a parsed source file, with the line each starts on (read around the tokens, never inside a string). */
function commentsOf(source: ts.SourceFile): { line: number; text: string }[] {
  const seen = new Map<number, ts.CommentRange>();
  const add = (ranges: readonly ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) seen.set(r.pos, r);
  };
  const visit = (n: ts.Node): void => {
    add(ts.getLeadingCommentRanges(source.text, n.getFullStart()));
    add(ts.getTrailingCommentRanges(source.text, n.getEnd()));
    n.getChildren(source).forEach(visit);
  };
  visit(source);
  return [...seen.values()]
    .sort((x, y) => x.pos - y.pos)
    .map((r) => ({ line: source.getLineAndCharacterOfPosition(r.pos).line + 1, text: source.text.slice(r.pos, r.end) }));
}

test('no comment in src/ carries a measured figure (timings and speed-ups go to docs/performance.md)', () => {
  const offenders: string[] = [];
  for (const [file, node] of graph) {
    for (const c of commentsOf(node.source)) {
      const m = MEASURED.exec(c.text);
      if (m !== null) offenders.push(`src/${file}:${c.line + c.text.slice(0, m.index).split('\n').length - 1}: "${m[0]}"`);
    }
  }
  assertNone('rule: comments say why, not how fast it measured; move these figures to docs/performance.md (a comment may link there):', offenders);
});

test('the measured-figure check reads comments only, and knows the figures it looks for', () => {
  const source = ts.createSourceFile('x.ts', "const s = '5 ns';\n// 126 -> 25 us per task\n/** a\n * 1.4x faster */", ts.ScriptTarget.ES2022, true);
  const found = commentsOf(source).filter((c) => MEASURED.test(c.text)).map((c) => c.line);
  expect(found).toEqual([2, 3]);
  expect(MEASURED.test('// hundreds of microseconds: a small LRU pays')).toBe(false);
});

// ---------------------------------------------------------------------------------------------
// docs/architecture.md names every folder of src/ and only files that exist.

const PAGE = 'docs/architecture.md';
const page = readFileSync(join(ROOT, PAGE), 'utf8');

/** Every folder of src/ (relative to src/), sorted. */
function folders(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const full = join(dir, entry.name);
    out.push(relative(SRC, full).split('\\').join('/'), ...folders(full));
  }
  return out.sort();
}

test(`${PAGE} names every folder of src/`, () => {
  const all = folders();
  expect(all.length).toBeGreaterThan(15);
  // A folder is named as `name/` in code, with enough of its path to tell it apart (`store/`, `sql/`).
  const named = (folder: string): boolean => folder.split('/').some((_, i, parts) => page.includes(`\`${parts.slice(i).join('/')}/\``));
  assertNone(`rule: ${PAGE} says what each folder of src/ holds; these folders are not named (as \`folder/\`):`, all.filter((f) => !named(f)));
});

test(`every .ts file ${PAGE} names exists`, () => {
  const names = [...new Set([...page.matchAll(/`([^`\s]+\.ts)`/g)].map((m) => m[1]))];
  expect(names.length).toBeGreaterThan(30);
  const sources = [...graph.keys()];
  const tests = testFiles();
  const exists = (name: string): boolean => {
    const path = name.replace(/^src\//, '');
    if (name.includes('/')) return sources.some((f) => f === path || f.endsWith(`/${path}`)) || tests.includes(name);
    return sources.some((f) => f === name || f.endsWith(`/${name}`)) || tests.some((f) => f.endsWith(`/${name}`));
  };
  assertNone(`rule: ${PAGE} names only files that exist; rename or drop these:`, names.filter((n) => !exists(n)));
});
