// The layering of src/ (docs/architecture.md), checked on the sources through the file system
// and the TypeScript API, so that it cannot drift without a red test: file sizes, import
// cycles, what events/, util/ and lifetime/ may import, and what the root entry re-exports.
// A rule the code breaks today is pinned by a `test.failing` naming the file: fix the code,
// then remove that entry (the rule's own test already holds every other file to it).
import { cyclePath, folderOf, importCycles, offendingImports, readModuleGraph, type ModuleEdge } from './module-graph.js';

const graph = readModuleGraph();
const files = [...graph.keys()];

/**
 * `describe.each` over a list of known violations, which may be empty (Jest refuses an empty
 * table): a list emptied by a fix leaves its failing tests out instead of erroring.
 */
function describeEach<T>(table: readonly T[], name: string, fn: (row: T) => void): void {
  if (table.length > 0) describe.each(table.map((row) => [row] as const))(name, fn);
}

/** Throws one error naming the rule and every offender, one a line. */
function assertNone(rule: string, offenders: readonly string[]): void {
  if (offenders.length > 0) throw new Error(`${rule}\n  ${offenders.join('\n  ')}`);
}

// ---------------------------------------------------------------------------------------------
// Every file in src/ is at most 600 lines.

const MAX_LINES = 600;
/** Files over the limit (relative to src/), each with a failing test below until it is split. None today. */
const KNOWN_LONG: readonly string[] = [];

test(`every file in src/ is at most ${MAX_LINES} lines`, () => {
  expect(files.length).toBeGreaterThan(100);
  const over = files
    .filter((f) => !KNOWN_LONG.includes(f))
    .map((f) => graph.get(f))
    .flatMap((n) => (n !== undefined && n.lines > MAX_LINES ? [`src/${n.file}: ${n.lines} lines`] : []));
  assertNone(`rule: every file in src/ is at most ${MAX_LINES} lines; split these by what they hold:`, over);
});

// A known over-long file: split it, then remove it from KNOWN_LONG.
describeEach(KNOWN_LONG, 'known over-long file src/%s', (file) => {
  test.failing(`is at most ${MAX_LINES} lines`, () => {
    const lines = graph.get(file)?.lines ?? 0;
    assertNone(`rule: every file in src/ is at most ${MAX_LINES} lines`, lines > MAX_LINES ? [`src/${file}: ${lines} lines`] : []);
  });
});

// ---------------------------------------------------------------------------------------------
// Import cycles (value and type imports, export-from included).

/**
 * The one cycle allowed: `ctx.run`, `ctx.execute` and `ctx.resolve` are methods of the context
 * that call into system/, execution/ and container/, which know the context's type. These files
 * form it; a component made only of them passes, any other file in a cycle fails.
 */
const ALLOWED_CYCLE: readonly string[] = [
  'container/resolve.ts',
  'context/local-disposal.ts',
  'context/lookup-errors.ts',
  'context/plugin.ts',
  'context/resource-entry.ts',
  'context/server.ts',
  'context/system-context.ts',
  'execution/execute.ts',
  'execution/steps.ts',
  'system/acquire.ts',
  'system/borrow-runner.ts',
  'system/borrows.ts',
  'system/fetch.ts',
  'system/run.ts',
  'system/system.ts',
  'system/with-borrow.ts',
];

/** Cycles the code has today, each by its exact set of files, with the edge to cut. None today. */
const KNOWN_CYCLES: readonly { readonly files: readonly string[]; readonly fix: string }[] = [];

const cycles = importCycles(graph);
const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().every((f, i) => f === [...b].sort()[i]);

test('the only import cycle is the ctx.run / execute / resolve one between context/ and system/, execution/, container/', () => {
  const unexpected = cycles
    .filter((c) => !c.every((f) => ALLOWED_CYCLE.includes(f)))
    .filter((c) => !KNOWN_CYCLES.some((k) => sameSet(k.files, c)))
    .map((c) => {
      const outsider = c.find((f) => !ALLOWED_CYCLE.includes(f)) ?? c[0];
      const path = cyclePath(graph, c, outsider).map((f) => `src/${f}`).join(' → ');
      return `${path}   (the cycle's files: ${c.map((f) => `src/${f}`).join(', ')})`;
    });
  assertNone(
    'rule: no import cycle but the ctx.run / execute / resolve convenience (ALLOWED_CYCLE); cut an edge of each of these:',
    unexpected,
  );
});

// A known cycle (see its `fix`): cut the edge, then remove the entry from KNOWN_CYCLES.
describeEach(KNOWN_CYCLES, 'known import cycle', (known) => {
  test.failing(`is gone: ${known.files.length > 4 ? `${known.files.length} files` : known.files.join(', ')}`, () => {
    const still = cycles.filter((c) => sameSet(c, known.files));
    assertNone(
      `rule: no import cycle but the allowed one; ${known.fix}:`,
      still.map((c) => cyclePath(graph, c, c.find((f) => !ALLOWED_CYCLE.includes(f)) ?? c[0]).map((f) => `src/${f}`).join(' → ')),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// What the lower layers may import.

/** The folders above events/ in the layering: a feature declares its own events, events/ names none. */
const FEATURE_FOLDERS: readonly string[] = ['tools', 'prompts', 'agents', 'conversation', 'sessions', 'adapters', 'observability', 'otel', 'testing'];
/**
 * The server's logger (`new Server({ logger })`) lives with the tracing channels but is read by
 * context/ itself, so it sits below events/ in the layering.
 */
const BELOW_EVENTS_IN_OBSERVABILITY: readonly string[] = ['observability/logger.ts'];
/** Imports of events/ into feature folders today (from → to, relative to src/), each with a failing test. */
const KNOWN_EVENT_IMPORTS: readonly string[] = [];

const importsFeature = (e: ModuleEdge): boolean =>
  e.target !== undefined &&
  (folderOf(e.target) === '' || FEATURE_FOLDERS.includes(folderOf(e.target))) &&
  !BELOW_EVENTS_IN_OBSERVABILITY.includes(e.target);

test('src/events/ imports no feature folder (nor an entry)', () => {
  const offenders = files
    .filter((f) => folderOf(f) === 'events')
    .flatMap((f) => offendingImports(graph, f, (e) => importsFeature(e) && !KNOWN_EVENT_IMPORTS.includes(`${f} → ${e.target}`)));
  assertNone(
    `rule: events/ imports no feature folder (${FEATURE_FOLDERS.join(', ')}) nor a root entry; declare the feature's events in its own folder by declaration merging:`,
    offenders,
  );
});

// A known import of a feature by events/: remove it, then remove the entry.
describeEach(KNOWN_EVENT_IMPORTS, 'known import of a feature by events/: %s', (pair) => {
  test.failing('is gone', () => {
    const [from, to] = pair.split(' → ');
    assertNone('rule: events/ imports no feature folder', offendingImports(graph, from, (e) => e.target === to));
  });
});

test('src/util/ imports nothing from src/ outside util/', () => {
  const offenders = files
    .filter((f) => folderOf(f) === 'util')
    .flatMap((f) => offendingImports(graph, f, (e) => e.target !== undefined && folderOf(e.target) !== 'util'));
  assertNone('rule: util/ is the bottom layer and imports nothing from src/ outside util/:', offenders);
});

/** What lifetime/ may take from outside util/ and itself: the disposal error classes, by name. */
const LIFETIME_MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'context/errors.ts': ['ContextDisposedError', 'DisposeTimeoutError'],
};
/** Imports of lifetime/ beyond that (from → to), each with a failing test. None today. */
const KNOWN_LIFETIME_IMPORTS: readonly string[] = [];

const lifetimeMayNot = (e: ModuleEdge): boolean => {
  if (e.target === undefined || folderOf(e.target) === 'util' || folderOf(e.target) === 'lifetime') return false;
  const names = LIFETIME_MAY_IMPORT[e.target];
  return names === undefined || !e.names.every((n) => names.includes(n));
};

test('src/lifetime/ imports only util/ and the disposal error classes', () => {
  const offenders = files
    .filter((f) => folderOf(f) === 'lifetime')
    .flatMap((f) => offendingImports(graph, f, (e) => lifetimeMayNot(e) && !KNOWN_LIFETIME_IMPORTS.includes(`${f} → ${e.target}`)));
  assertNone(
    'rule: lifetime/ knows nothing of contexts or features: it imports util/ and, from context/errors.ts, only ContextDisposedError and DisposeTimeoutError:',
    offenders,
  );
});

// A known import by lifetime/ beyond its layer: remove it, then remove the entry.
describeEach(KNOWN_LIFETIME_IMPORTS, 'known import by lifetime/: %s', (pair) => {
  test.failing('is gone', () => {
    const [from, to] = pair.split(' → ');
    assertNone('rule: lifetime/ imports only util/ and the disposal error classes', offendingImports(graph, from, (e) => e.target === to));
  });
});

/** The files behind the `package.json` "exports" entries (relative to src/). */
const ENTRIES: readonly string[] = [
  'index.ts',
  'sessions.ts',
  'otel.ts',
  'testing/index.ts',
  'adapters/index.ts',
  'adapters/ai-sdk.ts',
  'adapters/openai-agents.ts',
  'sessions/sqlite.ts',
  'sessions/postgres.ts',
];
/** The core and the features: below sessions/ in the layering. */
const BELOW_SESSIONS: readonly string[] = ['util', 'lifetime', 'disposal', 'context', 'container', 'system', 'execution', 'scope', 'events', 'registry', 'tools', 'prompts', 'agents', 'conversation'];
/** Upward imports today (from → to), each with a failing test. */
const KNOWN_UPWARD_IMPORTS: readonly string[] = [];

const importsUpward = (from: string, e: ModuleEdge): boolean => {
  if (e.target === undefined) return false;
  // testing/ sits with the entries (its probe may take a store's type from its entry)
  if (!ENTRIES.includes(from) && folderOf(from) !== 'testing' && ENTRIES.includes(e.target)) return true;
  return BELOW_SESSIONS.includes(folderOf(from)) && ['sessions', 'adapters', 'testing', 'otel'].includes(folderOf(e.target));
};

test('the core and the features import no entry, nor sessions/, adapters/, testing/ or otel/', () => {
  const offenders = files.flatMap((f) =>
    offendingImports(graph, f, (e) => importsUpward(f, e) && !KNOWN_UPWARD_IMPORTS.includes(`${f} → ${e.target}`)),
  );
  assertNone(
    'rule: nothing below the entries imports one, and the core and the features (tools, prompts, agents, conversation) import none of sessions/, adapters/, testing/, otel/:',
    offenders,
  );
});

describeEach(KNOWN_UPWARD_IMPORTS, 'known upward import: %s', (pair) => {
  test.failing('is gone', () => {
    const [from, to] = pair.split(' → ');
    assertNone('rule: the core and the features import none of sessions/, adapters/, testing/, otel/', offendingImports(graph, from, (e) => e.target === to));
  });
});

// ---------------------------------------------------------------------------------------------
// The root entry is a list of re-exports from folders.

test('src/index.ts re-exports only from folders', () => {
  const index = graph.get('index.ts');
  expect(index).toBeDefined();
  const offenders: string[] = [];
  let exportsFrom = 0;
  for (const statement of index?.source.statements ?? []) {
    const line = index?.source.getLineAndCharacterOfPosition(statement.getStart()).line ?? 0;
    const edge = index?.edges.find((e) => e.line === line + 1);
    const where = `src/index.ts:${line + 1}`;
    if (edge?.kind === 'export from') {
      exportsFrom++;
      if (edge.target === undefined) offenders.push(`${where} re-exports the package '${edge.specifier}', not a folder of src/`);
      else if (folderOf(edge.target) === '') offenders.push(`${where} re-exports src/${edge.target}, a file at the root of src/, not a folder's module`);
    } else if (edge?.kind === 'side-effect import' && edge.target === undefined) {
      // A package loaded for its side effect (reflect-metadata) declares nothing.
    } else {
      offenders.push(`${where} is not an export-from: "${statement.getText().split('\n')[0]}"`);
    }
  }
  expect(exportsFrom).toBeGreaterThan(5);
  assertNone(
    "rule: src/index.ts declares nothing itself; every statement re-exports a folder's index.ts or a module inside a folder:",
    offenders,
  );
});
