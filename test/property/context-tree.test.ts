/**
 * Model-based property test of the §3 rules and §10.4 parent filters: random trees of
 * contexts (children made with no filter, `ParentFilter.allowOnly` or
 * `ParentFilter.allowAllExcept` of random token sets) and random insert / get / tryGet /
 * getMut / has / hasLocal / remove / child / dispose sequences are run against polestar
 * and against a small reference model, and must agree.
 */
import fc from 'fast-check';
import { ContextDisposedError, ParamError, ParentFilter, Server, token, type SystemContext, type Token } from '../../src/index.js';

const TOKENS: Token<number>[] = [token<number>('T0'), token<number>('T1'), token<number>('T2'), token<number>('T3')];
/** T0 and T1 are globals; T2 and T3 are not. */
const GLOBALS = new Map<number, number>([
  [0, -100],
  [1, -101],
]);

/** A parent filter in the model: which token indexes may cross from the node to its parent. */
interface ModelFilter {
  kind: 'allowOnly' | 'allowAllExcept';
  toks: number[];
}

interface ModelNode {
  parent: ModelNode | undefined;
  locals: Map<number, number>;
  children: ModelNode[];
  disposed: boolean;
  filter: ModelFilter | undefined;
}

const allows = (f: ModelFilter | undefined, t: number): boolean => f === undefined || f.toks.includes(t) === (f.kind === 'allowOnly');

type Cmd =
  | { op: 'child'; at: number; filter: ModelFilter | null }
  | { op: 'insert'; at: number; tok: number; value: number }
  | { op: 'get' | 'tryGet' | 'getMut' | 'has' | 'hasLocal' | 'remove'; at: number; tok: number }
  | { op: 'dispose'; at: number };

const at = fc.nat(50);
const tok = fc.nat(TOKENS.length - 1);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('child' as const),
      at,
      filter: fc.option(
        fc.record({
          kind: fc.constantFrom('allowOnly' as const, 'allowAllExcept' as const),
          toks: fc.subarray([0, 1, 2, 3]),
        }),
        { freq: 2 },
      ),
    }),
  },
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

function modelRes(n: ModelNode, t: number): { found: boolean; value?: number; where?: 'own' | 'ancestor' | 'global'; outOfScope?: boolean } {
  if (n.locals.has(t)) return { found: true, value: n.locals.get(t), where: 'own' };
  let blocked = false;
  for (let c: ModelNode = n; c.parent !== undefined; c = c.parent) {
    if (!allows(c.filter, t)) {
      blocked = true;
      break;
    }
    if (c.parent.locals.has(t)) return { found: true, value: c.parent.locals.get(t), where: 'ancestor' };
  }
  if (GLOBALS.has(t)) return { found: true, value: GLOBALS.get(t), where: 'global' };
  // out of scope: a filter blocked the walk and an ancestor above it holds the token
  let outOfScope = false;
  if (blocked) {
    let c: ModelNode = n;
    while (allows(c.filter, t)) c = c.parent as ModelNode;
    for (let a = c.parent; a !== undefined; a = a.parent) if (a.locals.has(t)) outOfScope = true;
  }
  return { found: false, outOfScope };
}

/** Where getMut's hint says the token is: ResMut ignores filters (it never walks up). */
function mutWhere(n: ModelNode, t: number): 'ancestor' | 'global' | undefined {
  for (let c = n.parent; c !== undefined; c = c.parent) if (c.locals.has(t)) return 'ancestor';
  return GLOBALS.has(t) ? 'global' : undefined;
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
      const rootModel: ModelNode = { parent: undefined, locals: new Map(), children: [], disposed: false, filter: undefined };
      const real: SystemContext[] = [server.createContext()];
      const model: ModelNode[] = [rootModel];

      for (const c of cmds) {
        const i = c.at % real.length;
        const ctx = real[i];
        const m = model[i];
        switch (c.op) {
          case 'child': {
            const f = c.filter ?? undefined;
            const parentFilter = f === undefined ? undefined : ParentFilter[f.kind](f.toks.map((i) => TOKENS[i]));
            const r = attempt(() => (parentFilter === undefined ? ctx.child() : ctx.child({ parentFilter })));
            if (m.disposed) {
              expectDisposedError(r);
            } else {
              expect(r.ok).toBe(true);
              if (r.ok) {
                const child: ModelNode = { parent: m, locals: new Map(), children: [], disposed: false, filter: f };
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
                const kind = want.outOfScope ? 'ResourceOutOfScope' : 'ResourceNotFound';
                expect((r.error as ParamError).kind).toBe(kind);
                const prefix = want.outOfScope ? 'resource out of scope' : 'resource not found';
                expect((r.error as Error).message.startsWith(`${prefix}: T${c.tok}`)).toBe(true);
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
              const where = mutWhere(m, c.tok);
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
