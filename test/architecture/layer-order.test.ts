// The layer order of docs/architecture.md, checked import by import: each layer imports only
// the layers before it, except the few seams the page names (listed here with the reason).
// A new upward import fails with the file, the line and the two layers; either move the code
// or, when the page gains a seam, add it to SEAMS and to the page in the same change.
import { folderOf, type ModuleEdge, readModuleGraph } from './module-graph.js';

const graph = readModuleGraph();

/** The files behind the `package.json` "exports" entries (relative to src/): the top layer. */
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

/** The layers, bottom first, as docs/architecture.md numbers them; a layer is a list of folder prefixes. */
const LAYERS: readonly (readonly [name: string, prefixes: readonly string[]])[] = [
  ['1 util', ['util/']],
  ['2 lifetime', ['lifetime/']],
  ['3 disposal', ['disposal/']],
  ['4 core', ['context/', 'container/', 'system/', 'execution/']],
  ['5 scope', ['scope/']],
  ['6 events', ['events/']],
  ['7 registry', ['registry/']],
  ['8 features', ['tools/', 'prompts/', 'agents/', 'conversation/']],
  ['9a session store', ['sessions/store/']],
  ['9b sessions runtime', ['sessions/']],
  ['10 top', ['adapters/', 'observability/', 'otel/']],
  ['11 entries', ['testing/']],
];

/**
 * The upward imports the page allows, each a test on one edge with the reason. A seam is
 * named by the file it imports (and, where the page says so, by the names it may take).
 */
const SEAMS: readonly { readonly why: string; readonly allows: (from: string, e: ModuleEdge) => boolean }[] = [
  {
    why: 'lifetime/ takes the two disposal error classes from context/errors.ts, where the public errors are declared',
    allows: (from, e) =>
      from.startsWith('lifetime/') && e.target === 'context/errors.ts' && e.names.every((n) => n === 'ContextDisposedError' || n === 'DisposeTimeoutError'),
  },
  {
    why: "the tracing channels, the logger check and the body wrapper slot are read from the core up (they sit in observability/ but import no feature's code)",
    allows: (_from, e) => e.target === 'observability/channels.ts' || e.target === 'observability/logger.ts' || e.target === 'observability/wrap.ts',
  },
  {
    why: 'the session store rejects with SessionError, declared with its codes in sessions/errors.ts',
    allows: (from, e) => from.startsWith('sessions/store/') && e.target === 'sessions/errors.ts',
  },
  {
    why: "testing/ sits with the entries: its probe may take a store's type from its entry",
    allows: (from, e) => from.startsWith('testing/') && e.kind === 'import type' && e.target !== undefined && ENTRIES.includes(e.target),
  },
];

/** The layer index of a file of src/ (the longest matching prefix wins; entries and root files are the top). */
function layerOf(file: string): number {
  if (ENTRIES.includes(file) || folderOf(file) === '') return LAYERS.length;
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach(([, prefixes], i) => {
    for (const p of prefixes) {
      if (file.startsWith(p) && p.length > bestLength) {
        best = i;
        bestLength = p.length;
      }
    }
  });
  if (best === -1) throw new Error(`src/${file} is in no layer of LAYERS: add its folder to the layer docs/architecture.md puts it in`);
  return best;
}

const layerName = (i: number): string => (i === LAYERS.length ? 'entries' : LAYERS[i][0]);

test('every file of src/ is in a layer', () => {
  const unplaced = [...graph.keys()].filter((f) => {
    try {
      layerOf(f);
      return false;
    } catch {
      return true;
    }
  });
  expect(unplaced).toEqual([]);
});

test('each layer imports only the layers before it, besides the seams docs/architecture.md names', () => {
  const offenders: string[] = [];
  for (const [file, node] of graph) {
    const from = layerOf(file);
    for (const e of node.edges) {
      if (e.target === undefined) continue;
      const to = layerOf(e.target);
      if (to <= from || SEAMS.some((s) => s.allows(file, e))) continue;
      offenders.push(`src/${file}:${e.line} (${layerName(from)}) ${e.kind} { ${e.names.join(', ')} } from src/${e.target} (${layerName(to)})`);
    }
  }
  if (offenders.length > 0) {
    throw new Error(`rule: a layer imports only the layers before it (docs/architecture.md, "The layers"); move the code down or the import up:\n  ${offenders.join('\n  ')}`);
  }
});

test('the layering rule is not vacuous: a made-up upward import is caught, and every seam is in use', () => {
  const fake: ModuleEdge = { specifier: '../sessions/sessions.js', target: 'sessions/sessions.ts', kind: 'import', names: ['Sessions'], line: 1 };
  expect(layerOf('tools/pipeline.ts')).toBeLessThan(layerOf(fake.target as string));
  expect(SEAMS.some((s) => s.allows('tools/pipeline.ts', fake))).toBe(false);
  // A seam nobody uses any more is one the page should drop.
  const used = SEAMS.map((s) => [...graph].some(([file, node]) => node.edges.some((e) => e.target !== undefined && layerOf(e.target) > layerOf(file) && s.allows(file, e))));
  expect(SEAMS.filter((_, i) => !used[i]).map((s) => s.why)).toEqual([]);
});

test('sessions/store/ imports only util/, itself, the tracing channels and sessions/errors.ts', () => {
  const allowed = (target: string): boolean =>
    target.startsWith('util/') || target.startsWith('sessions/store/') || target === 'observability/channels.ts' || target === 'sessions/errors.ts';
  const offenders = [...graph]
    .filter(([file]) => file.startsWith('sessions/store/'))
    .flatMap(([file, node]) => node.edges.filter((e) => e.target !== undefined && !allowed(e.target)).map((e) => `src/${file}:${e.line} ${e.kind} src/${e.target}`));
  if (offenders.length > 0) {
    throw new Error(`rule: the storage layer knows nothing of the runtime or the features (a third-party store reuses it through polestar-di/sessions):\n  ${offenders.join('\n  ')}`);
  }
});
