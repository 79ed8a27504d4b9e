/**
 * Model-based property test of the §3 rules: random trees of contexts and random
 * insert / get / tryGet / getMut / has / hasLocal / remove / child / dispose sequences are
 * run against polestar and against a small reference model, and must agree.
 */
import fc from 'fast-check';
import { ContextDisposedError, ParamError, Server, token, type SystemContext, type Token } from '../../src/index.js';

const TOKENS: Token<number>[] = [token<number>('T0'), token<number>('T1'), token<number>('T2'), token<number>('T3')];
/** T0 and T1 are globals; T2 and T3 are not. */
const GLOBALS = new Map<number, number>([
  [0, -100],
  [1, -101],
]);

interface ModelNode {
  parent: ModelNode | undefined;
  locals: Map<number, number>;
  children: ModelNode[];
  disposed: boolean;
}

type Cmd =
  | { op: 'child'; at: number }
  | { op: 'insert'; at: number; tok: number; value: number }
  | { op: 'get' | 'tryGet' | 'getMut' | 'has' | 'hasLocal' | 'remove'; at: number; tok: number }
  | { op: 'dispose'; at: number };

const at = fc.nat(50);
const tok = fc.nat(TOKENS.length - 1);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('child' as const), at }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('insert' as const), at, tok, value: fc.integer({ min: 0, max: 1000 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constantFrom('get' as const, 'tryGet' as const, 'getMut' as const, 'has' as const, 'hasLocal' as const, 'remove' as const),
      at,
      tok,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dispose' as const), at }) },
);

function modelRes(n: ModelNode, t: number): { found: boolean; value?: number; where?: 'own' | 'ancestor' | 'global' } {
  if (n.locals.has(t)) return { found: true, value: n.locals.get(t), where: 'own' };
  for (let c = n.parent; c !== undefined; c = c.parent) {
    if (c.locals.has(t)) return { found: true, value: c.locals.get(t), where: 'ancestor' };
  }
  if (GLOBALS.has(t)) return { found: true, value: GLOBALS.get(t), where: 'global' };
  return { found: false };
}

function markDisposed(n: ModelNode): void {
  n.disposed = true;
  for (const c of n.children) markDisposed(c);
}

/** Runs `f`, returning its result or the error it threw. */
function attempt<T>(f: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: f() };
  } catch (error) {
    return { ok: false, error };
  }
}

function expectDisposedError(r: ReturnType<typeof attempt>): void {
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error).toBeInstanceOf(ContextDisposedError);
    expect((r.error as Error).message).toMatch(/disposed/);
  }
}

test('random context trees agree with the reference model of §3', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(cmd, { maxLength: 40 }), async (cmds) => {
      const server = new Server();
      for (const [t, v] of GLOBALS) server.insertGlobal(TOKENS[t], v);
      await server.finish();
      const rootModel: ModelNode = { parent: undefined, locals: new Map(), children: [], disposed: false };
      const real: SystemContext[] = [server.createContext()];
      const model: ModelNode[] = [rootModel];

      for (const c of cmds) {
        const i = c.at % real.length;
        const ctx = real[i];
        const m = model[i];
        switch (c.op) {
          case 'child': {
            const r = attempt(() => ctx.child());
            if (m.disposed) {
              expectDisposedError(r);
            } else {
              expect(r.ok).toBe(true);
              if (r.ok) {
                const child: ModelNode = { parent: m, locals: new Map(), children: [], disposed: false };
                m.children.push(child);
                real.push(r.value);
                model.push(child);
                expect(r.value.depth).toBe(ctx.depth + 1);
                expect(r.value.parent).toBe(ctx);
              }
            }
            break;
          }
          case 'insert': {
            const r = attempt(() => ctx.insert(TOKENS[c.tok], c.value));
            if (m.disposed) {
              expectDisposedError(r);
            } else {
              expect(r).toEqual({ ok: true, value: m.locals.get(c.tok) });
              m.locals.set(c.tok, c.value);
            }
            break;
          }
          case 'get':
          case 'tryGet': {
            const r = attempt(() => (c.op === 'get' ? ctx.get(TOKENS[c.tok]) : ctx.tryGet(TOKENS[c.tok])));
            if (m.disposed) {
              expectDisposedError(r);
              break;
            }
            const want = modelRes(m, c.tok);
            if (want.found) expect(r).toEqual({ ok: true, value: want.value });
            else if (c.op === 'tryGet') expect(r).toEqual({ ok: true, value: undefined });
            else {
              expect(r.ok).toBe(false);
              if (!r.ok) {
                expect((r.error as ParamError).kind).toBe('ResourceNotFound');
                expect((r.error as Error).message.startsWith(`resource not found: T${c.tok}`)).toBe(true);
              }
            }
            break;
          }
          case 'getMut': {
            const r = attempt(() => ctx.getMut(TOKENS[c.tok]));
            if (m.disposed) {
              expectDisposedError(r);
              break;
            }
            if (m.locals.has(c.tok)) {
              expect(r).toEqual({ ok: true, value: m.locals.get(c.tok) });
              break;
            }
            expect(r.ok).toBe(false);
            if (!r.ok) {
              expect(r.error).toBeInstanceOf(ParamError);
              expect((r.error as ParamError).kind).toBe('ResourceNotFound');
              const msg = (r.error as Error).message;
              expect(msg.startsWith(`resource not found: T${c.tok}`)).toBe(true);
              expect(msg).toMatch(/ResMut never walks up/);
              const where = modelRes(m, c.tok).where;
              if (where === 'ancestor') expect(msg).toMatch(/ancestor/);
              if (where === 'global') expect(msg).toMatch(/global/);
            }
            break;
          }
          case 'has':
          case 'hasLocal': {
            const r = attempt(() => (c.op === 'has' ? ctx.has(TOKENS[c.tok]) : ctx.hasLocal(TOKENS[c.tok])));
            if (m.disposed) expectDisposedError(r);
            else expect(r).toEqual({ ok: true, value: c.op === 'has' ? modelRes(m, c.tok).found : m.locals.has(c.tok) });
            break;
          }
          case 'remove': {
            const r = attempt(() => ctx.remove(TOKENS[c.tok]));
            if (m.disposed) {
              expectDisposedError(r);
            } else {
              expect(r).toEqual({ ok: true, value: m.locals.get(c.tok) });
              m.locals.delete(c.tok);
            }
            break;
          }
          case 'dispose': {
            const p = ctx.dispose();
            markDisposed(m);
            expect(ctx.dispose()).toBe(p);
            await p;
            break;
          }
        }
        // Disposal is synchronous in its marking: every context agrees with the model at every step.
        for (let k = 0; k < real.length; k++) expect(real[k].isDisposed).toBe(model[k].disposed);
      }
      await server.dispose();
      expect(real.every((r) => r.isDisposed)).toBe(true);
      expect(server.liveContexts).toBe(0);
    }),
    { numRuns: 1000 },
  );
});
