/**
 * `execute` finds its tool with `ToolRegistry.lookup(scope, name)` (no view is built for a
 * new agent's first call). It must answer exactly what the scope's resolution answers
 * (`get(name, scope)`, the view `visible` and `schemas` come from), in any state reached
 * by registering, unregistering and restricting in the global layer and in scopes.
 */
import fc from 'fast-check';
import { Tools, createScope } from '../../src/index.js';
import { toolRegistryOf } from '../../src/tools/tools.js';
import { tool, toolServer } from './helpers.js';

const NAMES = ['a', 'b', 'c', 'd'];
type Op =
  | { kind: 'register'; where: number; name: string }
  | { kind: 'unregister'; pick: number }
  | { kind: 'restrict'; where: number; allow: string[] | undefined; deny: string[] }
  | { kind: 'unrestrict'; pick: number };

const where = fc.integer({ min: -1, max: 2 }); // -1: the global layer, else scope i
const names = fc.subarray(NAMES);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('register' as const), where, name: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant('unregister' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('restrict' as const), where: fc.integer({ min: 0, max: 2 }), allow: fc.option(names, { nil: undefined }), deny: names }),
  fc.record({ kind: fc.constant('unrestrict' as const), pick: fc.nat() }),
);

test('lookup(scope, name) answers what the resolution of scope answers, after any history', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
      const { server, app } = await toolServer();
      const reg = toolRegistryOf(server) as NonNullable<ReturnType<typeof toolRegistryOf>>;
      const scopes = [0, 1, 2].map((i) => createScope(app, { id: `s${i}` }));
      const viewOf = (w: number) => (w < 0 ? app.get(Tools) : (scopes[w] as (typeof scopes)[number]).ctx.get(Tools));
      const regs: (() => void)[] = [];
      const restrictions: (() => void)[] = [];
      for (const o of ops) {
        try {
          if (o.kind === 'register') regs.push(viewOf(o.where).register(tool(o.name)));
          else if (o.kind === 'unregister' && regs.length > 0) regs.splice(o.pick % regs.length, 1)[0]?.();
          else if (o.kind === 'restrict') restrictions.push(viewOf(o.where).restrict({ allow: o.allow, deny: o.deny }));
          else if (o.kind === 'unrestrict' && restrictions.length > 0) restrictions.splice(o.pick % restrictions.length, 1)[0]?.();
        } catch {
          // a refused registration or restriction (duplicate, unknown name, no-op) changes nothing
        }
        for (const key of [undefined, ...scopes.map((s) => s.key)]) {
          for (const n of NAMES) {
            // alternate which one runs first: the lookup must not depend on the resolution's cache
            const fromLookup = reg.lookup(key, n)?.value;
            expect(app.get(Tools).get(n, key)).toBe(fromLookup);
            expect(reg.lookup(key, n)?.value).toBe(reg.resolve(key).byName.get(n));
          }
        }
      }
      await server.dispose();
    }),
    { numRuns: 150 },
  );
});
