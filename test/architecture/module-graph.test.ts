// The graph helpers the layering checks stand on: cycles found, paths printed, edges read.
import ts from 'typescript';
import { cyclePath, importCycles, readModuleGraph, type ModuleGraph, type ModuleNode } from './module-graph.js';

function graphOf(edges: Record<string, string[]>): ModuleGraph {
  const source = ts.createSourceFile('x.ts', '', ts.ScriptTarget.ES2022);
  const g = new Map<string, ModuleNode>();
  for (const [file, targets] of Object.entries(edges)) {
    g.set(file, {
      file,
      lines: 1,
      source,
      edges: targets.map((target, i) => ({ specifier: `./${target}`, target, kind: 'import type', names: ['*'], line: i + 1 })),
    });
  }
  return g;
}

test('every strongly connected component is reported, with a path that closes on itself', () => {
  const g = graphOf({
    'a/a.ts': ['a/b.ts'],
    'a/b.ts': ['a/c.ts', 'z/leaf.ts'],
    'a/c.ts': ['a/a.ts'],
    'b/self.ts': ['b/self.ts'],
    'b/x.ts': ['b/y.ts'],
    'b/y.ts': ['b/x.ts'],
    'z/leaf.ts': [],
  });
  expect(importCycles(g)).toEqual([['a/a.ts', 'a/b.ts', 'a/c.ts'], ['b/self.ts'], ['b/x.ts', 'b/y.ts']]);
  expect(cyclePath(g, ['a/a.ts', 'a/b.ts', 'a/c.ts'], 'a/b.ts')).toEqual(['a/b.ts', 'a/c.ts', 'a/a.ts', 'a/b.ts']);
  expect(cyclePath(g, ['b/self.ts'])).toEqual(['b/self.ts', 'b/self.ts']);
});

test('a deep chain is walked without overflowing the stack', () => {
  const edges: Record<string, string[]> = {};
  for (let i = 0; i < 20_000; i++) edges[`m/${i}.ts`] = [`m/${(i + 1) % 20_000}.ts`];
  expect(importCycles(graphOf(edges))[0]).toHaveLength(20_000);
});

test('the real graph reads type imports, export-from and names, and resolves folders to their index.ts', () => {
  const g = readModuleGraph();
  const index = g.get('index.ts');
  expect(index?.edges.some((e) => e.kind === 'export from' && e.target === 'context/index.ts')).toBe(true);
  expect(index?.edges.some((e) => e.kind === 'side-effect import' && e.specifier === 'reflect-metadata' && e.target === undefined)).toBe(true);
  const typeEdges = [...g.values()].flatMap((n) => n.edges.filter((e) => e.kind === 'import type' && e.target !== undefined));
  expect(typeEdges.length).toBeGreaterThan(50);
  const server = g.get('context/server.ts');
  expect(server?.edges.find((e) => e.target === 'context/system-context.ts')?.names).toContain('SystemContext');
});
