/**
 * Model-based property test of the prompts registry's merge cache (issue 8 #1): random
 * interleavings of section / variable registrations, their disposers, turns ending and
 * `assemble()` across the global layer, a scope A, a scope B nested in A, a sibling C and
 * a turn under A, each assembly compared with a naive recomputation from the live
 * registrations (global plus the assembled scope's own layer, nothing from a parent or a
 * sibling). Variable providers are functions, so the model also checks that exactly the
 * live providers of the scope are called.
 */
import fc from 'fast-check';
import { Prompts, PromptsPlugin, Server, createScope, type SystemContext } from '../../src/index.js';

const NAMES = ['a', 'b', 'c'] as const;
/** 0 = app (global), 1 = A, 2 = B (nested in A), 3 = C (sibling of A), 4 = a turn of A (A's layer). */
const SLOTS = 5;
const LAYER_OF = [0, 1, 2, 3, 1] as const;

type Op =
  | { op: 'section' | 'variable'; slot: number; name: string }
  | { op: 'off'; pick: number }
  | { op: 'endTurn' }
  | { op: 'assemble'; layer: number; explicit: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constantFrom('section' as const, 'variable' as const), slot: fc.nat(SLOTS - 1), name: fc.constantFrom(...NAMES) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('off' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('endTurn' as const) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('assemble' as const), layer: fc.nat(3), explicit: fc.boolean() }) },
);

interface Reg {
  readonly kind: 'section' | 'variable';
  readonly layer: number;
  readonly name: string;
  readonly tag: string;
  readonly order: number;
  readonly slot: number;
  live: boolean;
  off: () => void;
}

test('property: every assemble() equals a naive recomputation from the live registrations', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { maxLength: 40, size: 'max' }), async (ops) => {
      const server = new Server();
      server.addPlugins(new PromptsPlugin());
      await server.finish();
      const app = server.createContext();
      const A = createScope(app, { id: 'A' });
      const B = createScope(A.ctx, { id: 'B' });
      const C = createScope(app, { id: 'C' });
      const keys: (object | undefined)[] = [undefined, A.key, B.key, C.key];
      const layerCtx: SystemContext[] = [app, A.ctx, B.ctx, C.ctx];
      let turn = A.ctx.child();
      const ctxOf = (slot: number): SystemContext => (slot === 4 ? turn : layerCtx[slot]);
      const regs: Reg[] = [];
      const called: string[] = [];
      let seq = 0;
      try {
        for (const step of ops) {
          if (step.op === 'section' || step.op === 'variable') {
            const layer = LAYER_OF[step.slot];
            const dup = regs.some((r) => r.live && r.kind === step.op && r.layer === layer && r.name === step.name);
            const tag = `${step.op}${seq}`;
            const order = seq++;
            const p = ctxOf(step.slot).get(Prompts);
            const register = () =>
              step.op === 'section'
                ? p.section({ name: step.name, order, text: tag })
                : p.variable(step.name, () => {
                    called.push(tag);
                    return tag;
                  });
            if (dup) {
              expect(register).toThrow(/already registered/);
              continue;
            }
            regs.push({ kind: step.op, layer, name: step.name, tag, order, slot: step.slot, live: true, off: register() });
          } else if (step.op === 'off') {
            if (regs.length === 0) continue;
            const r = regs[step.pick % regs.length];
            r.off();
            r.live = false;
          } else if (step.op === 'endTurn') {
            await turn.dispose();
            for (const r of regs) if (r.slot === 4) r.live = false;
            turn = A.ctx.child();
          } else if (step.op === 'assemble') {
            const layer = step.layer;
            called.length = 0;
            const assembly = step.explicit && layer !== 0
              ? await app.get(Prompts).assemble({ scope: keys[layer] as object })
              : await layerCtx[layer].get(Prompts).assemble();
            const visible = (kind: Reg['kind']) => {
              const byName = new Map<string, Reg>();
              for (const r of regs) if (r.live && r.kind === kind && r.layer === 0) byName.set(r.name, r);
              if (layer !== 0) for (const r of regs) if (r.live && r.kind === kind && r.layer === layer) byName.set(r.name, r);
              return [...byName.values()];
            };
            const sections = visible('section').sort((x, y) => x.order - y.order);
            expect(assembly.sections).toEqual(sections.map((r) => ({ name: r.name, order: r.order, text: r.tag })));
            const variables = visible('variable');
            expect(assembly.variables).toEqual(Object.fromEntries(variables.map((r) => [r.name, r.tag])));
            expect([...called].sort()).toEqual(variables.map((r) => r.tag).sort());
          }
        }
      } finally {
        await server.dispose();
      }
    }),
    { numRuns: 150 },
  );
});
